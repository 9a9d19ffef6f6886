/// The fixed name a request's path is counted under (docs/operations.md): never the raw path,
/// so a scanner's paths cannot grow the metrics without bound.
public enum RouteFamily: String, Sendable, CaseIterable {
    case healthd
    case strideeWorkout = "stridee_workout"
    case strideeWellness = "stridee_wellness"
    case strideeConnection = "stridee_connection"
    case hae
    case stats
    case healthz
    case ui
    case other

    /// The family of a request: the page under `/ui`, Health Auto Export's `/hae`, the Stridee
    /// paths, `GET /healthz` and `GET /stats`, any other `POST` a healthd batch, anything else `other`.
    public static func of(method: String, path: String) -> RouteFamily {
        if path == "/ui" || path.hasPrefix("/ui/") { return .ui }
        if path == Receiver.haePath { return .hae }
        if let route = StrideeRoute.match(path) {
            switch route.endpoint {
            case .workouts: return .strideeWorkout
            case .wellness: return .strideeWellness
            case .connection: return .strideeConnection
            }
        }
        let upper = method.uppercased()
        if upper == "GET" || upper == "HEAD" {
            switch path {
            case "/healthz": return .healthz
            case "/stats": return .stats
            default: return .other
            }
        }
        return upper == "POST" ? .healthd : .other
    }

    /// The `route` label: the fixed names of the ways in the metrics' contract, Health Auto
    /// Export's `/hae` under `other` (its points are counted in a family of their own,
    /// `health_warehouse_hae_samples_total`).
    public var label: String { self == .hae ? RouteFamily.other.rawValue : rawValue }

    /// Whether an answer here that stored nothing is a refusal (the ways in and `/stats`).
    var countsRefusals: Bool {
        switch self {
        case .healthd, .strideeWorkout, .strideeWellness, .strideeConnection, .hae, .stats: return true
        case .healthz, .ui, .other: return false
        }
    }
}

/// The way a sample came in, the `way` label of `health_warehouse_samples_total` (Health Auto
/// Export's in `health_warehouse_hae_samples_total`, by outcome alone).
public enum SampleWay: String, Sendable, CaseIterable {
    case healthdJSON = "healthd_json"
    case healthdCSV = "healthd_csv"
    case strideeWorkout = "stridee_workout"
    case strideeWellness = "stridee_wellness"
    case hae
}

/// What became of a sample, the `outcome` label.
public enum SampleOutcome: String, Sendable, CaseIterable {
    case inserted, duplicate, replaced, quarantined
}

/// Why an answer stored nothing, the `reason` label of `health_warehouse_refusals_total`.
public enum RefusalReason: String, Sendable, CaseIterable {
    case unauthorized, forbidden
    case unsupportedMediaType = "unsupported_media_type"
    case tooLarge = "too_large"
    case badRequest = "bad_request"
    case conflict, database

    /// The reason of a status on a way in; nil for a status that is no refusal (2xx, 404, 405).
    init?(status: Int) {
        switch status {
        case 400: self = .badRequest
        case 401: self = .unauthorized
        case 403, 421: self = .forbidden  // 421: a Host this server does not answer to
        case 409: self = .conflict
        case 413: self = .tooLarge
        case 415: self = .unsupportedMediaType
        case 500, 503: self = .database
        default: return nil
        }
    }
}
