import Synchronization

/// The families one `/metrics` answer holds, in the order they were registered.
public final class MetricsRegistry: Sendable {
    private let families = Mutex<[any MetricFamily]>([])

    /// An empty registry.
    public init() {}

    /// Adds `family`; returns it, for `let requests = registry.register(CounterFamily(…))`.
    @discardableResult
    public func register<Family: MetricFamily>(_ family: Family) -> Family {
        families.withLock { $0.append(family) }
        return family
    }

    /// Every family in the text exposition format 0.0.4.
    public func render() -> String {
        let all = families.withLock { $0 }
        var text = ""
        text.reserveCapacity(16_384)
        for family in all { family.render(into: &text) }
        return text
    }

    /// The `Content-Type` of `render()`'s text.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
