import Synchronization

/// A counter family with labels: one `Counter` per set of label values.
///
/// Children are created on first use and then looked up under a mutex; callers on a hot path
/// keep the `Counter` they got. `declare` creates children ahead so a series reads 0 before
/// its first event (a rate over a series that does not exist yet is nothing, not zero).
public final class CounterFamily: MetricFamily {
    public let name: String
    let help: String
    let labelNames: [String]
    private let children = Mutex<[[String]: Counter]>([:])

    /// A family named `name` (ending in `_total`) with these label names.
    public init(_ name: String, help: String, labels: [String] = []) {
        self.name = name
        self.help = help
        self.labelNames = labels
    }

    /// The counter of these label values (as many as the family has label names).
    public func labels(_ values: String...) -> Counter {
        labels(values)
    }

    /// The counter of these label values.
    public func labels(_ values: [String]) -> Counter {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label values")
        return children.withLock { children in
            if let existing = children[values] { return existing }
            let created = Counter()
            children[values] = created
            return created
        }
    }

    /// Creates the children of every combination of `values` (one list per label).
    public func declare(_ values: [[String]]) {
        var combinations: [[String]] = [[]]
        for options in values {
            combinations = combinations.flatMap { prefix in options.map { prefix + [$0] } }
        }
        for combination in combinations { _ = labels(combination) }
    }

    /// Adds `amount` to the counter of `values`.
    public func add(_ amount: Int, _ values: String...) {
        labels(values).add(amount)
    }

    public func render(into text: inout String) {
        Exposition.header(name, help, .counter, into: &text)
        let snapshot = children.withLock { $0.map { ($0.key, $0.value.value) } }
        for (values, count) in snapshot.sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            text += name
            Exposition.labels(labelNames, values, into: &text)
            text += " \(count)\n"
        }
    }
}
