/// One answered request, as `HTTPServerConfiguration.onAnswered` sees it: no header, no body.
public struct HTTPAnswered: Sendable {
    /// The method as sent.
    public var method: String
    /// The URL path as sent.
    public var path: String
    /// The status sent.
    public var status: Int
    /// Seconds from the header fields' arrival to the answer being queued (the body's upload
    /// and the handler's work included).
    public var seconds: Double
    /// Body bytes received (kept or drained).
    public var bodyBytes: Int
    /// True when the server answered itself, never asking the application: the bare `413` of a
    /// body over its limit, or the `503` of a body the body budget cannot take now.
    public var byServer: Bool

    /// An answer as the server reports it (tests and benchmarks make their own).
    public init(method: String, path: String, status: Int, seconds: Double, bodyBytes: Int, byServer: Bool) {
        self.method = method
        self.path = path
        self.status = status
        self.seconds = seconds
        self.bodyBytes = bodyBytes
        self.byServer = byServer
    }
}
