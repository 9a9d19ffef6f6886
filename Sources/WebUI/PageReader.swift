import Postgres

/// Reads what a page shows from the `health` views, on a connection of the reader pool
/// (role `health_reader`, read-only). Every statement filters by the person as a `$1`
/// parameter; nothing is ever spliced into SQL.
struct PageReader {
    let connection: PostgresConnection

    /// The metrics of `health.daily_totals` the page charts, in the order it shows them.
    static let totals = ["steps", "distance_m", "active_energy_kcal", "exercise_min", "sleep_min"]

    /// Everything the days page shows for `person` over the `dayCount` days up to today, read
    /// in one read-only snapshot so the parts agree with each other.
    func daysPage(person: String, dayCount: Int) throws -> PageData {
        try snapshot {
            let context = try self.context(person: person)
            let first = context.today.adding(1 - dayCount)
            var page = PageData(person: person, timeZone: context.timeZone, today: context.today,
                                days: (0..<dayCount).map { first.adding($0) })
            let range: [(any PostgresBindable)?] = [person, first.text, context.today.text]
            page.freshness = try freshness(person: person, zone: page.zoneLabel)
            page.summary = try summary(range)
            page.winners = try winners(range)
            page.sleep = try sleep(range)
            page.workouts = try workouts(range + [page.zoneLabel])
            page.healthKit = try healthKit(range)
            page.leftOut = try leftOut(person: person)
            return page
        }
    }

    /// Runs `body` inside one read-only, repeatable-read transaction as `health_reader`, whatever
    /// the session's own role (the pool sets it too; this holds even if something reset it).
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        try connection.execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL ROLE health_reader")
        let value = try body()
        try connection.query("COMMIT")
        return value
    }

    /// The person's today and time zone.
    func context(person: String) throws -> (today: LocalDay, timeZone: String?) {
        let row = try connection.query("""
            SELECT health.today($1)::text, (SELECT s.time_zone FROM health.settings s WHERE s.person = $1)
            """, [person]).first
        guard let text = row?[0], let today = LocalDay(text) else {
            throw PostgresError(kind: .decoding, message: "health.today gave no date")
        }
        return (today, row?[1])
    }

    func freshness(person: String, zone: String) throws -> Freshness? {
        guard let row = try connection.query("""
            SELECT to_char(f.last_received_at AT TIME ZONE $2, 'YYYY-MM-DD HH24:MI'),
                   to_char(f.newest_sample_end_at AT TIME ZONE $2, 'YYYY-MM-DD HH24:MI'),
                   f.hours_since_last_batch, extract(epoch FROM f.stale_after)::float8 / 3600, f.is_stale, f.hint
            FROM health.freshness f WHERE f.person = $1
            """, [person, zone]).first else { return nil }
        return Freshness(lastReceivedAt: try row.decode(0), newestSampleEndAt: try row.decodeIfPresent(1),
                         hoursSinceLastBatch: try row.decode(2), staleAfterHours: try row.decode(3),
                         isStale: try row.decode(4), hint: try row.decodeIfPresent(5))
    }

    func summary(_ range: [(any PostgresBindable)?]) throws -> [LocalDay: DaySummary] {
        var out: [LocalDay: DaySummary] = [:]
        for row in try connection.query("""
            SELECT day::text, is_partial, steps, distance_m, active_energy_kcal, exercise_min, sleep_min,
                   resting_heart_rate, hrv_sdnn_ms, body_mass_kg, workouts, workout_duration_s
            FROM health.daily_summary WHERE person = $1 AND day BETWEEN $2::date AND $3::date
            """, range) {
            guard let day = LocalDay(try row.decode(0)) else { continue }
            out[day] = DaySummary(
                isPartial: try row.decode(1), steps: try row.decodeIfPresent(2), distanceMeters: try row.decodeIfPresent(3),
                activeEnergyKcal: try row.decodeIfPresent(4), exerciseMinutes: try row.decodeIfPresent(5),
                sleepMinutes: try row.decodeIfPresent(6), restingHeartRate: try row.decodeIfPresent(7),
                hrvMilliseconds: try row.decodeIfPresent(8), bodyMassKg: try row.decodeIfPresent(9),
                workouts: try row.decodeIfPresent(10), workoutSeconds: try row.decodeIfPresent(11))
        }
        return out
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

    func sleep(_ range: [(any PostgresBindable)?]) throws -> [LocalDay: SleepNight] {
        var out: [LocalDay: SleepNight] = [:]
        for row in try connection.query("""
            SELECT day::text, source, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min, in_bed_min
            FROM health.daily_sleep WHERE person = $1 AND day BETWEEN $2::date AND $3::date
            """, range) {
            guard let day = LocalDay(try row.decode(0)) else { continue }
            out[day] = SleepNight(source: try row.decode(1), asleep: try row.decode(2), core: try row.decode(3),
                                  deep: try row.decode(4), rem: try row.decode(5), unspecified: try row.decode(6),
                                  awake: try row.decode(7), inBed: try row.decode(8))
        }
        return out
    }

    func workouts(_ range: [(any PostgresBindable)?]) throws -> [WorkoutRow] {
        try connection.query("""
            SELECT uuid::text, day::text, to_char(start_at AT TIME ZONE $4, 'HH24:MI'), activity_name, duration_s,
                   distance_m, energy_kcal, source, cardinality(overlapping), origin,
                   heart_rate_min, heart_rate_mean, heart_rate_max, route_points
            FROM health.workouts WHERE person = $1 AND day BETWEEN $2::date AND $3::date
            ORDER BY start_at DESC, uuid
            """, range).compactMap { row in
            guard let day = LocalDay(try row.decode(1)) else { return nil }
            return WorkoutRow(uuid: try row.decode(0), day: day, startTime: try row.decode(2), name: try row.decode(3),
                              durationSeconds: try row.decodeIfPresent(4), distanceMeters: try row.decodeIfPresent(5),
                              energyKcal: try row.decodeIfPresent(6), source: try row.decodeIfPresent(7) ?? "",
                              overlapping: try row.decode(8), origin: try row.decodeIfPresent(9) ?? "",
                              heartRateMin: try row.decodeIfPresent(10), heartRateMean: try row.decodeIfPresent(11),
                              heartRateMax: try row.decodeIfPresent(12), routePoints: try row.decodeIfPresent(13))
        }
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
