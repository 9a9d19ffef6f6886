/// A `healthkit.v1` workout's discipline: the seed's 13 `serverType` values ("Body parameters").
public enum StrideeServerType: String, CaseIterable, Sendable {
    case running = "RUNNING"
    case cycling = "CYCLING"
    case swimming = "SWIMMING"
    case walking = "WALKING"
    case hiking = "HIKING"
    case rowing = "ROWING"
    case crossCountrySkiing = "CROSS_COUNTRY_SKIING"
    case alpineSkiing = "ALPINE_SKIING"
    case snowboarding = "SNOWBOARDING"
    case paddling = "PADDLING"
    case rockClimbing = "ROCK_CLIMBING"
    case training = "TRAINING"
    case generic = "GENERIC"

    /// Lookup by bytes, in `allCases` order.
    static let table = KeyTable(allCases.map(\.rawValue))
}
