/// A Health Auto Export metric the warehouse knows: the catalog type its points become, with
/// the type's group and unit (what `health_store.catalog` says of it; a test holds the two
/// together), and how its points are shaped.
struct HAEMetric: Sendable {
    /// How a metric's points are written.
    enum Shape: Sendable {
        /// `{date, qty}`.
        case quantity
        /// `{date, Min, Avg, Max}` (or `qty`): the sample's value is `Avg`, its extremes `Min` and `Max`.
        case heartRate
        /// `{date, systolic, diastolic}`: two samples.
        case bloodPressure
        /// Segments `{startDate, endDate, value}`, or one summary a night.
        case sleep
    }

    /// The catalog type (for blood pressure, the systolic one).
    var type: String
    var group: String
    /// The catalog's unit; nil for sleep.
    var unit: String?
    var shape: Shape

    /// Every metric name of the app that becomes a catalog type (CONTRACT.md §9's table); any
    /// other name is kept as type `hae:NAME`.
    static let known: [String: HAEMetric] = {
        func q(_ type: String, _ group: String, _ unit: String, _ shape: Shape = .quantity) -> HAEMetric {
            HAEMetric(type: "HKQuantityTypeIdentifier" + type, group: group, unit: unit, shape: shape)
        }
        return [
            "step_count": q("StepCount", "activity", "count"),
            "walking_running_distance": q("DistanceWalkingRunning", "activity", "m"),
            "flights_climbed": q("FlightsClimbed", "activity", "count"),
            "active_energy": q("ActiveEnergyBurned", "activity", "kcal"),
            "basal_energy_burned": q("BasalEnergyBurned", "activity", "kcal"),
            "apple_exercise_time": q("AppleExerciseTime", "activity", "min"),
            "apple_stand_time": q("AppleStandTime", "activity", "min"),
            "heart_rate": q("HeartRate", "heart", "count/min", .heartRate),
            "resting_heart_rate": q("RestingHeartRate", "heart", "count/min"),
            "walking_heart_rate_average": q("WalkingHeartRateAverage", "heart", "count/min"),
            "heart_rate_variability": q("HeartRateVariabilitySDNN", "heart", "ms"),
            "heart_rate_variability_sdnn": q("HeartRateVariabilitySDNN", "heart", "ms"),
            "weight_body_mass": q("BodyMass", "body", "kg"),
            "height": q("Height", "body", "m"),
            "body_mass_index": q("BodyMassIndex", "body", "count"),
            "body_fat_percentage": q("BodyFatPercentage", "body", "fraction"),
            "lean_body_mass": q("LeanBodyMass", "body", "kg"),
            "blood_oxygen_saturation": q("OxygenSaturation", "vitals", "fraction"),
            "respiratory_rate": q("RespiratoryRate", "vitals", "count/min"),
            "vo2_max": q("VO2Max", "vitals", "ml/(kg*min)"),
            "body_temperature": q("BodyTemperature", "vitals", "degC"),
            "blood_pressure": q("BloodPressureSystolic", "vitals", "mmHg", .bloodPressure),
            "sleep_analysis": HAEMetric(type: sleepType, group: "sleep", unit: nil, shape: .sleep),
        ]
    }()

    static let sleepType = "HKCategoryTypeIdentifierSleepAnalysis"
    static let diastolicType = "HKQuantityTypeIdentifierBloodPressureDiastolic"
    static let workoutType = "HKWorkoutTypeIdentifier"

    /// Sleep stages: the value healthd sends, its name there, and how the app writes it in a
    /// segment (`In Bed`, `Asleep`, …) and in a night's summary (`inBed`, `core`, …).
    static let stages: [(value: Int, name: String, segment: [String], night: String?)] = [
        (0, "inBed", ["In Bed", "InBed"], "inBed"),
        (1, "asleepUnspecified", ["Asleep", "Unspecified", "Asleep (Unspecified)"], nil),
        (2, "awake", ["Awake"], "awake"),
        (3, "asleepCore", ["Core"], "core"),
        (4, "asleepDeep", ["Deep"], "deep"),
        (5, "asleepREM", ["REM", "Rem"], "rem"),
    ]

    /// The stage a segment's `value` names (any case), or nil.
    static func stage(segment text: String) -> Int? {
        let lower = text.lowercased()
        return stages.first { $0.segment.contains { $0.lowercased() == lower } }?.value
    }
}
