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

    /// The token of an `Authorization` value `Bearer <token>`, or nil for any other shape.
    public static func bearerToken(_ value: String) -> String? {
        guard value.hasPrefix("Bearer ") else { return nil }
        let token = String(value.dropFirst("Bearer ".count))
        return token.isEmpty ? nil : token
    }
}
