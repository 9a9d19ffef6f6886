/// Charts drawn on the server as SVG: no script, nothing fetched, readable without colour.
///
/// One chart has a slot per day of the period. A day with no value draws nothing (a gap,
/// never a zero bar); today, not over yet, is drawn hollow (class `partial`, with a `<title>`
/// saying so). Marks are strokes of one path per series, so 365 days stay small; every value
/// is also text in the day-by-day table, which the chart's label points to.
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
            + HTML.escape(title + ", " + unit + ", one mark per day; days without data are left empty; the values are in the table Day by day") + "\">"
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

    /// Each stacked part of the complete days as one path of vertical strokes (a bar is a
    /// stroke as wide as the bar: `M x bottom V top`), 14 bytes a day; today as an outlined
    /// rectangle with its `<title>`.
    private func bars(_ scale: (low: Double, high: Double)) -> String {
        let width = Self.r(max(step * 0.72, 0.6))
        var paths: [String] = []
        var out = ""
        for point in points {
            var base = 0.0
            // A day whose value is 0 is data: a sliver at the axis, unlike a day with none.
            let zero = point.values.allSatisfy { $0 <= 0 }
            for (index, part) in point.values.enumerated() where part > 0 || (zero && index == 0) {
                let bottom = y(base, scale), top = min(y(base + part, scale), bottom - 0.5)
                if point.partial {
                    out += "<rect class=\"partial\" x=\"\(Self.r(x(point.slot) - step * 0.36))\" y=\"\(Self.r(top))\" width=\"\(width)\" "
                        + "height=\"\(Self.r(bottom - top))\"><title>\(HTML.escape(point.label))</title></rect>"
                } else {
                    while paths.count <= index { paths.append("") }
                    paths[index] += "M\(Self.r(x(point.slot))) \(Self.r(bottom))V\(Self.r(top))"
                }
                base += max(part, 0)
            }
        }
        let strokes = paths.enumerated().filter { !$0.element.isEmpty }
            .map { "<path class=\"m s\($0.offset)\" stroke-width=\"\(width)\" d=\"\($0.element)\"/>" }.joined()
        return strokes + out
    }

    /// A line through consecutive days (a missing day breaks it), a dot per day (`M x yh0` with
    /// a round cap), today as an outlined circle with its `<title>`.
    private func line(_ scale: (low: Double, high: Double)) -> String {
        var trend = "", dots = "", today = ""
        var previous: Int?
        for point in points {
            guard let value = point.values.first else { continue }
            let at = "\(Self.r(x(point.slot))) \(Self.r(y(value, scale)))"
            trend += (previous == point.slot - 1 ? "L" : "M") + at
            previous = point.slot
            if point.partial {
                today += "<circle class=\"partial\" cx=\"\(Self.r(x(point.slot)))\" cy=\"\(Self.r(y(value, scale)))\" r=\"3\">"
                    + "<title>\(HTML.escape(point.label))</title></circle>"
            } else {
                dots += "M" + at + "h0"
            }
        }
        let dotWidth = Self.r(min(max(step * 0.6, 2.5), 6))
        return (trend.isEmpty ? "" : "<path class=\"trend\" d=\"\(trend)\"/>")
            + (dots.isEmpty ? "" : "<path class=\"m dots\" stroke-width=\"\(dotWidth)\" d=\"\(dots)\"/>") + today
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
