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
