#if canImport(Glibc)
import Glibc
#endif

/// Per-request state kept in MHD's `*con_cls` from the first access-handler
/// call until the completed callback releases it. Only the connection's own
/// MHD thread touches it, one call at a time.
final class RequestContext {
    /// The request as it was when its header fields arrived.
    let head: HTTPRequestHead
    /// This request's body cap.
    var maxBodyBytes = 0
    /// What answers the whole request, from `onHead`'s `accept`.
    var respond: (@Sendable (HTTPRequest) -> HTTPResponse)?
    /// The body received so far.
    var body: [UInt8] = []
    /// The body went (or was announced) over the cap: bytes are discarded, the answer is 413.
    var bodyTooLarge = false
    /// Bytes thrown away after the body went over the cap.
    var discardedBytes = 0
    /// A response has been queued; later calls only drain.
    var responded = false
    /// Bytes this request holds of the server's body budget, given back when it completes.
    var reservedBytes = 0
    /// A chunked body outgrew what the budget had left: bytes are discarded, the answer is 503.
    var overBudget = false
    /// When the header fields arrived (CLOCK_MONOTONIC nanoseconds), for `onAnswered`.
    let startedNanoseconds = RequestContext.now()
    /// Body bytes received so far, kept or drained.
    var receivedBytes = 0

    /// CLOCK_MONOTONIC in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// A context for a request whose head is `head`.
    init(head: HTTPRequestHead) {
        self.head = head
    }
}
