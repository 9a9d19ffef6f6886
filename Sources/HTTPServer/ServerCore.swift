import Synchronization

/// What MHD's connection threads share while a daemon runs: the application's head and
/// request functions, the default body cap, the counters and the connection watch. Reached
/// from the C callbacks through the daemon's `cls` pointer.
final class ServerCore: Sendable {
    /// The application's decision on a request head; runs on MHD's connection thread.
    let onHead: @Sendable (HTTPRequestHead) -> HTTPHeadDecision
    /// `HTTPServerConfiguration.maxBodyBytes`: the body cap of a request `onHead` gives none.
    let maxBodyBytes: Int
    /// Requests whose headers arrived and whose completion MHD has not yet reported.
    let requestsInFlight = Atomic<Int>(0)
    /// Set when `stop()` begins: responses then carry `Connection: close`.
    let stopping = Atomic<Bool>(false)
    /// Open connections and their request deadlines.
    let watch: ConnectionWatch

    /// Creates the shared state for one server.
    init(onHead: @escaping @Sendable (HTTPRequestHead) -> HTTPHeadDecision, maxBodyBytes: Int, requestDeadlineSeconds: Double) {
        self.onHead = onHead
        self.maxBodyBytes = maxBodyBytes
        self.watch = ConnectionWatch(seconds: requestDeadlineSeconds)
    }
}
