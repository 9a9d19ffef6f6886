/// `health-warehouse serve`: not built yet.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "receive healthd batches over HTTP (migrates first)"
    static let help = "usage: health-warehouse serve (not built yet)"

    init(arguments: [String]) throws {}

    func run() throws -> Int32 {
        throw CommandFailure(message: "serve is not built yet", hint: nil)
    }
}
