/// Why a body can never be accepted (the receiver answers `400`).
///
/// `description` names what is wrong and where — for example
/// `schemaVersion is 2; only 1 is accepted` or `record 4 (line 7): unterminated quoted field` —
/// and never echoes more than a short, escaped snippet of the body, so it is safe to log.
public struct PayloadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The human-readable reason, safe to log and to return in `{"error": …}`.
    public var message: String

    /// Creates an error with the given message.
    public init(_ message: String) {
        self.message = message
    }

    /// The message itself.
    public var description: String { message }
}
