/// One metric family as the Prometheus text exposition format (0.0.4) writes it: `# HELP`,
/// `# TYPE`, then its samples.
public protocol MetricFamily: Sendable {
    /// The family's name, e.g. `health_warehouse_http_requests_total`.
    var name: String { get }
    /// Appends the family, `# HELP` and `# TYPE` lines first, to `text`.
    func render(into text: inout String)
}

/// The kinds the text format knows.
public enum MetricType: String, Sendable {
    case counter, gauge, histogram
}

/// A family whose samples its owner writes at each scrape, straight into the text (many
/// series, such as one per person, without building a list of them first).
public struct WrittenFamily: MetricFamily {
    public let name: String
    let help: String
    let type: MetricType
    let write: @Sendable (inout SampleWriter) -> Void

    /// A family whose samples `write` gives through the `SampleWriter`.
    public init(_ name: String, help: String, type: MetricType = .gauge, write: @escaping @Sendable (inout SampleWriter) -> Void) {
        self.name = name
        self.help = help
        self.type = type
        self.write = write
    }

    public func render(into text: inout String) {
        Exposition.header(name, help, type, into: &text)
        var writer = SampleWriter(name: name)
        write(&writer)
        text += String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Writes one family's sample lines as bytes (a scrape of thousands of series builds no
/// string per line).
public struct SampleWriter {
    let name: [UInt8]
    var bytes: [UInt8] = []

    init(name: String) {
        self.name = Array(name.utf8)
        bytes.reserveCapacity(65_536)
    }

    /// `name{label="value",…} value`, values escaped (`\\`, `\"`, `\n`).
    public mutating func sample(_ labelNames: [String], _ labelValues: [String], _ value: Double) {
        bytes += name
        if !labelNames.isEmpty {
            bytes.append(UInt8(ascii: "{"))
            for index in labelNames.indices {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += labelNames[index].utf8
                bytes += [UInt8(ascii: "="), UInt8(ascii: "\"")]
                for byte in labelValues[index].utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                    case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                    case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                    default: bytes.append(byte)
                    }
                }
                bytes.append(UInt8(ascii: "\""))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: " "))
        bytes += Exposition.number(value).utf8
        bytes.append(UInt8(ascii: "\n"))
    }
}

/// Writing the text format's pieces, in one place.
enum Exposition {
    /// `# HELP name help` and `# TYPE name type`, help escaped as the format asks.
    static func header(_ name: String, _ help: String, _ type: MetricType, into text: inout String) {
        text += "# HELP \(name) "
        for character in help.unicodeScalars {
            switch character {
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            default: text.unicodeScalars.append(character)
            }
        }
        text += "\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// `{a="x",b="y"}` (nothing for no labels), values escaped (`\\`, `\"`, `\n`).
    static func labels(_ names: [String], _ values: [String], extra: (String, String)? = nil, into text: inout String) {
        guard !names.isEmpty || extra != nil else { return }
        text += "{"
        var first = true
        for (name, value) in zip(names, values) {
            if !first { text += "," }
            first = false
            text += name + "=\""
            escape(value, into: &text)
            text += "\""
        }
        if let extra {
            if !first { text += "," }
            text += extra.0 + "=\"" + extra.1 + "\""
        }
        text += "}"
    }

    static func escape(_ value: String, into text: inout String) {
        // Most values need nothing escaped: appended whole.
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) {
            text += value
            return
        }
        for character in value.unicodeScalars {
            switch character {
            case "\\": text += "\\\\"
            case "\"": text += "\\\""
            case "\n": text += "\\n"
            default: text.unicodeScalars.append(character)
            }
        }
    }

    /// A sample value: integers without a fraction, `+Inf`, `-Inf` and `NaN` spelled as the format does.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
