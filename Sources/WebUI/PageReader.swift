import Postgres
import Warehouse

/// Reads what a page shows from the `health` views, on a connection of the reader pool
/// (role `health_reader`, read-only). Every statement filters by the person as a `$1`
/// parameter; nothing is ever spliced into SQL.
struct PageReader {
    let connection: PostgresConnection

    /// The metrics of `health.daily_totals` the page charts, in the order it shows them.
    static let totals = ["steps", "distance_m", "active_energy_kcal", "exercise_min", "sleep_min"]

    /// Everything the days page shows for `person` over the `dayCount` days up to the last day
    /// (today, or the newest day holding a sample when that is later), read in one read-only
    /// snapshot so the parts agree with each other, in eight statements (each a round trip: on
    /// a busy machine those cost more than the reading).
    func daysPage(person: String, dayCount: Int) throws -> PageData {
        try snapshot {
            let context = try self.context(person: person)
            let last = max(context.today, context.newestDay ?? context.today)
            let first = last.adding(1 - dayCount)
            var page = PageData(person: person, timeZone: context.timeZone, today: context.today,
                                days: (0..<dayCount).map { first.adding($0) }, freshness: context.freshness)
            let range: [(any PostgresBindable)?] = [person, first.text, last.text]
            (page.summary, page.sleep) = try days(range)
            page.winners = try winners(range)
            page.workouts = try workouts(range, timeZone: page.timeZone)
            page.healthKit = try healthKit(range)
            page.leftOut = try leftOut(person: person)
            page.sourceNames = try sourceNames(person: person)
            return page
        }
    }

