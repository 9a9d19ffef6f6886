/// The receiver section of the benchmark; see docs/benchmarks.md.
func runReceiverBenchmark(_ arguments: [String]) throws {
    throw BenchmarkError.notBuilt("receiver")
}
