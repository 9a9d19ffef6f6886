/// Numbers as the page writes them: rounded to what the eye needs, thousands grouped with
/// commas, always with their unit. Every number on the page comes through here.
enum Format {
    /// `value` rounded to `decimals` places with thousands grouped: `8,123`, `6.12`.
    static func number(_ value: Double, decimals: Int = 0) -> String {
        guard value.isFinite else { return "–" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e15 else { return value < 0 ? "-∞" : "∞" }
        let whole = Int64(scaled) / Int64(scale)
        let fraction = Int64(scaled) % Int64(scale)
        var text = grouped(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return (value < 0 && scaled > 0 ? "−" : "") + text
    }

    /// `value` with its unit after a space: `6.12 km`.
    static func with(_ value: Double, decimals: Int = 0, unit: String) -> String {
        number(value, decimals: decimals) + " " + unit
    }

    /// A duration in minutes as hours and minutes: `7 h 12 min`, `45 min`.
    static func minutes(_ minutes: Double) -> String {
        guard minutes.isFinite else { return "–" }
        let total = Int((minutes).rounded())
        if total < 60 { return "\(total) min" }
        let rest = total % 60
        return "\(total / 60) h " + (rest < 10 ? "0" : "") + "\(rest) min"
    }

    /// A signed difference with its unit: `+12 steps`, `−0.40 km`, `0 kcal`.
    static func difference(_ value: Double, decimals: Int, unit: String) -> String {
        let text = number(value, decimals: decimals)
        let sign = (text.hasPrefix("−") || text.allSatisfy { $0 == "0" || $0 == "." }) ? "" : "+"
        return sign + text + " " + unit
    }

    /// Hours since an event as words: `35 min ago`, `3 h 5 min ago`, `2 days 4 h ago`.
    static func ago(hours: Double) -> String {
        guard hours.isFinite, hours >= 0 else { return "just now" }
        let minutes = Int((hours * 60).rounded())
        if minutes < 1 { return "just now" }
        if minutes < 60 { return "\(minutes) min ago" }
        if minutes < 48 * 60 { return "\(minutes / 60) h \(minutes % 60) min ago" }
        return "\(minutes / 1440) days \(minutes % 1440 / 60) h ago"
    }

    private static func grouped(_ value: Int64) -> String {
        let digits = String(value)
        guard digits.count > 3 else { return digits }
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
