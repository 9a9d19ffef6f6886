import Civil

/// What each point of a Health Auto Export body stands for: the request's
/// `automation-aggregation` header, set by the app's "summarize data" and its grouping.
///
/// With a grouping, a point is the total (or for heart rate `Min`/`Avg`/`Max`) over a bucket
/// that starts at its `date` and lasts one unit; without one (no header, or `none`) a point is
/// a single reading at one instant. `seconds` is read too (one-second buckets), though the app's
/// settings name only the six others.
public enum HAEAggregation: String, Sendable, CaseIterable {
    case seconds, minutes, hours, days, weeks, months, years

    /// The grouping a header value names (any case, singular or plural); nil for none: no
    /// header, an empty one, or `none`. Anything else is refused, naming the header.
    public static func parse(header: String?) throws(StrideePayloadError) -> HAEAggregation? {
        guard let header else { return nil }
        let text = String(header.lowercased().drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        if text.isEmpty || text == "none" { return nil }
        if let found = HAEAggregation(rawValue: text) ?? HAEAggregation(rawValue: text + "s") { return found }
        throw StrideePayloadError(path: "automation-aggregation",
                                  "\"\(PayloadDecoder.snippet(text))\" is not minutes, hours, days, weeks, months or years (or none)")
    }

    /// The end of the bucket that starts at `start`, in the offset `start` was written in:
    /// fixed lengths up to a week; a calendar month or year (the 31st plus a month is the last
    /// day of the next month).
    public func end(of start: Timestamp) -> Timestamp {
        let seconds: Int64
        switch self {
        case .seconds: seconds = 1
        case .minutes: seconds = 60
        case .hours: seconds = 3600
        case .days: seconds = 86_400
        case .weeks: seconds = 604_800
        case .months, .years:
            let offset = Int64(start.offsetSeconds) * 1_000_000
            let local = start.microsecondsSinceEpoch + offset
            let day = CivilDate.floorDivide(local, 86_400_000_000)
            let (y, m, d) = CivilDate.civil(fromDays: Int(day))
            let months = (self == .months ? 1 : 12) + m - 1
            let year = y + months / 12, month = months % 12 + 1
            let next = CivilDate.daysFromCivil(year: year, month: month, day: min(d, CivilDate.daysInMonth(year: year, month: month)))
            let micros = Int64(next) * 86_400_000_000 + (local - day * 86_400_000_000) - offset
            return Timestamp(microsecondsSinceEpoch: micros, offsetSeconds: start.offsetSeconds)
        }
        return Timestamp(microsecondsSinceEpoch: start.microsecondsSinceEpoch + seconds * 1_000_000, offsetSeconds: start.offsetSeconds)
    }
}
