import Synchronization

/// What MHD's connection threads share while a daemon runs: the handler, the
/// body cap and the counters. Reached from the C callbacks through the
/// daemon's `cls` pointer.
final class ServerCore: Sendable {
    /// The application's handler; runs on MHD's connection thread.
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    /// `HTTPServerConfiguration.maxBodyBytes`.
    let maxBodyBytes: Int
    /// Requests whose headers arrived and whose completion MHD has not yet reported.
    let requestsInFlight = Atomic<Int>(0)
    /// Set when `stop()` begins: responses then carry `Connection: close`.
    let stopping = Atomic<Bool>(false)

    /// Creates the shared state for one server.
    init(handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse, maxBodyBytes: Int) {
        self.handler = handler
        self.maxBodyBytes = maxBodyBytes
    }
}
