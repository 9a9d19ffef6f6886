import Civil
import HealthPayload

/// A tool's arguments, read and checked one by one; whatever is wrong is an `ArgumentError`
/// naming the argument (the tool's result then has `isError: true`).
struct ToolArguments {
    /// The longest range a tool reads, in days (`from` and `to` inclusive): ten years and a bit.
    static let maxDays = 3_660

    let members: [(key: String, value: JSONValue)]

    /// The arguments of a call; refuses anything but an object, and any name not in `allowed`
    /// (the person, above all, is never an argument: it is the session's).
    init(_ value: JSONValue?, allowed: [String]) throws(ArgumentError) {
        switch value {
        case nil, .null?: members = []
        case .object(let given)?: members = given
        default: throw ArgumentError("arguments", "must be an object of named arguments")
        }
        for member in members where !allowed.contains(member.key) {
            let what = member.key == "person" ? "is not an argument: the person is the one this server reads for"
                : allowed.isEmpty ? "is not an argument: this tool takes none"
                : "is not an argument of this tool (it takes \(allowed.joined(separator: ", ")))"
            throw ArgumentError(member.key, what)
        }
    }

    /// The string argument `name`.
    func string(_ name: String) throws(ArgumentError) -> String {
        guard let value = members.last(where: { $0.key == name })?.value else { throw ArgumentError(name, "is required") }
        guard let text = value.stringValue else { throw ArgumentError(name, "must be a string, got \(value.text.prefix(40))") }
        return text
    }

    /// The date argument `name`, `YYYY-MM-DD` naming a real date.
    func date(_ name: String) throws(ArgumentError) -> CivilDate {
        let text = try string(name)
        guard let date = CivilDate(text) else {
            throw ArgumentError(name, "\(JSONString.quoted(text.prefix(40))) is not a date YYYY-MM-DD")
        }
        return date
    }

    /// `from` and `to`, inclusive: `from` not after `to`, at most `maxDays` days.
    func range() throws(ArgumentError) -> (from: CivilDate, to: CivilDate) {
        let from = try date("from"), to = try date("to")
        guard from <= to else { throw ArgumentError("to", "\(to) is before from (\(from))") }
        let days = to.daysSinceEpoch - from.daysSinceEpoch + 1
        guard days <= Self.maxDays else {
            throw ArgumentError("to", "the range from \(from) to \(to) is \(days) days; at most \(Self.maxDays) are read at once")
        }
        return (from, to)
    }

    /// The argument `name`, one of `choices`.
    func choice(_ name: String, among choices: [String]) throws(ArgumentError) -> String {
        let text = try string(name)
        guard choices.contains(text) else {
            throw ArgumentError(name, "\(JSONString.quoted(text.prefix(60))) is not one of \(choices.joined(separator: ", "))")
        }
        return text
    }
}

/// A bad argument: its name and what is wrong with it.
struct ArgumentError: Error, CustomStringConvertible {
    var argument: String
    var problem: String

    init(_ argument: String, _ problem: String) {
        self.argument = argument
        self.problem = problem
    }

    var description: String { "\(argument): \(problem)" }
}
