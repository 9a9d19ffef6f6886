/// A gauge (or a counter kept elsewhere) read when scraped: `read` answers the samples now,
/// each with its label values.
public struct GaugeFamily: MetricFamily {
    public let name: String
    let help: String
    let type: MetricType
    let labelNames: [String]
    let read: @Sendable () -> [(labels: [String], value: Double)]

    /// A family whose samples `read` gives at each scrape; `type` is `.gauge` unless the value
    /// is a count another part keeps (`.counter`, the name then ends in `_total`).
    public init(_ name: String, help: String, type: MetricType = .gauge, labels: [String] = [],
                read: @escaping @Sendable () -> [(labels: [String], value: Double)]) {
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labels
        self.read = read
    }

    /// A family of one unlabelled sample.
    public init(_ name: String, help: String, type: MetricType = .gauge, value: @escaping @Sendable () -> Double) {
        self.init(name, help: help, type: type, read: { [([], value())] })
    }

    public func render(into text: inout String) {
        Exposition.header(name, help, type, into: &text)
        for sample in read() {
            text += name
            Exposition.labels(labelNames, sample.labels, into: &text)
            text += " " + Exposition.number(sample.value) + "\n"
        }
    }
}
