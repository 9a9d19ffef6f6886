/// The ingest section of the benchmark; see docs/benchmarks.md.
func runIngestBenchmark(_ arguments: [String]) throws {
    throw BenchmarkError.notBuilt("ingest")
}
