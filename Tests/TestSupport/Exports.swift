// The throwaway cluster, the CLI child process and the raw HTTP client live in the `Harness`
// library (Sources/Harness), which the benchmarks share; every test keeps reaching them by
// importing TestSupport.
@_exported import Harness
