/// A wrong command line: exit 64 with the message and a hint.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var command: String?

    var description: String { message }
    var hint: String { "run `health-warehouse \(command.map { "\($0) " } ?? "")--help` for usage" }
}

/// The options and arguments of one command, parsed against what the command declares.
///
/// `--name value` and `--name=value` both work (a value starting with `--` only as
/// `--name=value`: `--person --yes` is a forgotten value); `--` ends options; `-` alone is a positional
/// (standard input for `ingest`).
struct ParsedArguments {
    private(set) var flags: Set<String> = []
    private(set) var values: [String: [String]] = [:]
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - flags: options without a value (`--force`).
    ///   - options: options taking a value (`--person P`).
    init(_ arguments: [String], command: String, flags knownFlags: Set<String>, options knownOptions: Set<String>) throws {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                if !onlyPositionals, argument.hasPrefix("-"), argument != "-" {
                    throw UsageError(message: "unknown option \(argument)", command: command)
                }
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if knownFlags.contains(name) {
                guard inlineValue == nil else { throw UsageError(message: "--\(name) takes no value", command: command) }
                flags.insert(name)
            } else if knownOptions.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw UsageError(message: "--\(name) needs a value", command: command) }
                    value = arguments[index]
                    index += 1
                    // `--person --yes`: the value forgotten, the next option taken for it. A
                    // value that starts with `--` is given as `--person=--x`.
                    if value.hasPrefix("--") {
                        throw UsageError(message: "--\(name) needs a value, got the option \(value) "
                                         + "(write --\(name)=\(value) if that is the value)", command: command)
                    }
                }
                values[name, default: []].append(value)
            } else {
                throw UsageError(message: "unknown option --\(name)", command: command)
            }
        }
    }

    /// The last value given for an option.
    func value(_ name: String) -> String? { values[name]?.last }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// An integer option within bounds, or the default.
    func integer(_ name: String, default fallback: Int, range: ClosedRange<Int>, command: String) throws -> Int {
        guard let text = value(name) else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(message: "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"", command: command)
        }
        return number
    }
}

/// Reads sizes like `4MiB`, `512k`, `1048576`.
enum ByteSize {
    static func parse(_ text: String) -> Int? {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("gib", 1 << 30), ("mib", 1 << 20), ("kib", 1 << 10), ("gb", 1_000_000_000), ("mb", 1_000_000),
                                      ("kb", 1000), ("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10), ("b", 1)]
        for (suffix, factor) in units where lower.hasSuffix(suffix) {
            guard let number = Int(lower.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)), number >= 0 else { return nil }
            return number.multipliedReportingOverflow(by: factor).overflow ? nil : number * factor
        }
        return Int(lower).flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// Reads durations like `90s`, `15m`, `1h`, `1d`.
enum Duration {
    static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number > 0, number.isFinite else { return nil }
            return number * factor
        }
        return nil
    }
}

import Foundation
