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
    /// `HTTPServerConfiguration.bodyBudgetBytes`: 0 for no bound.
    let bodyBudget: Int
    /// Body bytes reserved by requests in flight, never above `bodyBudget` (when it is set).
    let bodiesInFlight = Atomic<Int>(0)
    /// `HTTPServerConfiguration.returnMemoryAfterBytes`: 0 for never.
    let returnMemoryAfterBytes: Int
    /// `HTTPServerConfiguration.onAnswered`.
    let onAnswered: (@Sendable (HTTPAnswered) -> Void)?

    /// Creates the shared state for one server.
    init(onHead: @escaping @Sendable (HTTPRequestHead) -> HTTPHeadDecision, maxBodyBytes: Int, requestDeadlineSeconds: Double,
         bodyBudget: Int = 0, returnMemoryAfterBytes: Int = 0, onAnswered: (@Sendable (HTTPAnswered) -> Void)? = nil) {
        self.onAnswered = onAnswered
        self.onHead = onHead
        self.maxBodyBytes = maxBodyBytes
        self.watch = ConnectionWatch(seconds: requestDeadlineSeconds)
        self.bodyBudget = bodyBudget
        self.returnMemoryAfterBytes = returnMemoryAfterBytes
    }

    /// Takes `bytes` from the budget; false (nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        guard bodyBudget > 0 else { return true }
        var current = bodiesInFlight.load(ordering: .relaxed)
        while true {
            guard bytes <= bodyBudget - current else { return false }
            let (exchanged, original) = bodiesInFlight.compareExchange(expected: current, desired: current + bytes,
                                                                       ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives `bytes` back to the budget.
    func release(_ bytes: Int) {
        guard bodyBudget > 0, bytes > 0 else { return }
        bodiesInFlight.subtract(bytes, ordering: .acquiringAndReleasing)
    }
}
