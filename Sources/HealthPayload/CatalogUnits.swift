/// Converting a value from the unit a way in writes (the user's preferred one: km or mi, lb,
/// °F, kJ, Cal, cm, …) to the unit the catalog keeps the type in: the Health app's export and
/// Health Auto Export both convert through it. Rules as data: one table,
/// `units[catalog unit][written unit]`.
public enum CatalogUnits {
    /// How a written value becomes the catalog's.
    public enum Conversion: Equatable, Sendable {
        /// Multiply by this.
        case scale(Double)
        /// Degrees Fahrenheit to Celsius: (v − 32) × 5 / 9.
        case fahrenheit
        /// Kelvin to Celsius: v − 273.15.
        case kelvin

        /// The value in the catalog's unit.
        public func apply(_ v: Double) -> Double {
            switch self {
            case .scale(let factor): factor == 1 ? v : v * factor
            case .fahrenheit: (v - 32) * 5 / 9
            case .kelvin: v - 273.15
            }
        }
    }

    /// Written units per catalog unit. `%` is how the Health app's export writes a fraction
    /// (0.97): it stays as it is. Health Auto Export writes `%` as 0–100 (`percentIsHundredths`).
    static let units: [String: [String: Conversion]] = [
        "count": ["count": .scale(1)],
        "m": ["m": .scale(1), "km": .scale(1000), "cm": .scale(0.01), "mm": .scale(0.001), "mi": .scale(1609.344),
              "yd": .scale(0.9144), "ft": .scale(0.3048), "in": .scale(0.0254)],
        "kcal": ["kcal": .scale(1), "Cal": .scale(1), "cal": .scale(0.001), "kJ": .scale(1 / 4.184), "J": .scale(1 / 4184)],
        "min": ["min": .scale(1), "s": .scale(1.0 / 60), "hr": .scale(60), "h": .scale(60), "d": .scale(1440)],
        "count/min": ["count/min": .scale(1), "count/s": .scale(60), "count/hr": .scale(1.0 / 60), "bpm": .scale(1)],
        "ms": ["ms": .scale(1), "s": .scale(1000)],
        "kg": ["kg": .scale(1), "g": .scale(0.001), "lb": .scale(0.45359237), "oz": .scale(0.028349523125), "st": .scale(6.35029318)],
        "fraction": ["%": .scale(1), "fraction": .scale(1)],
        "ml/(kg*min)": ["ml/(kg*min)": .scale(1), "mL/(kg*min)": .scale(1), "mL/min·kg": .scale(1), "mL/kg·min": .scale(1),
                        "mL/(kg·min)": .scale(1), "ml/(kg·min)": .scale(1), "ml/kg/min": .scale(1), "mL/kg/min": .scale(1)],
        "degC": ["degC": .scale(1), "degF": .fahrenheit, "K": .kelvin],
        "mmHg": ["mmHg": .scale(1), "cmAq": .scale(0.7355591), "kPa": .scale(7.500615758456563)],
    ]

    /// The conversion of `written` into `catalogUnit`; an empty or absent written unit is taken
    /// to be the catalog's. With `percentIsHundredths`, `%` into `fraction` divides by 100 (Health
    /// Auto Export writes 97 for 0.97). Nil when the warehouse does not know how.
    public static func conversion(from written: String?, to catalogUnit: String, percentIsHundredths: Bool = false) -> Conversion? {
        guard let written, !written.isEmpty, written != catalogUnit else { return .scale(1) }
        if percentIsHundredths && written == "%" && catalogUnit == "fraction" { return .scale(0.01) }
        return units[catalogUnit]?[written]
    }
}

/// Apple's `HKWorkoutActivityType` names (as the export writes them, `HKWorkoutActivityTypeRunning`)
/// and raw values (as healthd sends `activityType`). The names healthd sends are the case names
/// (`running`); 14, 15 and 30 are deprecated and arrive unnamed (reference "kind workout").
public enum WorkoutActivityTypes {
    static let rawValues: [String: Int] = [
        "AmericanFootball": 1, "Archery": 2, "AustralianFootball": 3, "Badminton": 4, "Baseball": 5, "Basketball": 6,
        "Bowling": 7, "Boxing": 8, "Climbing": 9, "Cricket": 10, "CrossTraining": 11, "Curling": 12, "Cycling": 13,
        "Dance": 14, "DanceInspiredTraining": 15, "Elliptical": 16, "EquestrianSports": 17, "Fencing": 18, "Fishing": 19,
        "FunctionalStrengthTraining": 20, "Golf": 21, "Gymnastics": 22, "Handball": 23, "Hiking": 24, "Hockey": 25,
        "Hunting": 26, "Lacrosse": 27, "MartialArts": 28, "MindAndBody": 29, "MixedMetabolicCardioTraining": 30,
        "PaddleSports": 31, "Play": 32, "PreparationAndRecovery": 33, "Racquetball": 34, "Rowing": 35, "Rugby": 36,
        "Running": 37, "Sailing": 38, "SkatingSports": 39, "SnowSports": 40, "Soccer": 41, "Softball": 42, "Squash": 43,
        "StairClimbing": 44, "SurfingSports": 45, "Swimming": 46, "TableTennis": 47, "Tennis": 48, "TrackAndField": 49,
        "TraditionalStrengthTraining": 50, "Volleyball": 51, "Walking": 52, "WaterFitness": 53, "WaterPolo": 54,
        "WaterSports": 55, "Wrestling": 56, "Yoga": 57, "Barre": 58, "CoreTraining": 59, "CrossCountrySkiing": 60,
        "DownhillSkiing": 61, "Flexibility": 62, "HighIntensityIntervalTraining": 63, "JumpRope": 64, "Kickboxing": 65,
        "Pilates": 66, "Snowboarding": 67, "Stairs": 68, "StepTraining": 69, "WheelchairWalkPace": 70,
        "WheelchairRunPace": 71, "TaiChi": 72, "MixedCardio": 73, "HandCycling": 74, "DiscSports": 75, "FitnessGaming": 76,
        "CardioDance": 77, "SocialDance": 78, "Pickleball": 79, "Cooldown": 80, "SwimBikeRun": 82, "Transition": 83,
        "UnderwaterDiving": 84, "Other": 3000,
    ]

    /// Types healthd sends without a name.
    static let unnamed: Set<Int> = [14, 15, 30]

    /// The raw value and healthd's name of an export's `workoutActivityType`. A name this table
    /// does not know is `other` (3000) with the name kept.
    public static func activity(_ written: String) -> (type: Int, name: String?) {
        let bare = written.hasPrefix("HKWorkoutActivityType") ? String(written.dropFirst("HKWorkoutActivityType".count)) : written
        let camel = bare.prefix(1).lowercased() + bare.dropFirst()
        guard let raw = rawValues[bare] else { return (3000, camel.isEmpty ? nil : camel) }
        return (raw, unnamed.contains(raw) ? nil : camel)
    }
}
