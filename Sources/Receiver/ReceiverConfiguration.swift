import HTTPServer
import HealthPayload

/// How the receiver checks credentials.
public struct ReceiverConfiguration: Sendable {
    /// The header carrying the credential. With `Authorization` the whole value must be
    /// `Bearer <token>`; with any other name the whole value is the token.
    public var authHeader: String
    /// The largest Health Auto Export body `POST /hae` reads (`--max-hae-body`); larger is `413`.
    public var maxHAEBodyBytes: Int

    public init(authHeader: String = "Authorization", maxHAEBodyBytes: Int = HAEDecoder.defaultMaxBodyBytes) {
        self.authHeader = authHeader
        self.maxHAEBodyBytes = maxHAEBodyBytes
    }

    /// The token in a header value, or nil when the value is not of the expected shape.
    public func token(fromHeader value: String) -> String? {
        if authHeader.lowercased() == "authorization" { return Self.bearerToken(value) }
        return value.isEmpty ? nil : value
    }

    /// Why `name` cannot be `--auth-header`, or nil when it can: a field name is an RFC 9110
    /// token (letters, digits and ``!#$%&'*+-.^_`|~``), and not one that means something else
    /// to HTTP or to the receiver (a request's host, its body, its connection, a proxy's mark).
    public static func authHeaderProblem(_ name: String) -> String? {
        let extra = Set("!#$%&'*+-.^_`|~".utf8)
        guard !name.isEmpty, name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7A).contains($0 | 0x20) || extra.contains($0) }) else {
            return "is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
        }
        let lower = name.lowercased()
        if reserved.contains(lower) || HTTPHeaders.forwardingNames.contains(lower) || lower.hasPrefix("x-forwarded-") {
            return "names a header HTTP or a proxy uses for something else"
        }
        return nil
    }

    private static let reserved: Set<String> = [
        "host", "content-type", "content-length", "content-encoding", "transfer-encoding", "connection", "expect", "te",
        "upgrade", "trailer", "keep-alive", "cookie", "accept", "accept-encoding", "user-agent", "automation-aggregation",
        "mcp-session-id", "mcp-protocol-version", "origin", "referer",
    ]

    /// The token of an `Authorization` value `Bearer <token>`, or nil for any other shape.
    public static func bearerToken(_ value: String) -> String? {
        guard value.hasPrefix("Bearer ") else { return nil }
        let token = String(value.dropFirst("Bearer ".count))
        return token.isEmpty ? nil : token
    }
}
