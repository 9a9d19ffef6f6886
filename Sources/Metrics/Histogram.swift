import Synchronization

/// A histogram family with labels: per set of label values, cumulative bucket counts, a sum
/// and a count (Prometheus' `_bucket{le}`, `_sum`, `_count`).
public final class HistogramFamily: MetricFamily {
    public let name: String
    let help: String
    let labelNames: [String]
    /// Upper bounds, ascending; `+Inf` is implied.
    let bounds: [Double]
    private let children = Mutex<[[String]: Histogram]>([:])

    /// A family named `name` (in base units, `_seconds`, `_bytes`) with these bucket bounds.
    public init(_ name: String, help: String, labels: [String] = [], buckets: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labels
        self.bounds = buckets.sorted()
    }

    /// The histogram of these label values.
    public func labels(_ values: String...) -> Histogram {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label values")
        return children.withLock { children in
            if let existing = children[values] { return existing }
            let created = Histogram(bounds: bounds)
            children[values] = created
            return created
        }
    }

    public func render(into text: inout String) {
        Exposition.header(name, help, .histogram, into: &text)
        let snapshot = children.withLock { $0.map { ($0.key, $0.value.snapshot()) } }
        for (values, state) in snapshot.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            var cumulative = 0
            for (bound, count) in zip(bounds + [.infinity], state.buckets) {
                cumulative += count
                text += name + "_bucket"
                Exposition.labels(labelNames, values, extra: ("le", Exposition.number(bound)), into: &text)
                text += " \(cumulative)\n"
            }
            text += name + "_sum"
            Exposition.labels(labelNames, values, into: &text)
            text += " " + Exposition.number(state.sum) + "\n" + name + "_count"
            Exposition.labels(labelNames, values, into: &text)
            text += " \(state.count)\n"
        }
    }
}

/// One histogram: observations counted into buckets, under a mutex (a few tens of ns).
public final class Histogram: Sendable {
    struct State {
        /// Per bucket (not cumulative), the last one for above every bound.
        var buckets: [Int]
        var sum = 0.0
        var count = 0
    }

    private let bounds: [Double]
    private let state: Mutex<State>

    init(bounds: [Double]) {
        self.bounds = bounds
        self.state = Mutex(State(buckets: Array(repeating: 0, count: bounds.count + 1)))
    }

    /// Counts one observation of `value` (seconds, bytes: the family's unit).
    public func observe(_ value: Double) {
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        state.withLock { state in
            state.buckets[index] += 1
            state.sum += value
            state.count += 1
        }
    }

    func snapshot() -> State {
        state.withLock { $0 }
    }
}
