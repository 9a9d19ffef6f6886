import HealthPayload
/// A calendar date (proleptic Gregorian), such as `2026-08-21`.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int

    /// The date `days` days after 1970-01-01.
    public init(daysSinceEpoch days: Int) {
        daysSinceEpoch = days
    }

    /// The date of year, month, day; nil when it does not exist.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= CivilDate.daysInMonth(year: year, month: month) else { return nil }
        daysSinceEpoch = CivilDate.daysFromCivil(year: year, month: month, day: day)
    }

    /// Parses exactly `YYYY-MM-DD`.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                let d = bytes[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value * 10 + Int(d)
            }
            return value
        }
        guard let y = number(0..<4), let m = number(5..<7), let d = number(8..<10) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Year, month and day.
    public var components: (year: Int, month: Int, day: Int) {
        // Howard Hinnant's civil_from_days.
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 0 = Monday … 6 = Sunday.
    public var weekday: Int {
        ((daysSinceEpoch % 7) + 7 + 3) % 7  // 1970-01-01 was a Thursday
    }

    /// The date `n` days later.
    public func adding(days n: Int) -> CivilDate {
        CivilDate(daysSinceEpoch: daysSinceEpoch + n)
    }

    /// `2026-08-21`
    public var description: String {
        let (y, m, d) = components
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2)
    }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    static func daysInMonth(year: Int, month: Int) -> Int {
        Timestamp.daysInMonth(year: year, month: month)
    }

    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        Timestamp.daysFromCivil(year: year, month: month, day: day)
    }
}

/// `value` in decimal with at least `width` digits.
func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
