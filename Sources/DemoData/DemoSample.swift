import Civil
import Hashing

/// One Apple Health sample, before it is written in a body: what the simulator generates, and
/// what tests and benchmarks build by hand (`DemoEncoder` writes it in the reference's shapes).
///
/// Numbers are kept as their text on the wire (shortest form, no decimal point on a whole
/// number) so JSON and CSV spell them the same way, and a test can write any literal
/// (`1e308`, `-0.0`). Instants are milliseconds since the epoch; a body writes them in the
/// offset of the phone at export time, or in the sample's own `offsetMinutes`.
public struct DemoSample: Sendable {
    /// Apple Health's identifier: uppercase UUID, the deduplication key.
    public var uuid: String
    /// SHA-256 of the content (type, start, end, value), 64 lowercase hex characters, unless given.
    public var id: String
    /// The type's catalog entry.
    public var type: DemoType
    /// The recording app or device's bundle identifier.
    public var source: String
    /// When the reading began, ms since the epoch.
    public var start: Int64
    /// When it ended (equal to `start` for an instantaneous reading).
    public var end: Int64
    /// When it reached Health on the phone, so which export run can see it.
    public var written: Int64
    /// Quantity or category value, as written.
    public var value: String?
    /// Category name, absent for a value this build does not know.
    public var name: String?
    /// Workout fields: absent where the app sends no key.
    public var activityType: Int?
    public var activityName: String?
    public var durationSeconds: String?
    public var distanceMeters: String?
    public var activeEnergyKilocalories: String?
    /// The UTC offset its `start` and `end` are written in (minutes east); nil: the body's.
    public var offsetMinutes: Int?

    /// A sample; `id` defaults to the content fingerprint, `written` to `end`.
    public init(uuid: String, type: DemoType, source: String, start: Int64, end: Int64, written: Int64? = nil, value: String? = nil,
                name: String? = nil, activityType: Int? = nil, activityName: String? = nil, durationSeconds: String? = nil,
                distanceMeters: String? = nil, activeEnergyKilocalories: String? = nil, id: String? = nil, offsetMinutes: Int? = nil) {
        self.uuid = uuid
        self.type = type
        self.source = source
        self.start = start
        self.end = end
        self.written = written ?? end
        self.value = value
        self.name = name
        self.activityType = activityType
        self.activityName = activityName
        self.durationSeconds = durationSeconds
        self.distanceMeters = distanceMeters
        self.activeEnergyKilocalories = activeEnergyKilocalories
        self.offsetMinutes = offsetMinutes
        self.id = ""
        self.id = id ?? Self.fingerprint(self)
    }

    /// The content fingerprint healthd sends as `id`: equal content, equal id, across uuids.
    static func fingerprint(_ s: DemoSample) -> String {
        let content = [s.type.identifier, String(s.start), String(s.end), s.value ?? "", s.name ?? "",
                       s.activityType.map(String.init) ?? "", s.durationSeconds ?? "", s.distanceMeters ?? "",
                       s.activeEnergyKilocalories ?? ""].joined(separator: "|")
        return SHA256.hexString(SHA256.hash(Array(content.utf8)))
    }
}

/// The sample types the demo writes, from the reference's catalog.
public struct DemoType: Sendable, Hashable {
    /// Apple's type identifier.
    public var identifier: String
    /// The group the user enables.
    public var group: String
    /// `quantity`, `category` or `workout`.
    public var kind: String
    /// The unit of a quantity.
    public var unit: String?
    /// Position in the catalog: a batch is grouped by type in this order.
    public var order: Int

    /// A type; `order` places it in a batch (types of the demo's catalog first).
    public init(identifier: String, group: String, kind: String, unit: String? = nil, order: Int = 100) {
        self.identifier = identifier
        self.group = group
        self.kind = kind
        self.unit = unit
        self.order = order
    }

    static func quantity(_ name: String, _ group: String, _ unit: String, _ order: Int) -> DemoType {
        DemoType(identifier: "HKQuantityTypeIdentifier" + name, group: group, kind: "quantity", unit: unit, order: order)
    }

