/// Why an export could not be read or stored at all (as opposed to an element skipped).
/// `description` names the file and the reason; never a connection string or data.
public struct AppleExportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, with the file it concerns.
    public var message: String

    /// An error with its message.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
