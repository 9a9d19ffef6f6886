/// The views section of the benchmark; see docs/benchmarks.md.
func runViewsBenchmark(_ arguments: [String]) throws {
    throw BenchmarkError.notBuilt("views")
}
