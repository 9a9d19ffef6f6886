import Civil

/// An instant with the UTC offset it was written in: the one timestamp type of every format the
/// warehouse reads. Parsed from the reference's one shape (healthd: `init(_:)`,
/// `init(utf8:)`), from ISO 8601 as the Stridee formats write it (`init(iso8601:)`,
/// `Timestamp+ISO8601.swift`), and from the Health app export's shapes (`ExportTimestamp`,
/// which also keeps its text in the reference's shape).
///
/// The reference's shape: `2026-08-21T10:25:30.000+02:00` or `2026-08-21T08:25:30.000Z`, exactly
/// three fractional digits; a numeric offset with a colon, or `Z`. Ranges are checked (month
/// 01–12, days per month with leap years, hour 00–23, minute and second 00–59, year 0001–9999 —
/// PostgreSQL has no year 0 — and an offset of at most ±15:59, PostgreSQL's limit). A
/// hand-rolled parser costs tens of nanoseconds; `ISO8601DateFormatter` measured ~37 µs a stamp here.
public struct Timestamp: Sendable, Hashable {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microsecondsSinceEpoch: Int64
    /// The written UTC offset in seconds, east positive (`+02:00` → 7200, `Z` → 0). It decides
    /// the day when no time zone is set.
    public var offsetSeconds: Int32

    /// Creates a timestamp from its parts.
    public init(microsecondsSinceEpoch: Int64, offsetSeconds: Int32) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
        self.offsetSeconds = offsetSeconds
    }

    /// Creates a timestamp from milliseconds and an offset in minutes.
    public init(millisecondsSinceEpoch: Int64, offsetMinutes: Int) {
        self.init(microsecondsSinceEpoch: millisecondsSinceEpoch * 1000, offsetSeconds: Int32(offsetMinutes * 60))
    }

    /// Milliseconds since 1970-01-01T00:00:00Z (rounded down).
    public var millisecondsSinceEpoch: Int64 { CivilDate.floorDivide(microsecondsSinceEpoch, 1000) }
    /// The written UTC offset in minutes (`+02:00` → 120).
    public var offsetMinutes: Int { Int(offsetSeconds) / 60 }

    /// Parses text in the reference's shape; nil when it is anything else.
    public init?(_ text: some StringProtocol) {
        var copy = String(text)
        guard let parsed = copy.withUTF8({ Timestamp(utf8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses UTF-8 bytes in the reference's shape; nil when they are anything else.
    public init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        guard n == 24 || n == 29, let local = Self.localSeconds(bytes), bytes[19] == UInt8(ascii: "."),
              let m1 = Self.digit(bytes, 20), let m2 = Self.two(bytes, 21)
        else { return nil }
        var offset = 0
        if n == 24 {
            guard bytes[23] == UInt8(ascii: "Z") else { return nil }
        } else {
            let sign = bytes[23]
            guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), bytes[26] == UInt8(ascii: ":"),
                  let oh = Self.two(bytes, 24), let om = Self.two(bytes, 27), oh <= 15, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        self.init(millisecondsSinceEpoch: (local - Int64(offset * 60)) * 1000 + Int64(m1 * 100 + m2), offsetMinutes: offset)
    }

    /// `YYYY-MM-DDTHH:MM:SS` at the start of `bytes` (at least 19 of them) as seconds since the
    /// epoch read as UTC, its ranges checked (years 0001–9999, real days, 00–23, 00–59); the
    /// shape every timestamp parser here begins with.
    static func localSeconds(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let y1 = two(bytes, 0), let y2 = two(bytes, 2), let month = two(bytes, 5), let day = two(bytes, 8),
              let hour = two(bytes, 11), let minute = two(bytes, 14), let second = two(bytes, 17)
        else { return nil }
        let year = y1 * 100 + y2
        guard year >= 1, month >= 1, month <= 12, day >= 1, day <= CivilDate.daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }
        return Int64(CivilDate.daysFromCivil(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The digit at `k`, or nil.
    @inline(__always) static func digit(_ bytes: UnsafeBufferPointer<UInt8>, _ k: Int) -> Int? {
        let d = bytes[k] &- UInt8(ascii: "0")
        return d < 10 ? Int(d) : nil
    }

    /// The two digits at `k` as a number, or nil.
    @inline(__always) static func two(_ bytes: UnsafeBufferPointer<UInt8>, _ k: Int) -> Int? {
        guard let a = digit(bytes, k), let b = digit(bytes, k + 1) else { return nil }
        return a * 10 + b
    }
}
