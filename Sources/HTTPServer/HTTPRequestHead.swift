/// A request as far as it has arrived when its header fields are in: everything but the body.
///
/// The server hands it to the application's `onHead` before reading any body, so a
/// credential can be checked, and a body limit chosen per path, before a byte of the body
/// is buffered.
public struct HTTPRequestHead: Sendable {
    /// The method as sent: `GET`, `POST`, `PUT`… (the server filters none).
    public var method: String
    /// The URL path as sent, without the query string and not percent-decoded.
    public var path: String
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The client's IP address as text (`127.0.0.1`, `::1`); empty when unknown.
    public var remoteAddress: String
    /// The body length the client announced in `Content-Length`; nil when it sent none
    /// (a chunked body, or no body).
    public var contentLength: UInt64?

    /// Creates a head; the server builds these, tests of applications may too.
    public init(method: String, path: String, headers: HTTPHeaders = HTTPHeaders(), remoteAddress: String = "",
                contentLength: UInt64? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.contentLength = contentLength
    }
}
