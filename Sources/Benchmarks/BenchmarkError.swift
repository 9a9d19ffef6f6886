/// Why a benchmark could not run.
enum BenchmarkError: Error, CustomStringConvertible {
    case notBuilt(String)
    case usage(String)

    var description: String {
        switch self {
        case .notBuilt(let section): return "the \(section) benchmark is not built yet"
        case .usage(let text): return text
        }
    }
}
