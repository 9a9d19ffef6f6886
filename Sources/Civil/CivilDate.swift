/// A calendar date (proleptic Gregorian), such as `2026-08-21`: the one place dates and day
/// counts convert (Howard Hinnant's `days_from_civil` and `civil_from_days`), for timestamps
/// of every format, PostgreSQL's text forms and the demo data.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int

    /// The date `days` days after 1970-01-01.
    public init(daysSinceEpoch days: Int) {
        daysSinceEpoch = days
    }

    /// The date of year, month, day; nil when it does not exist or is outside years 1–9999.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
              day <= CivilDate.daysInMonth(year: year, month: month) else { return nil }
        daysSinceEpoch = CivilDate.daysFromCivil(year: year, month: month, day: day)
    }

    /// Parses exactly `YYYY-MM-DD` naming a real date.
    public init?(_ text: String) {
        guard let (y, m, d) = Self.parts(text) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The numbers of text shaped `YYYY-MM-DD` (whether it names a real date is not checked).
    public static func parts(_ text: String) -> (year: Int, month: Int, day: Int)? {
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
        return (y, m, d)
    }

    /// Year, month and day (a year before 1 is astronomical: 0 is 1 BC).
    public var components: (year: Int, month: Int, day: Int) {
        Self.civil(fromDays: daysSinceEpoch)
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
        return Self.digits(y, 4) + "-" + Self.digits(m, 2) + "-" + Self.digits(d, 2)
    }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    /// Days in `month` of `year`.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a date (`days_from_civil`); the date is not checked.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day count since 1970-01-01 (`civil_from_days`).
    public static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `a / b` rounded toward negative infinity (`b` > 0): the day of an instant before 1970.
    public static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// `value` in decimal with at least `width` digits.
    public static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
