/// What the application decides once a request's header fields are in, before its body.
///
/// `accept` carries the function that answers the whole request, so whatever was learned
/// from the head (the person a credential belongs to, the route) reaches it as a captured
/// value: nothing is looked up twice.
public enum HTTPHeadDecision: Sendable {
    /// Answer now, without reading the body; the connection closes after the answer.
    case reject(HTTPResponse)
    /// Read the body, then call `respond` with the whole request.
    ///
    /// `maxBodyBytes` is this request's body limit (nil: `HTTPServerConfiguration.maxBodyBytes`),
    /// checked on `Content-Length` before reading and while reading a chunked body; over it
    /// the answer is a bare `413` and `respond` is not called.
    case accept(maxBodyBytes: Int? = nil, respond: @Sendable (HTTPRequest) -> HTTPResponse)
}
