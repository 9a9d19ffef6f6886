/// A file that could not be ingested, or not completely: its path and why, with the line or
/// record where that is known (`record 4 (line 7): unterminated quoted field`).
public struct IngestFailure: Sendable, Equatable, CustomStringConvertible {
    /// The path as given or walked (`backlog/2026-08-21.csv`), `-` for standard input.
    public var path: String
    /// The reason.
    public var message: String

    /// A failure of the file at `path`.
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `backlog/2026-08-21.csv: record 4 (line 7): unterminated quoted field`
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
