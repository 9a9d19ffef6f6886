/// `health-warehouse ingest`: not built yet.
struct IngestCommand: Command {
    static let name = "ingest"
    static let summary = "load saved bodies from files and folders, same pipeline as HTTP"
    static let help = "usage: health-warehouse ingest (not built yet)"

    init(arguments: [String]) throws {}

    func run() throws -> Int32 {
        throw CommandFailure(message: "ingest is not built yet", hint: nil)
    }
}
