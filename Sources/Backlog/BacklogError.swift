/// Why a backlog file (or a whole run) could not be ingested; safe to print: it names a place
/// and a reason, never more than a short snippet of a body.
public struct BacklogError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The reason, e.g. `record 4 (line 7): unterminated quoted field`.
    public var message: String

    /// An error with this message.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
