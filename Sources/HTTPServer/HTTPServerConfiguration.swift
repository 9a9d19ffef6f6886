/// How the HTTP server listens and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// Where to listen; default `127.0.0.1:8080`.
    public var address: ListenAddress
    /// The largest request body accepted, in bytes, unless the application's
    /// `onHead` gives a request a limit of its own; a larger one is answered
    /// with a bare `413` and never reaches the handler. A `Content-Length`
    /// over it is refused before the body is read; a chunked body that grows
    /// past it is drained and refused at its end, or cut (no answer) if it
    /// runs on for more than max(this, 1 MiB) bytes beyond. Default 4 MiB.
    public var maxBodyBytes: Int
    /// How many connections may be open at once; further ones are closed at
    /// once by libmicrohttpd. Default 64.
    public var connectionLimit: Int
    /// How many connections one client address may have open at once; further
    /// ones from it are closed at once, so a few clients cannot take every
    /// slot. 0 means no limit. Behind a reverse proxy every client is the
    /// proxy's address. Default 16.
    public var perAddressConnectionLimit: Int
    /// Seconds a connection has to deliver a whole request, header fields and
    /// body, counted from when it opened or from its previous answer; a
    /// connection still receiving after that is cut (no answer), however
    /// steadily it trickles. The handler's own time does not count. 0 turns
    /// the deadline off. Default 60 (the healthd app gives up on a first
    /// attempt after 60 s anyway).
    public var requestDeadlineSeconds: Double
    /// Seconds a connection may stay without any traffic before it is cut
    /// (an idle keep-alive, a stalled upload, a client that never finishes its
    /// headers). It measures silence, not the total length of a request. Default 30.
    public var connectionTimeoutSeconds: Int
    /// libmicrohttpd's memory pool per connection, in bytes: it holds the
    /// request line, the headers and the read buffer (not the body, which is
    /// accumulated separately). Headers larger than this are refused by MHD.
    /// Default 64 KiB.
    public var perConnectionMemoryLimit: Int
    /// The most body bytes all requests in flight may hold at once; 0 for no bound. A request
    /// reserves its `Content-Length` before a byte of its body is read (a chunked one, each
    /// piece as it arrives) and gives it back once answered, its handler's work included. One
    /// that does not fit is answered `503` with `Retry-After` (its body never read, or drained),
    /// so memory stays bounded by design whatever clients send at once. It must be at least
    /// the largest body limit of any path, or such a body could never be taken. Default 0.
    public var bodyBudgetBytes: Int
    /// Memory goes back to the system after large bodies: once a request whose body held at
    /// least this many bytes is answered, glibc's free memory is trimmed (`malloc_trim`), and
    /// from `start()` on every allocation this large is a mapping of its own, unmapped when
    /// freed (`M_MMAP_THRESHOLD`, process-wide). 0 for neither. Default 0.
    public var returnMemoryAfterBytes: Int
    /// HTTPS with these files (TLS 1.2 and 1.3, forward-secret suites only); nil for plain
    /// HTTP. Default nil.
    public var tls: TLSFiles?
    /// Called once per answered request on the connection's thread, after its answer is queued:
    /// for counting (metrics). It must not block. Default nil.
    public var onAnswered: (@Sendable (HTTPAnswered) -> Void)?
    /// The names the server answers to in `Host`: a request naming another is answered `421`
    /// before `onHead` sees it, whatever its path (`HostNames`). nil answers any. Default nil.
    public var hostNames: HostNames?
    /// Called with the head of each request refused for its `Host`, on the connection's thread
    /// (a log line: which name a proxy or a page used). It must not block. Default nil.
    public var onMisdirected: (@Sendable (HTTPRequestHead) -> Void)?

    /// Creates a configuration; every value has the documented default.
    public init(address: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080),
                maxBodyBytes: Int = 4 * 1024 * 1024,
                connectionLimit: Int = 64,
                perAddressConnectionLimit: Int = 16,
                connectionTimeoutSeconds: Int = 30,
                requestDeadlineSeconds: Double = 60,
                perConnectionMemoryLimit: Int = 64 * 1024,
                bodyBudgetBytes: Int = 0,
                returnMemoryAfterBytes: Int = 0,
                tls: TLSFiles? = nil,
                onAnswered: (@Sendable (HTTPAnswered) -> Void)? = nil,
                hostNames: HostNames? = nil,
                onMisdirected: (@Sendable (HTTPRequestHead) -> Void)? = nil) {
        self.address = address
        self.maxBodyBytes = maxBodyBytes
        self.connectionLimit = connectionLimit
        self.perAddressConnectionLimit = perAddressConnectionLimit
        self.requestDeadlineSeconds = requestDeadlineSeconds
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.perConnectionMemoryLimit = perConnectionMemoryLimit
        self.bodyBudgetBytes = bodyBudgetBytes
        self.returnMemoryAfterBytes = returnMemoryAfterBytes
        self.tls = tls
        self.onAnswered = onAnswered
        self.hostNames = hostNames
        self.onMisdirected = onMisdirected
    }

    /// Throws `HTTPServerError.Code.invalidConfiguration` naming the first value out of range.
    func validate() throws(HTTPServerError) {
        func bad(_ message: String) -> HTTPServerError { HTTPServerError(.invalidConfiguration, message) }
        guard maxBodyBytes >= 0 else { throw bad("maxBodyBytes must be 0 or more, got \(maxBodyBytes)") }
        guard connectionLimit >= 1, connectionLimit <= Int(UInt32.max) else {
            throw bad("connectionLimit must be at least 1, got \(connectionLimit)")
        }
        guard perAddressConnectionLimit >= 0, perAddressConnectionLimit <= Int(UInt32.max) else {
            throw bad("perAddressConnectionLimit must be 0 (no limit) or more, got \(perAddressConnectionLimit)")
        }
        guard requestDeadlineSeconds >= 0, requestDeadlineSeconds.isFinite else {
            throw bad("requestDeadlineSeconds must be 0 (none) or more, got \(requestDeadlineSeconds)")
        }
        guard connectionTimeoutSeconds >= 1, connectionTimeoutSeconds <= Int(UInt32.max) else {
            throw bad("connectionTimeoutSeconds must be at least 1, got \(connectionTimeoutSeconds)")
        }
        guard perConnectionMemoryLimit >= 4096 else {
            throw bad("perConnectionMemoryLimit must be at least 4096 bytes, got \(perConnectionMemoryLimit)")
        }
        guard bodyBudgetBytes == 0 || bodyBudgetBytes >= maxBodyBytes else {
            throw bad("bodyBudgetBytes must be 0 (none) or at least maxBodyBytes (\(maxBodyBytes)), got \(bodyBudgetBytes)")
        }
        guard returnMemoryAfterBytes >= 0, returnMemoryAfterBytes <= Int(Int32.max) else {
            throw bad("returnMemoryAfterBytes must be from 0 to \(Int32.max), got \(returnMemoryAfterBytes)")
        }
    }
}
