import Civil
/// Europe/Berlin's UTC offset by the EU rule: +01:00, and +02:00 from 01:00 UTC on the last
/// Sunday of March to 01:00 UTC on the last Sunday of October (the rule since 1996).
///
/// Computed here rather than read from tzdata so that generated bodies are the same bytes on
/// every machine.
public enum CentralEuropeanTime {
    /// The offset in minutes (60 or 120) at an instant.
    public static func offsetMinutes(atMilliseconds ms: Int64) -> Int {
        let day = CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(ms, 86_400_000)))
        let year = day.components.year
        let start = Int64(lastSunday(year: year, month: 3).daysSinceEpoch) * 86_400_000 + 3_600_000
        let end = Int64(lastSunday(year: year, month: 10).daysSinceEpoch) * 86_400_000 + 3_600_000
        return ms >= start && ms < end ? 120 : 60
    }

    /// The instant of a local wall-clock time on `date` (`minutes` after local midnight, may run past 24 h).
    /// Wall times in the skipped or repeated DST hour resolve to the offset in force at noon that day.
    public static func instant(_ date: CivilDate, minutes: Double) -> Int64 {
        let noonUTC = Int64(date.daysSinceEpoch) * 86_400_000 + 12 * 3_600_000
        let offset = offsetMinutes(atMilliseconds: noonUTC)
        let local = Int64(date.daysSinceEpoch) * 86_400_000 + Int64((minutes * 60_000).rounded())
        return local - Int64(offset) * 60_000
    }

    /// The local calendar date of an instant.
    public static func localDate(atMilliseconds ms: Int64) -> CivilDate {
        let local = ms + Int64(offsetMinutes(atMilliseconds: ms)) * 60_000
        return CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(local, 86_400_000)))
    }

    static func lastSunday(year: Int, month: Int) -> CivilDate {
        let last = CivilDate(year: year, month: month, day: CivilDate.daysInMonth(year: year, month: month))!
        return last.adding(days: -((last.weekday + 1) % 7))
    }
}


/// The reference's timestamp shape: `2026-08-21T10:25:30.000+02:00`, three fractional digits and
/// the written offset.
public enum DemoTimestamp {
    /// `ms` since the epoch written in the local time of `offsetMinutes`.
    public static func text(_ ms: Int64, offsetMinutes: Int) -> String {
        let local = ms + Int64(offsetMinutes) * 60_000
        let days = CivilDate.floorDivide(local, 86_400_000)
        let inDay = Int(local - days * 86_400_000)
        let (y, m, d) = CivilDate(daysSinceEpoch: Int(days)).components
        let h = inDay / 3_600_000, mi = inDay / 60_000 % 60, s = inDay / 1000 % 60, f = inDay % 1000
        let sign = offsetMinutes < 0 ? "-" : "+"
        let o = abs(offsetMinutes)
        return CivilDate.digits(y, 4) + "-" + CivilDate.digits(m, 2) + "-" + CivilDate.digits(d, 2) + "T" + CivilDate.digits(h, 2) + ":" + CivilDate.digits(mi, 2) + ":" + CivilDate.digits(s, 2)
            + "." + CivilDate.digits(f, 3) + (offsetMinutes == 0 ? "Z" : sign + CivilDate.digits(o / 60, 2) + ":" + CivilDate.digits(o % 60, 2))
    }
}
