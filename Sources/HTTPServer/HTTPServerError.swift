/// Why the HTTP server could not be configured or started.
///
/// `description` names the address and the reason, and never holds request
/// data: it is safe to log.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure, for callers that branch on it.
    public enum Code: Sendable, Equatable {
        /// A listen address that does not parse (`ListenAddress.parse`) or cannot be bound as given.
        case invalidAddress
        /// A configuration value out of range (a negative body cap, a zero connection limit…).
        case invalidConfiguration
        /// Another socket already listens on the address.
        case addressInUse
        /// The server was already started (or started and stopped); create a new one.
        case alreadyStarted
        /// libmicrohttpd refused to start for another reason (named in the message).
        case startFailed
        /// The TLS certificate or key is missing, unreadable, not PEM, mismatched, expired or
        /// not yet valid, or this libmicrohttpd has no TLS (the message names the file).
        case tlsCredentials
    }

    /// The kind of failure.
    public var code: Code
    /// A one-line explanation naming what is wrong.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
