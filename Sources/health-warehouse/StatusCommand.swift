/// `health-warehouse status`: not built yet.
struct StatusCommand: Command {
    static let name = "status"
    static let summary = "freshness, counts, migrations and settings at a glance"
    static let help = "usage: health-warehouse status (not built yet)"

    init(arguments: [String]) throws {}

    func run() throws -> Int32 {
        throw CommandFailure(message: "status is not built yet", hint: nil)
    }
}
