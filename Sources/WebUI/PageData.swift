/// What the days page shows for one person and period, read from the `health` views by
/// `PageReader` and drawn by `DaysPage`. Plain values: nothing here touches the database.
struct PageData: Sendable {
    /// Whose page it is.
    var person: String
    /// The person's IANA time zone; nil when none is set (times are then shown in UTC).
    var timeZone: String?
    /// The person's today (`health.today`): partial, drawn as such.
    var today: LocalDay
    /// The period shown, oldest first; the last is today, or the newest day holding a sample
    /// when that is later (a sample written in a zone ahead of the rule's "today").
    var days: [LocalDay]
    /// `health.freshness`; nil before the first batch.
    var freshness: Freshness? = nil
    /// `health.daily_summary` rows of the period, by day; a day with no row had no data.
    var summary: [LocalDay: DaySummary] = [:]
    /// `health.daily_totals` of the charted totals, by day and metric.
    var winners: [LocalDay: [String: Winner]] = [:]
    /// `health.daily_sleep`, by day of waking.
    var sleep: [LocalDay: SleepNight] = [:]
    /// `health.workouts` of the period, newest first.
    var workouts: [WorkoutRow] = []
    /// `health.daily_healthkit_check` of the charted totals, by day and metric.
    var healthKit: [LocalDay: [String: HealthKitCheck]] = [:]
    /// What the views leave out, and why (all time).
    var leftOut = LeftOut()
    /// The names shown for the person's sources that have one (`health.sources`), by identifier.
    var sourceNames: [String: String] = [:]

    /// The timestamps' zone as shown beside them.
    var zoneLabel: String { timeZone ?? "UTC" }
}

/// `health.freshness` for the person, times already in the person's zone.
struct Freshness: Sendable {
    var lastReceivedAt: String
    var newestSampleEndAt: String?
    var hoursSinceLastBatch: Double
    var staleAfterHours: Double
    var isStale: Bool
    var hint: String?
}

/// One `health.daily_summary` row: the charted columns.
struct DaySummary: Sendable {
    var isPartial: Bool
    var steps: Double?
    var distanceMeters: Double?
    var activeEnergyKcal: Double?
    var exerciseMinutes: Double?
    var sleepMinutes: Double?
    var restingHeartRate: Double?
    var hrvMilliseconds: Double?
    var bodyMassKg: Double?
    var workouts: Double?
    var workoutSeconds: Double?
}

/// The day's value of a per-source metric: the winning source, and the others with their totals.
struct Winner: Sendable {
    var source: String
    var value: Double
    var alternatives: [(source: String, value: Double)]
}

/// One night of `health.daily_sleep` (the winning source's minutes).
struct SleepNight: Sendable {
    var source: String
    /// Minutes asleep; nil for a night with only time in bed (no source recorded sleep).
    var asleep: Double?
    var core: Double
    var deep: Double
    var rem: Double
    var unspecified: Double
    var awake: Double
    var inBed: Double
}

/// One `health.workouts` row as the list shows it.
struct WorkoutRow: Sendable {
    var uuid: String
    var day: LocalDay
    var startTime: String
    var name: String
    var durationSeconds: Double?
    var distanceMeters: Double?
    var energyKcal: Double?
    var source: String
    var overlapping: Int
    var origin: String
    var heartRateMin: Double?
    var heartRateMean: Double?
    var heartRateMax: Double?
    var routePoints: Int?
}

/// One `health.daily_healthkit_check` row.
struct HealthKitCheck: Sendable {
    var ours: Double
    var healthKit: Double
}

/// Counts of samples the views do not count, and why.
struct LeftOut: Sendable {
    /// Coalescings (`health.coalesced_samples`, `counted = false`), by type.
    var coalesced: [(type: String, count: Int)] = []
    /// `health.quarantine`, by reason (the most frequent first).
    var quarantined: [(reason: String, count: Int)] = []
    /// `health.deleted_samples`, by type; nil while that view does not exist.
    var deleted: [(type: String, count: Int)]?
    /// Samples of types this version does not know (`health.unknown_types`): kept, not charted.
    var unknown: [(type: String, count: Int)] = []
}