    /// Runs `body` inside one read-only snapshot as `health_reader` (`readingViews`, the one
    /// way the views are read).
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        try connection.readingViews(body)
    }

    /// The person's today, the newest day holding any of their samples, their time zone and
    /// freshness (times in that zone, UTC without one).
    ///
    /// `health.today` reads a table, so it is called in a statement of its own: inside a query
    /// over the person's tables a Citus worker would have to run a distributed query from a
    /// shard, which it cannot (docs/scaling.md).
    func context(person: String) throws -> (today: LocalDay, newestDay: LocalDay?, timeZone: String?, freshness: Freshness?) {
        guard let text = try connection.query("SELECT health.today($1)::text", [person]).first?[0], let today = LocalDay(text) else {
            throw PostgresError(kind: .decoding, message: "health.today gave no date")
        }
        let row = try connection.query("""
            WITH p AS (SELECT $1::text AS person,
                              (SELECT s.time_zone FROM health.settings s WHERE s.person = $1) AS time_zone,
                              (SELECT max(d.day) FROM health.daily_summary d WHERE d.person = $1) AS newest_day)
            SELECT p.newest_day::text, p.time_zone,
                   to_char(f.last_received_at AT TIME ZONE coalesce(p.time_zone, 'UTC'), 'YYYY-MM-DD HH24:MI'),
                   to_char(f.newest_sample_end_at AT TIME ZONE coalesce(p.time_zone, 'UTC'), 'YYYY-MM-DD HH24:MI'),
                   f.hours_since_last_batch, extract(epoch FROM f.stale_after)::float8 / 3600, f.is_stale, f.hint
            FROM p LEFT JOIN health.freshness f ON f.person = p.person
            """, [person]).first
        var freshness: Freshness?
        if let row, let received: String = try row.decodeIfPresent(2) {
            freshness = Freshness(lastReceivedAt: received, newestSampleEndAt: try row.decodeIfPresent(3),
                                  hoursSinceLastBatch: try row.decode(4), staleAfterHours: try row.decode(5),
                                  isStale: try row.decode(6), hint: try row.decodeIfPresent(7))
        }
        return (today, row?[0].flatMap { LocalDay($0) }, row?[1], freshness)
    }

    /// `health.daily_summary` of the period, each day with its night of `health.daily_sleep`.
    func days(_ range: [(any PostgresBindable)?]) throws -> ([LocalDay: DaySummary], [LocalDay: SleepNight]) {
        var summary: [LocalDay: DaySummary] = [:], sleep: [LocalDay: SleepNight] = [:]
        for row in try connection.query("""
            SELECT d.day::text, d.is_partial, d.steps, d.distance_m, d.active_energy_kcal, d.exercise_min, d.sleep_min,
                   d.resting_heart_rate, d.hrv_sdnn_ms, d.body_mass_kg, d.workouts, d.workout_duration_s,
                   s.source, s.asleep_min, s.core_min, s.deep_min, s.rem_min, s.unspecified_min, s.awake_min, s.in_bed_min
            FROM health.daily_summary d
            LEFT JOIN health.daily_sleep s ON s.person = d.person AND s.day = d.day
            WHERE d.person = $1 AND d.day BETWEEN $2::date AND $3::date
            """, range) {
            guard let day = LocalDay(try row.decode(0)) else { continue }
            summary[day] = DaySummary(
                isPartial: try row.decode(1), steps: try row.decodeIfPresent(2), distanceMeters: try row.decodeIfPresent(3),
                activeEnergyKcal: try row.decodeIfPresent(4), exerciseMinutes: try row.decodeIfPresent(5),
                sleepMinutes: try row.decodeIfPresent(6), restingHeartRate: try row.decodeIfPresent(7),
                hrvMilliseconds: try row.decodeIfPresent(8), bodyMassKg: try row.decodeIfPresent(9),
                workouts: try row.decodeIfPresent(10), workoutSeconds: try row.decodeIfPresent(11))
            if let source: String = try row.decodeIfPresent(12) {
                sleep[day] = SleepNight(source: source, asleep: try row.decodeIfPresent(13), core: try row.decode(14), deep: try row.decode(15),
                                        rem: try row.decode(16), unspecified: try row.decode(17), awake: try row.decode(18),
                                        inBed: try row.decode(19))
            }
        }
        return (summary, sleep)
    }

    /// The winner and the alternatives of each charted total: one row per alternative (or one
    /// with none); the alternatives end up largest first.
    func winners(_ range: [(any PostgresBindable)?]) throws -> [LocalDay: [String: Winner]] {
        var out: [LocalDay: [String: Winner]] = [:]
        for row in try connection.query("""
            SELECT t.day::text, t.metric, t.source, t.value, a.key, a.value::float8
            FROM health.daily_totals t
            LEFT JOIN LATERAL jsonb_each_text(t.alternatives) a ON true
            WHERE t.person = $1 AND t.day BETWEEN $2::date AND $3::date AND t.metric = ANY($4)
            """, range + [PostgresArrayParameter.text(Self.totals)]) {
            guard let day = LocalDay(try row.decode(0)) else { continue }
            let metric: String = try row.decode(1)
            var winner: Winner
            if let held = out[day]?[metric] {
                winner = held
            } else {
                winner = Winner(source: try row.decode(2), value: try row.decode(3), alternatives: [])
            }
            if let other: String = try row.decodeIfPresent(4) {
                winner.alternatives.append((other, try row.decode(5)))
            }
            out[day, default: [:]][metric] = winner
        }
        // The largest alternative first (ties in byte order), sorted here rather than by the query.
        for (day, metrics) in out {
            for (metric, winner) in metrics {
                out[day]?[metric]?.alternatives = winner.alternatives.sorted {
                    $0.value != $1.value ? $0.value > $1.value : $0.source.utf8.lexicographicallyPrecedes($1.source.utf8)
                }
            }
        }
        return out
    }

    /// The period's workouts, each with its start's clock time on its day: in the person's time
    /// zone, or with none set as the phone wrote it (the offset that gave its day; in UTC, 19:30
    /// at −05:00 would show as 00:30 of the day before it), read from the workout's payload —
    /// only then, as it costs a payload rebuilt per workout (docs/ui.md).
    func workouts(_ range: [(any PostgresBindable)?], timeZone: String?) throws -> [WorkoutRow] {
        let clock = timeZone == nil ? "coalesce(substr(s.payload->>'start', 12, 5), to_char(w.start_at AT TIME ZONE 'UTC', 'HH24:MI'))" : "to_char(w.start_at AT TIME ZONE $4::text, 'HH24:MI')"
        let written = timeZone == nil ? "LEFT JOIN health.samples s ON s.person = w.person AND s.uuid = w.uuid" : ""
        return try connection.query("""
            SELECT w.uuid::text, w.day::text, \(clock),
                   w.activity_name, w.duration_s, w.distance_m, w.energy_kcal, w.source, cardinality(w.overlapping), w.origin,
                   w.heart_rate_min, w.heart_rate_mean, w.heart_rate_max, w.route_points
            FROM health.workouts w \(written)
            WHERE w.person = $1 AND w.day BETWEEN $2::date AND $3::date
            ORDER BY w.start_at DESC, w.uuid
            """, range + (timeZone.map { [$0] } ?? [])).compactMap { row in
            guard let day = LocalDay(try row.decode(1)) else { return nil }
            return WorkoutRow(uuid: try row.decode(0), day: day, startTime: try row.decode(2), name: try row.decode(3),
                              durationSeconds: try row.decodeIfPresent(4), distanceMeters: try row.decodeIfPresent(5),
                              energyKcal: try row.decodeIfPresent(6), source: try row.decodeIfPresent(7) ?? "",
                              overlapping: try row.decode(8), origin: try row.decodeIfPresent(9) ?? "",
                              heartRateMin: try row.decodeIfPresent(10), heartRateMean: try row.decodeIfPresent(11),
                              heartRateMax: try row.decodeIfPresent(12), routePoints: try row.decodeIfPresent(13))
        }
    }

    /// The names shown for the person's sources that have one (`health.sources`): set by the
    /// person or learned from the Health app's export; `only` limits it to one source.
    func sourceNames(person: String, only source: String? = nil) throws -> [String: String] {
        var names: [String: String] = [:]
        for row in try connection.query("""
            SELECT source, name FROM health.sources WHERE person = $1 AND named_by IS NOT NULL AND ($2::text IS NULL OR source = $2)
            """, [person, source]) {
            names[try row.decode(0)] = try row.decode(1)
        }
        return names
    }

    func healthKit(_ range: [(any PostgresBindable)?]) throws -> [LocalDay: [String: HealthKitCheck]] {
        var out: [LocalDay: [String: HealthKitCheck]] = [:]
        for row in try connection.query("""
            SELECT day::text, metric, warehouse_value, healthkit_value
            FROM health.daily_healthkit_check WHERE person = $1 AND day BETWEEN $2::date AND $3::date
            """, range) {
            guard let day = LocalDay(try row.decode(0)) else { continue }
            out[day, default: [:]][try row.decode(1)] = HealthKitCheck(ours: try row.decode(2), healthKit: try row.decode(3))
        }
        return out
    }
}
