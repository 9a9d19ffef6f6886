/// An instant in the reference's one timestamp shape: `2026-08-21T10:25:30.000+02:00` or `2026-08-21T08:25:30.000Z`.
///
/// Exactly three fractional digits; a numeric offset with a colon, or `Z`. Ranges are checked
/// (month 01–12, days per month with leap years, hour 00–23, minute and second 00–59, year
/// 0001–9999 — PostgreSQL has no year 0 — and an offset of at most ±15:59, PostgreSQL's limit).
/// A hand-rolled parser costs tens of nanoseconds; `ISO8601DateFormatter` measured ~37 µs a stamp here.
public struct Timestamp: Sendable, Hashable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSinceEpoch: Int64
    /// The written UTC offset in minutes, east positive (`+02:00` → 120, `Z` → 0). It decides the day when no time zone is set.
    public var offsetMinutes: Int

    /// Creates a timestamp from its parts.
    public init(millisecondsSinceEpoch: Int64, offsetMinutes: Int) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
        self.offsetMinutes = offsetMinutes
    }

    /// Parses text in the reference's shape; nil when it is anything else.
    public init?(_ text: some StringProtocol) {
        var copy = String(text)
        guard let parsed = copy.withUTF8({ Timestamp(utf8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses UTF-8 bytes in the reference's shape; nil when they are anything else.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        guard n == 24 || n == 29 else { return nil }
        @inline(__always) func digit(_ k: Int) -> Int? {
            let d = bytes[k] &- UInt8(ascii: "0")
            return d < 10 ? Int(d) : nil
        }
        @inline(__always) func two(_ k: Int) -> Int? {
            guard let a = digit(k), let b = digit(k + 1) else { return nil }
            return a * 10 + b
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
              let y1 = two(0), let y2 = two(2), let month = two(5), let day = two(8),
              let hour = two(11), let minute = two(14), let second = two(17),
              let m1 = digit(20), let m2 = two(21)
        else { return nil }
        let year = y1 * 100 + y2
        guard year >= 1, month >= 1, month <= 12, day >= 1, day <= Self.daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var offset = 0
        if n == 24 {
            guard bytes[23] == UInt8(ascii: "Z") else { return nil }
        } else {
            let sign = bytes[23]
            guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), bytes[26] == UInt8(ascii: ":"),
                  let oh = two(24), let om = two(27), oh <= 15, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset * 60)
        millisecondsSinceEpoch = seconds * 1000 + Int64(m1 * 100 + m2)
        offsetMinutes = offset
    }

    /// Days in `month` of `year` in the proleptic Gregorian calendar.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
