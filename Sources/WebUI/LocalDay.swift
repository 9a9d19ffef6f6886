import Civil

/// A person's local date (`2026-08-21`), as the views' `day` columns hold it; counted in
/// days since 1970-01-01 so a period can be walked day by day.
struct LocalDay: Hashable, Comparable, Sendable {
    /// Days since 1970-01-01.
    let ordinal: Int

    init(ordinal: Int) {
        self.ordinal = ordinal
    }

    /// Reads `YYYY-MM-DD`; nil for anything else.
    init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), (1...31).contains(d) else {
            return nil
        }
        ordinal = CivilDate.daysFromCivil(year: y, month: m, day: d)
    }

    /// `YYYY-MM-DD`.
    var text: String {
        let (y, m, d) = CivilDate.civil(fromDays: ordinal)
        return "\(y)-" + (m < 10 ? "0" : "") + "\(m)-" + (d < 10 ? "0" : "") + "\(d)"
    }

    /// The day `count` days later (earlier when negative).
    func adding(_ count: Int) -> LocalDay { LocalDay(ordinal: ordinal + count) }

    static func < (a: LocalDay, b: LocalDay) -> Bool { a.ordinal < b.ordinal }
}
