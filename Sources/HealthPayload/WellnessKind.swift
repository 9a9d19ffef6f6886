/// The nine kinds of `healthkit.wellness.v1` item Apple Health sends (the seed's "Wellness" table).
public enum WellnessKind: String, CaseIterable, Sendable {
    case daily
    case sleep
    case hrv
    case fitness
    case respiration
    case pulseOx = "pulse_ox"
    case bodyComposition = "body_composition"
    case bloodPressure = "blood_pressure"
    case skinTemperature = "skin_temperature"

    /// Lookup by bytes, in `allCases` order.
    static let table = KeyTable(allCases.map(\.rawValue))
}