    /// `HKQuantityTypeIdentifierStepCount`.
    public static let steps = quantity("StepCount", "activity", "count", 1)
    /// `HKQuantityTypeIdentifierDistanceWalkingRunning`.
    public static let distance = quantity("DistanceWalkingRunning", "activity", "m", 2)
    /// `HKQuantityTypeIdentifierFlightsClimbed`.
    public static let flights = quantity("FlightsClimbed", "activity", "count", 3)
    /// `HKQuantityTypeIdentifierActiveEnergyBurned`.
    public static let activeEnergy = quantity("ActiveEnergyBurned", "activity", "kcal", 4)
    /// `HKQuantityTypeIdentifierBasalEnergyBurned`.
    public static let basalEnergy = quantity("BasalEnergyBurned", "activity", "kcal", 5)
    /// `HKQuantityTypeIdentifierAppleExerciseTime`.
    public static let exercise = quantity("AppleExerciseTime", "activity", "min", 6)
    /// `HKQuantityTypeIdentifierAppleStandTime`.
    public static let stand = quantity("AppleStandTime", "activity", "min", 7)
    /// `HKQuantityTypeIdentifierHeartRate`.
    public static let heartRate = quantity("HeartRate", "heart", "count/min", 8)
    /// `HKQuantityTypeIdentifierRestingHeartRate`.
    public static let restingHeartRate = quantity("RestingHeartRate", "heart", "count/min", 9)
    /// `HKQuantityTypeIdentifierWalkingHeartRateAverage`.
    public static let walkingHeartRate = quantity("WalkingHeartRateAverage", "heart", "count/min", 10)
    /// `HKQuantityTypeIdentifierHeartRateVariabilitySDNN`.
    public static let hrv = quantity("HeartRateVariabilitySDNN", "heart", "ms", 11)
    /// `HKQuantityTypeIdentifierBodyMass`.
    public static let bodyMass = quantity("BodyMass", "body", "kg", 12)
    /// `HKQuantityTypeIdentifierHeight`.
    public static let height = quantity("Height", "body", "m", 13)
    /// `HKQuantityTypeIdentifierBodyMassIndex`.
    public static let bmi = quantity("BodyMassIndex", "body", "count", 14)
    /// `HKQuantityTypeIdentifierBodyFatPercentage`.
    public static let bodyFat = quantity("BodyFatPercentage", "body", "fraction", 15)
    /// `HKQuantityTypeIdentifierLeanBodyMass`.
    public static let leanMass = quantity("LeanBodyMass", "body", "kg", 16)
    /// `HKCategoryTypeIdentifierSleepAnalysis`.
    public static let sleep = DemoType(identifier: "HKCategoryTypeIdentifierSleepAnalysis", group: "sleep", kind: "category", unit: nil, order: 17)
    /// `HKQuantityTypeIdentifierOxygenSaturation`.
    public static let oxygen = quantity("OxygenSaturation", "vitals", "fraction", 18)
    /// `HKQuantityTypeIdentifierRespiratoryRate`.
    public static let respiratoryRate = quantity("RespiratoryRate", "vitals", "count/min", 19)
    /// `HKQuantityTypeIdentifierVO2Max`.
    public static let vo2Max = quantity("VO2Max", "vitals", "ml/(kg*min)", 20)
    /// `HKQuantityTypeIdentifierBodyTemperature`.
    public static let bodyTemperature = quantity("BodyTemperature", "vitals", "degC", 21)
    /// `HKQuantityTypeIdentifierBloodPressureSystolic`.
    public static let systolic = quantity("BloodPressureSystolic", "vitals", "mmHg", 22)
    /// `HKQuantityTypeIdentifierBloodPressureDiastolic`.
    public static let diastolic = quantity("BloodPressureDiastolic", "vitals", "mmHg", 23)
    /// `HKWorkoutTypeIdentifier`.
    public static let workout = DemoType(identifier: "HKWorkoutTypeIdentifier", group: "workouts", kind: "workout", unit: nil, order: 24)
}

/// Numbers as healthd spells them: shortest form, `.` separator, no decimal point on a whole
/// number, no exponent for the magnitudes a body carries.
public enum DemoNumber {
    /// `value` rounded to `decimals` places, trailing zeros dropped (`72.50` → `72.5`, `72.0` → `72`).
    public static func text(_ value: Double, decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * Double(scale)).rounded())
        let whole = scaled / scale
        var fraction = scaled % scale
        var digits = decimals
        while digits > 0 && fraction % 10 == 0 && fraction != 0 {
            fraction /= 10
            digits -= 1
        }
        let sign = value < 0 && scaled != 0 ? "-" : ""
        if fraction == 0 { return sign + String(whole) }
        return sign + String(whole) + "." + CivilDate.digits(Int(fraction), digits)
    }
}
