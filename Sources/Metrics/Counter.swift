import Synchronization

/// A monotonically increasing count, starting at zero with the process (Prometheus' counter).
///
/// One atomic add per increment: cheap enough for every request on every connection thread.
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    /// A counter at zero.
    public init() {}

    /// Adds `amount` (0 or more; a negative amount is ignored, a counter never goes down).
    public func add(_ amount: Int = 1) {
        guard amount > 0 else { return }
        count.add(amount, ordering: .relaxed)
    }

    /// The count now.
    public var value: Int { count.load(ordering: .relaxed) }
}
