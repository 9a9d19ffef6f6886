/// Charts drawn on the server as SVG: no script, nothing fetched, readable without colour.
///
/// One chart has a slot per day of the period. A day with no value draws nothing (a gap,
/// never a zero bar); today, not over yet, is drawn hollow (class `partial`). Every mark
/// carries a `<title>` with the day and the value in words and units, so hovering or a
/// screen reader gives the number; the day-by-day table below the charts gives them all as text.
struct SVGChart {
    /// One day's marks: the value (or stacked parts), its words, and whether the day is partial.
    struct Point {
        var slot: Int
        var values: [Double]
        var label: String
        var partial: Bool
    }

    enum Style {
        /// Bars from zero; several values stack (sleep stages).
        case bars
        /// Dots joined by a line across consecutive days; a missing day breaks the line.
        case line
    }

    static let width = 720.0
    static let height = 150.0
    static let left = 46.0
    static let right = 6.0
    static let top = 8.0
    static let bottom = 24.0

    var title: String
    var unit: String
    var style: Style
    var slots: Int
    var points: [Point]
    /// Axis labels under the first, middle and last slot.
    var slotLabels: (first: String, middle: String, last: String)

    /// The chart as one `<svg>` element.
    func svg() -> String {
        let scale = axis()
        var out = "<svg viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" role=\"img\" aria-label=\""
            + HTML.escape(title + ", " + unit + ", one mark per day; days without data are left empty") + "\">"
        out += grid(scale)
        switch style {
        case .bars: out += bars(scale)
        case .line: out += line(scale)
        }
        return out + "</svg>"
    }

    /// The value range drawn: from zero (bars) or around the data (line), on round steps.
    func axis() -> (low: Double, high: Double) {
        let totals = points.map { style == .bars ? $0.values.reduce(0, +) : ($0.values.first ?? 0) }
        guard let maxValue = totals.max(), let minValue = totals.min() else { return (0, 1) }
        if style == .bars { return (0, Self.niceCeiling(max(maxValue, 1e-9))) }
        let step = Self.niceCeiling(max((maxValue - minValue) / 2, abs(maxValue) * 0.01, 0.1))
        let low = (minValue / step).rounded(.down) * step
        let high = (maxValue / step).rounded(.up) * step
        return (low, high > low ? high : low + step)
    }

    private var plotWidth: Double { Self.width - Self.left - Self.right }
    private var plotHeight: Double { Self.height - Self.top - Self.bottom }
    private var step: Double { plotWidth / Double(max(slots, 1)) }

    private func x(_ slot: Int) -> Double { Self.left + (Double(slot) + 0.5) * step }
    private func y(_ value: Double, _ scale: (low: Double, high: Double)) -> Double {
        let span = scale.high - scale.low
        return Self.top + plotHeight * (1 - (value - scale.low) / (span > 0 ? span : 1))
    }

    private func grid(_ scale: (low: Double, high: Double)) -> String {
        let half = (scale.high - scale.low) / 2
        let decimals = half == half.rounded() ? 0 : half * 10 == (half * 10).rounded() ? 1 : 2
        var out = "<g class=\"axis\">"
        for i in 0...2 {
            let value = scale.low + (scale.high - scale.low) * Double(i) / 2
            let yy = Self.r(y(value, scale))
            out += "<line x1=\"\(Int(Self.left))\" x2=\"\(Int(Self.width - Self.right))\" y1=\"\(yy)\" y2=\"\(yy)\"/>"
            out += "<text x=\"\(Int(Self.left - 4))\" y=\"\(Self.r(y(value, scale) + 4))\" text-anchor=\"end\">"
                + Self.axisNumber(value, decimals: decimals) + "</text>"
        }
        let base = Self.r(Self.height - 5)
        out += "<text x=\"\(Self.r(x(0) - step / 2))\" y=\"\(base)\">\(HTML.escape(slotLabels.first))</text>"
        out += "<text x=\"\(Self.r(x(slots / 2)))\" y=\"\(base)\" text-anchor=\"middle\">\(HTML.escape(slotLabels.middle))</text>"
        out += "<text x=\"\(Self.r(Self.width - Self.right))\" y=\"\(base)\" text-anchor=\"end\">\(HTML.escape(slotLabels.last))</text>"
        return out + "</g>"
    }

    private func bars(_ scale: (low: Double, high: Double)) -> String {
        let barWidth = Self.r(max(step * 0.72, 0.6))
        var out = ""
        for point in points {
            let left = Self.r(x(point.slot) - step * 0.36)
            out += point.partial ? "<g class=\"partial\">" : "<g>"
            out += "<title>\(HTML.escape(point.label))</title>"
            var base = 0.0
            for (index, part) in point.values.enumerated() where part > 0 {
                let top = y(base + part, scale)
                let height = y(base, scale) - top
                out += "<rect class=\"s\(index)\" x=\"\(left)\" y=\"\(Self.r(top))\" width=\"\(barWidth)\" height=\"\(Self.r(max(height, 0.5)))\"/>"
                base += part
            }
            out += "</g>"
        }
        return out
    }

    private func line(_ scale: (low: Double, high: Double)) -> String {
        var path = ""
        var previous: Int?
        for point in points {
            guard let value = point.values.first else { continue }
            path += (previous == point.slot - 1 ? "L" : "M") + "\(Self.r(x(point.slot))) \(Self.r(y(value, scale)))"
            previous = point.slot
        }
        var out = path.isEmpty ? "" : "<path class=\"trend\" d=\"\(path)\"/>"
        let radius = Self.r(min(max(step * 0.3, 1.5), 4))
        for point in points {
            guard let value = point.values.first else { continue }
            out += "<circle\(point.partial ? " class=\"partial\"" : "") cx=\"\(Self.r(x(point.slot)))\" cy=\"\(Self.r(y(value, scale)))\" r=\"\(radius)\">"
                + "<title>\(HTML.escape(point.label))</title></circle>"
        }
        return out
    }

    /// An axis label short enough for a phone: `2.5k` from 1,000 up.
    static func axisNumber(_ value: Double, decimals: Int) -> String {
        abs(value) >= 1000 ? Format.number(value / 1000, decimals: value.truncatingRemainder(dividingBy: 1000) == 0 ? 0 : 1) + "k"
            : Format.number(value, decimals: decimals)
    }

    /// One decimal place: enough for a 720-wide drawing.
    static func r(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        let magnitude = abs(tenths)
        return magnitude % 10 == 0 ? sign + "\(magnitude / 10)" : sign + "\(magnitude / 10).\(magnitude % 10)"
    }

    /// The smallest 1, 2, 2.5 or 5 × 10ⁿ at or above `value` (1 for anything not positive).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        var magnitude = 1.0
        while magnitude * 10 <= value { magnitude *= 10 }
        while magnitude > value { magnitude /= 10 }
        for factor in [1.0, 2, 2.5, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }
}
