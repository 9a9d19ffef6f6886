/// `health-warehouse generate`: not built yet.
struct GenerateCommand: Command {
    static let name = "generate"
    static let summary = "write realistic demo bodies (JSON or CSV)"
    static let help = "usage: health-warehouse generate (not built yet)"

    init(arguments: [String]) throws {}

    func run() throws -> Int32 {
        throw CommandFailure(message: "generate is not built yet", hint: nil)
    }
}
