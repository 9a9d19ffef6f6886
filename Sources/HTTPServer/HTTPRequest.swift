/// One HTTP request, fully received, as the handler sees it.
public struct HTTPRequest: Sendable {
    /// The method as sent: `GET`, `POST`, `PUT`… (the server filters none).
    public var method: String
    /// The URL path as sent, without the query string and not percent-decoded.
    public var path: String
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The body bytes exactly as received (after chunked decoding); at most
    /// `HTTPServerConfiguration.maxBodyBytes`.
    public var body: [UInt8]
    /// The client's IP address as text (`127.0.0.1`, `::1`); an IPv4 client
    /// on a dual-stack socket appears in IPv4 form. Empty when unknown.
    public var remoteAddress: String

    /// Creates a request; the server builds these, tests of handlers may too.
    public init(method: String, path: String, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }
}
