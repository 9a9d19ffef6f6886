/// A section's options read in order: flags, and `--name value` pairs.
struct OptionReader {
    private let arguments: [String]
    private var index = 0
    /// The section's usage, appended to every error.
    let usage: String

    init(_ arguments: [String], usage: String) {
        self.arguments = arguments
        self.usage = usage
    }

    /// The next option name, or nil at the end.
    mutating func next() -> String? {
        guard index < arguments.count else { return nil }
        index += 1
        return arguments[index - 1]
    }

    /// The value after the option just read.
    mutating func value() throws -> String {
        guard index < arguments.count else { throw failure("\(arguments[index - 1]) needs a value") }
        index += 1
        return arguments[index - 1]
    }

    /// The value after the option just read, as a whole number of at least `minimum`
    /// (`_` allowed as a digit separator: 10_000_000).
    mutating func number(atLeast minimum: Int = 1) throws -> Int {
        let name = arguments[index - 1]
        guard let n = Int(try value().replacingOccurrences(of: "_", with: "")), n >= minimum else {
            throw failure("\(name) takes a whole number of at least \(minimum)")
        }
        return n
    }

    /// A usage error: `text` and the usage.
    func failure(_ text: String) -> BenchmarkError { .usage("\(text)\n\(usage)") }
}
