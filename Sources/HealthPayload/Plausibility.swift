import Civil
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which values a real measurement can take: `> 0 and < 400`, `≥ 0`, `0 to 1`.
public struct PlausibleRange: Sendable, Equatable, CustomStringConvertible {
    /// The lowest value, and whether it is itself plausible.
    public var lower: Double
    public var lowerIncluded: Bool
    /// The highest value (nil: none), and whether it is itself plausible.
    public var upper: Double?
    public var upperIncluded: Bool

    /// Zero or more: counts, distances, energy, durations.
    public static let nonNegative = PlausibleRange(lower: 0, lowerIncluded: true, upper: nil, upperIncluded: false)
    /// More than zero: a body mass, a height, a blood pressure.
    public static let positive = PlausibleRange(lower: 0, lowerIncluded: false, upper: nil, upperIncluded: false)
    /// A fraction, 0 to 1 (the catalog keeps `%` types as fractions).
    public static let fraction = PlausibleRange(lower: 0, lowerIncluded: true, upper: 1, upperIncluded: true)
    /// A heart rate in beats per minute: more than 0 and less than 400.
    public static let heartRate = PlausibleRange(lower: 0, lowerIncluded: false, upper: 400, upperIncluded: false)

    /// True when `value` lies in the range.
    public func contains(_ value: Double) -> Bool {
        guard lowerIncluded ? value >= lower : value > lower else { return false }
        guard let upper else { return true }
        return upperIncluded ? value <= upper : value < upper
    }

    /// The range as a reason words it: `> 0 and < 400`, `≥ 0`, `0 to 1`.
    public var description: String {
        let low = (lowerIncluded ? "≥ " : "> ") + Self.number(lower)
        guard let upper else { return low }
        if lowerIncluded && upperIncluded { return Self.number(lower) + " to " + Self.number(upper) }
        return low + " and " + (upperIncluded ? "≤ " : "< ") + Self.number(upper)
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// The plausibility bounds of every way in (healthd and Health Auto Export quarantine, Stridee
/// refuses with 400, the Health app's export quarantines): one table, here.
///
/// Its home is Swift rather than columns of `health_store.catalog` because the decision is the
/// decoders' (HealthPayload is pure and decides before any database is reached: a healthd
/// sample is quarantined, a Stridee body refused with `400`, an export record quarantined), and
/// all three read the same rows. Values are in the catalog's units (`count/min`, `m`, `kg`,
/// `fraction`…); a type without a row has no bound on its value. Every sample's instants lie
/// between 1970-01-01 and the end of the day after tomorrow (UTC): a later clock is wrong.
public enum Plausibility {
    /// The plausible `value` of each catalog type that has a bound, in the catalog's unit.
    public static let values: [(type: String, range: PlausibleRange)] = [
        ("HKQuantityTypeIdentifierStepCount", .nonNegative),
        ("HKQuantityTypeIdentifierDistanceWalkingRunning", .nonNegative),
        ("HKQuantityTypeIdentifierFlightsClimbed", .nonNegative),
        ("HKQuantityTypeIdentifierActiveEnergyBurned", .nonNegative),
        ("HKQuantityTypeIdentifierBasalEnergyBurned", .nonNegative),
        ("HKQuantityTypeIdentifierAppleExerciseTime", .nonNegative),
        ("HKQuantityTypeIdentifierAppleStandTime", .nonNegative),
        ("HKQuantityTypeIdentifierHeartRate", .heartRate),
        ("HKQuantityTypeIdentifierRestingHeartRate", .heartRate),
        ("HKQuantityTypeIdentifierWalkingHeartRateAverage", .heartRate),
        ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", .nonNegative),
        ("HKQuantityTypeIdentifierBodyMass", .positive),
        ("HKQuantityTypeIdentifierHeight", .positive),
        ("HKQuantityTypeIdentifierBodyMassIndex", .positive),
        ("HKQuantityTypeIdentifierBodyFatPercentage", .fraction),
        ("HKQuantityTypeIdentifierOxygenSaturation", .fraction),
        ("HKQuantityTypeIdentifierRespiratoryRate", .nonNegative),
        ("HKQuantityTypeIdentifierVO2Max", .positive),
        ("HKQuantityTypeIdentifierBloodPressureSystolic", .positive),
        ("HKQuantityTypeIdentifierBloodPressureDiastolic", .positive),
    ]

    /// `durationSeconds`, `distanceMeters` and `activeEnergyKilocalories` of any sample, and a
    /// Stridee workout's `duration`, `totalDistanceMeters` and `totalEnergyKcal`.
    public static let workoutTotals = PlausibleRange.nonNegative
    /// Power (W) and cadence (rpm) streams of a Stridee workout.
    public static let powerAndCadence = PlausibleRange.nonNegative

    /// The range of a type's value, or nil when it has none.
    public static func range(of type: String) -> PlausibleRange? {
        table.index(of: type).map { values[$0].range }
    }

    /// The range of the type whose identifier is `b[range]` (no allocation), or nil.
    static func range(of b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> PlausibleRange? {
        table.index(of: b, range).map { values[$0].range }
    }

    private static let table = KeyTable(values.map(\.type))

    /// `value 450 is outside the plausible range of TYPE: > 0 and < 400`, or nil when plausible.
    public static func valueReason(_ what: String, _ value: Double, _ range: PlausibleRange, of type: String? = nil) -> String? {
        guard !range.contains(value) else { return nil }
        let subject = type.map { "the plausible range of \($0)" } ?? "its plausible range"
        return "\(what) \(number(value)) is outside \(subject): \(range)"
    }

    // MARK: Instants

    /// The earliest plausible instant: 1970-01-01T00:00:00Z, in milliseconds since then.
    public static let earliestMilliseconds: Int64 = 0

    /// The first instant after the day after tomorrow (UTC) of `nowMilliseconds`: every later
    /// one is implausible.
    public static func latestMilliseconds(now nowMilliseconds: Int64) -> Int64 {
        (CivilDate.floorDivide(nowMilliseconds, 86_400_000) + 3) * 86_400_000
    }

    /// The wall clock, in milliseconds since 1970-01-01T00:00:00Z.
    public static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// `is before 1970-01-01` or `is after the day after tomorrow (2026-12-04 UTC)`, or nil for
    /// an instant (milliseconds since the epoch) in between.
    public static func instantReason(milliseconds: Int64, latest: Int64) -> String? {
        if milliseconds < earliestMilliseconds { return "is before 1970-01-01" }
        if milliseconds >= latest { return "is after the day after tomorrow (\(dayText(latest - 1)) UTC)" }
        return nil
    }

    /// `end is before start` (in `what`'s words) when a span ends before it starts, or nil: an
    /// instantaneous reading ends at its start, and no sample ends before it.
    public static func spanReason(start: Int64, end: Int64, _ what: (start: String, end: String) = ("start", "end")) -> String? {
        end < start ? "\(what.end) is before \(what.start)" : nil
    }

    /// `instantReason` of microseconds since the epoch.
    public static func instantReason(microseconds: Int64, latest: Int64) -> String? {
        instantReason(milliseconds: CivilDate.floorDivide(microseconds, 1000), latest: latest)
    }

    /// `YYYY-MM-DD` of an instant in UTC.
    static func dayText(_ milliseconds: Int64) -> String {
        CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(milliseconds, 86_400_000))).description
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }
}
