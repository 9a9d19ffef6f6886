/// The answer a handler gives: status, header fields and body bytes.
///
/// The server copies all of it into libmicrohttpd and lets MHD set
/// `Content-Length`; a `Content-Length` or `Transfer-Encoding` given here is
/// ignored. A status outside 200…599, or a header field whose name is not an
/// HTTP token or whose value holds CR, LF or NUL, is a handler bug: the server
/// answers `500` instead of sending it.
public struct HTTPResponse: Sendable {
    /// The status code, 200…599.
    public var status: Int
    /// Header fields to send, in order; a name may repeat.
    public var headers: [(name: String, value: String)]
    /// The body bytes.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response whose body is `jsonText` (UTF-8) with `Content-Type: application/json`,
    /// followed by `headers`.
    public static func json(status: Int, _ jsonText: String,
                            headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: [(name: "Content-Type", value: "application/json")] + headers,
                     body: Array(jsonText.utf8))
    }
}
