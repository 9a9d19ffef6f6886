import Civil

/// Timestamps written as ISO 8601 in the Stridee formats: `2026-10-01T06:02:11Z`,
/// `2026-10-01T08:02:11.250+02:00` or `2026-10-01T08:02:11+0200`.
///
/// A `T` between date and time; fractional seconds optional, any number of digits, rounded to
/// the microsecond (as PostgreSQL rounds); then `Z`, `±hh:mm` or `±hhmm`. Ranges as PostgreSQL
/// takes them: year 0001–9999 (no year 0), real days of the month, hour 00–23, minute and second
/// 00–59, offset at most ±15:59 (`MAX_TZDISP_HOUR` in PostgreSQL's datetime.c). Hand-rolled:
/// a body may carry 40k stamps and `ISO8601DateFormatter` costs ~37 µs each (ARCHITECTURE.md).
extension Timestamp: CustomStringConvertible {
    /// Parses ISO 8601 text; nil when it is not a timestamp of the accepted shapes.
    public init?(iso8601 text: some StringProtocol) {
        var copy = String(text)
        guard let parsed = copy.withUTF8({ Timestamp(iso8601UTF8: $0) }) else { return nil }
        self = parsed
    }

    /// Parses ISO 8601 as UTF-8 bytes; nil when they are not a timestamp of the accepted shapes.
    public init?(iso8601UTF8 bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        // The shortest form: 2026-10-01T06:02:11Z.
        guard n >= 20, let local = Timestamp.localSeconds(bytes) else { return nil }
        func digit(_ k: Int) -> Int? { Timestamp.digit(bytes, k) }
        func two(_ k: Int) -> Int? { Timestamp.two(bytes, k) }

        var i = 19
        var micros: Int64 = 0
        if bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            var scale: Int64 = 100_000
            var roundUp = false
            while i < n, let d = digit(i) {
                let position = i - fractionStart
                if position < 6 {
                    micros += Int64(d) * scale
                    scale /= 10
                } else if position == 6 {
                    roundUp = d >= 5
                }
                i += 1
            }
            guard i > fractionStart else { return nil }
            if roundUp { micros += 1 }
        }

        guard i < n else { return nil }
        var offset = 0
        let zone = bytes[i]
        if zone == UInt8(ascii: "Z") {
            guard i + 1 == n else { return nil }
        } else if zone == UInt8(ascii: "+") || zone == UInt8(ascii: "-") {
            let rest = n - i - 1
            guard let hours = rest >= 2 ? two(i + 1) : nil, hours <= 15 else { return nil }
            let minutes: Int?
            switch rest {
            case 5 where bytes[i + 3] == UInt8(ascii: ":"): minutes = two(i + 4)
            case 4: minutes = two(i + 3)
            default: minutes = nil
            }
            guard let minutes, minutes <= 59 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (zone == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }

        self.init(microsecondsSinceEpoch: (local - Int64(offset)) * 1_000_000 + micros, offsetSeconds: Int32(offset))
    }

    /// The local calendar date in the written offset, `YYYY-MM-DD`: the day of a workout whose
    /// person has no time zone (docs/stridee.md).
    public var localDate: String {
        let localSeconds = CivilDate.floorDivide(microsecondsSinceEpoch, 1_000_000) + Int64(offsetSeconds)
        return CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(localSeconds, 86_400))).description
    }

    /// The instant in UTC with microseconds, e.g. `2026-10-01T06:02:11.250000Z` (for messages and tests).
    public var description: String {
        let seconds = CivilDate.floorDivide(microsecondsSinceEpoch, 1_000_000)
        let fraction = Int(microsecondsSinceEpoch - seconds * 1_000_000)
        let date = CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(seconds, 86_400)))
        let secondOfDay = Int(seconds - Int64(date.daysSinceEpoch) * 86_400)
        return "\(date)T" + CivilDate.digits(secondOfDay / 3600, 2) + ":" + CivilDate.digits(secondOfDay / 60 % 60, 2) + ":"
            + CivilDate.digits(secondOfDay % 60, 2) + "." + CivilDate.digits(fraction, 6) + "Z"
    }
}
