import Civil
import Dispatch
import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

/// Random batches from concurrent writers must leave the rollups equal to a recompute, and
/// every view equal to a naive query straight over health.samples.
@Suite("Rollups under concurrent writers")
struct RollupPropertyTests {
    static let persons = ["p1", "p2"]
    static let sources = ["Zeta", "alpha", "watch", "phone"]
    static let zones: [String?] = [nil, "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Asia/Kolkata"]

    @Test("8 writers with replacements, duplicates, zone and priority changes on overlapping days: rollups equal a recompute, views equal naive queries",
          arguments: [UInt64(0x5EED_0001), UInt64(0x5EED_0002)])
    func concurrentWriters(seed: UInt64) throws {
        try TestPostgres.withDatabase { db in
            let failures = Mutex<[String]>([])
            let group = DispatchGroup()
            for writer in 0..<8 {
                group.enter()
                let thread = Thread {
                    defer { group.leave() }
                    do {
                        try Self.write(db: db, seed: seed &+ UInt64(writer) &* 0x9E37_79B9, batches: 14)
                    } catch {
                        failures.withLock { $0.append("writer \(writer): \(error)") }
                    }
                }
                thread.start()
            }
            group.wait()
            let errors = failures.withLock { $0 }
            #expect(errors.isEmpty, "seed \(seed): \(errors)")

            let c = try db.connect()
            let held = try #require(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self))
            #expect(held > 300, "the writers stored samples")
            let mix = try #require(try c.query("""
                SELECT sum(replaced), sum(duplicates), count(DISTINCT export_id) FROM health_store.deliveries
                """).first)
            #expect(try mix.decode(0, as: Int.self) > 20, "samples were replaced")
            #expect(try mix.decode(1, as: Int.self) > 20, "duplicates were sent")
            #expect(try db.scalar("SELECT count(*) FROM health_store.settings", as: Int.self)! > 0, "zones were set")
            #expect(try db.scalar("SELECT count(*) FROM health.coalesced_samples WHERE NOT counted", as: Int.self)! > 0,
                    "coalescings were sent")
            for person in Self.persons {
                let diff = try c.table("SELECT * FROM health_store.verify_rollups($1)", [person])
                #expect(diff.count == 0, "seed \(seed), \(person): rollups differ from a recompute: \(diff.rows.prefix(5))")
            }
            try Self.compareViews(c, label: "seed \(seed)")

            // A rebuild from scratch lands on the same rollups and the same answers.
            try c.query("SELECT health_store.rebuild_rollups()")
            for person in Self.persons {
                #expect(try c.table("SELECT * FROM health_store.verify_rollups($1)", [person]).count == 0)
            }
            try Self.compareViews(c, label: "seed \(seed) after rebuild")
        }
    }

    @Test("verify_rollups reports a tampered rollup at every level, and a rebuild repairs it")
    func verifyCatchesDrift() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                Sample.quantity(Sample.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: 10),
                Sample.quantity(Sample.U(2), HK.steps, source: "watch", start: "2026-03-01T11:00:00.000+01:00", value: 20),
                Sample.quantity(Sample.U(3), HK.heartRate, source: "watch", start: "2026-03-01T11:00:00.000+01:00", value: 60),
            ])
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
            let tamper = [
                ("source", "UPDATE health_store.rollup_source SET total = total + 1 WHERE source = 'phone'"),
                ("day_type", "UPDATE health_store.rollup_day_type SET ranked_sources = ARRAY['phone', 'watch'] WHERE type = 'HKQuantityTypeIdentifierStepCount'"),
                ("day_type", "UPDATE health_store.rollup_day_type SET min_value = 1 WHERE type = 'HKQuantityTypeIdentifierHeartRate'"),
                ("day", "DELETE FROM health_store.rollup_day"),
                ("source", "DELETE FROM health_store.rollup_source WHERE source = 'watch' AND type = 'HKQuantityTypeIdentifierHeartRate'"),
                ("rank", "UPDATE health_store.rollup_source SET rank = 3 - rank WHERE type = 'HKQuantityTypeIdentifierStepCount'"),
            ]
            for (level, sql) in tamper {
                try c.query("BEGIN")
                try c.query(sql)
                let diff = try c.table("SELECT level FROM health_store.verify_rollups('p')")
                #expect(diff.rows.map { $0[0] }.contains(level), "\(sql) is reported at level \(level): \(diff.rows)")
                try c.query("ROLLBACK")
            }
            try c.query("UPDATE health_store.rollup_day_type SET value = 0")
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count > 0)
            try c.query("SELECT health_store.rebuild_rollups('p')")
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
            #expect(try c.table("SELECT value FROM health.daily_totals").rows == [["20"]])
        }
    }

    // MARK: - Writing

    /// One writer: its own connection, random batches, now and then a setting changed.
    static func write(db: TestDatabase, seed: UInt64, batches: Int) throws {
        var rng = SeededGenerator(seed: seed)
        let connection = try db.connect()
        defer { connection.close() }
        let store = Store(connection: connection)
        var sent: [String] = []
        for _ in 0..<batches {
            let person = persons.randomElement(using: &rng)!
            let roll = Int.random(in: 0..<100, using: &rng)
            if roll < 6 {
                try connection.query("SELECT health.set_time_zone($1, $2)", [person, zones.randomElement(using: &rng)!])
            } else if roll < 10 {
                let type = [HK.steps, HK.sleep, HK.distance].randomElement(using: &rng)!
                let listed = Array(sources.shuffled(using: &rng).prefix(Int.random(in: 0...2, using: &rng)))
                try connection.query("SELECT health.set_source_priority($1, $2, $3::text[])",
                                     [person, type, "{" + listed.joined(separator: ",") + "}"])
            }
            var samples: [String] = []
            for _ in 0..<Int.random(in: 1...60, using: &rng) {
                if !sent.isEmpty, Int.random(in: 0..<10, using: &rng) == 0 {
                    samples.append(sent.randomElement(using: &rng)!)  // the same copy again
                } else {
                    samples.append(randomSample(&rng))
                }
            }
            if Int.random(in: 0..<100, using: &rng) < 25 {
                samples.append(contentsOf: coalescing(&rng))
            }
            sent.append(contentsOf: samples.prefix(5))
            try store.batch(person: person, samples, sequence: Int.random(in: 1...3, using: &rng),
                            isFinal: Bool.random(using: &rng), basis: Bool.random(using: &rng) ? "anchor" : "window")
        }
    }

    /// A sample with one of 240 uuids (so later ones replace earlier ones), a random type and
    /// a start in the six days around the DST change, written in a random offset.
    static func randomSample<R: RandomNumberGenerator>(_ rng: inout R) -> String {
        let uuid = Sample.U(Int.random(in: 1...240, using: &rng))
        let source = sources.randomElement(using: &rng)!
        let base = 1_774_483_200  // 2026-03-26T00:00:00Z
        let start = base + Int.random(in: 0..<(6 * 86_400), using: &rng) / 60 * 60
        let offset = [0, 60, 120, -300, 540, 330].randomElement(using: &rng)!
        func at(_ t: Int) -> String { stamp(t, offsetMinutes: offset) }
        switch Int.random(in: 0..<12, using: &rng) {
        case 0, 1:
            return Sample.quantity(uuid, HK.steps, source: source, start: at(start), end: at(start + 300),
                                   value: Double(Int.random(in: 0...400, using: &rng)))
        case 2:
            // Now and then a value with more digits than six decimals hold.
            let value = Bool.random(using: &rng) ? Double(Int.random(in: 0...90_000, using: &rng)) / 1000
                                                 : Double(Int.random(in: 1...900, using: &rng)) / 7
            return Sample.quantity(uuid, HK.distance, source: source, start: at(start), end: at(start + 300), value: value)
        case 3, 4:
            return Sample.quantity(uuid, HK.heartRate, source: source, start: at(start),
                                   value: Double(Int.random(in: 45...170, using: &rng)))
        case 5:
            return Sample.quantity(uuid, HK.oxygen, source: source, start: at(start),
                                   value: Double(Int.random(in: 900...1000, using: &rng)) / 1000)
        case 6:
            return Sample.quantity(uuid, HK.bodyMass, source: source, start: at(start / 3600 * 3600),
                                   end: at(start / 3600 * 3600 + 60 * Int.random(in: 0...1, using: &rng)),
                                   value: Double(Int.random(in: 600...900, using: &rng)) / 10)
        case 7:
            return Sample.quantity(uuid, HK.bodyFat, source: source, start: at(start),
                                   value: Double(Int.random(in: 100...300, using: &rng)) / 1000)
        case 8, 9:
            let minutes = Int.random(in: 5...150, using: &rng)
            return Sample.sleep(uuid, source: source, start: at(start), end: at(start + minutes * 60),
                                value: Int.random(in: 0...7, using: &rng))
        case 10:
            let minutes = Int.random(in: 10...120, using: &rng)
            let type = [37, 14, 50].randomElement(using: &rng)!
            return Sample.workout(uuid, source: source, start: at(start), end: at(start + minutes * 60), activityType: type,
                                  activityName: type == 14 ? nil : (type == 37 ? "running" : "traditionalStrengthTraining"),
                                  duration: Double(minutes * 60),
                                  distance: Bool.random(using: &rng) ? Double(minutes * 150) + 0.5 : nil,
                                  energy: Bool.random(using: &rng) ? Double(minutes * 9) + 0.25 : nil)
        default:
            return Sample.quantity(uuid, "HKQuantityTypeIdentifierMystery", source: source, start: at(start),
                                   value: Double(Int.random(in: 0...9, using: &rng)), unit: "count", group: "activity")
        }
    }

    /// Fine step or distance samples of one source and, in the same list, a combined sample
    /// over their span whose value is their sum (or, now and then, not), combined first or
    /// last. Uuids from their own ranges, so later groups replace earlier parts and combined
    /// samples and re-decide them.
    static func coalescing<R: RandomNumberGenerator>(_ rng: inout R) -> [String] {
        let source = sources.randomElement(using: &rng)!
        let type = Bool.random(using: &rng) ? HK.steps : HK.distance
        let base = 1_774_483_200 + Int.random(in: 0..<(6 * 86_400), using: &rng) / 300 * 300
        let offset = [0, 60, 120].randomElement(using: &rng)!
        let count = Int.random(in: 2...4, using: &rng)
        var parts: [String] = []
        var sum = 0
        for i in 0..<count {
            let value = Int.random(in: 1...500, using: &rng)
            sum += value
            parts.append(Sample.quantity(Sample.U(241 + Int.random(in: 0..<160, using: &rng)), type, source: source,
                                         start: stamp(base + i * 300, offsetMinutes: offset),
                                         end: stamp(base + (i + 1) * 300, offsetMinutes: offset), value: Double(value)))
        }
        let total = Int.random(in: 0..<5, using: &rng) == 0 ? sum + 1 : sum
        let combined = Sample.quantity(Sample.U(401 + Int.random(in: 0..<60, using: &rng)), type, source: source,
                                       start: stamp(base, offsetMinutes: offset), end: stamp(base + count * 300, offsetMinutes: offset),
                                       value: Double(total))
        return Bool.random(using: &rng) ? parts + [combined] : [combined] + parts
    }

    /// `2026-03-29T23:30:00.000+02:00`: the instant `t` (seconds since 1970) written in an offset.
    static func stamp(_ t: Int, offsetMinutes: Int) -> String {
        let local = t + offsetMinutes * 60
        let days = Int((Double(local) / 86_400).rounded(.down))
        let (y, m, d) = CivilDate.civil(fromDays: days)
        let s = local - days * 86_400
        let zone: String
        if offsetMinutes == 0 {
            zone = "Z"
        } else {
            let a = abs(offsetMinutes)
            zone = (offsetMinutes < 0 ? "-" : "+") + String(format: "%02d:%02d", a / 60, a % 60)
        }
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.000", y, m, d, s / 3600, s / 60 % 60, s % 60) + zone
    }

    // MARK: - Naive reference queries, straight over health.samples

    /// The daily views' rule: health_store.is_partial_in with the person's zone and phone's
    /// offset, joined as the views join them (`zone` after the query's `x`). Not
    /// health.is_partial: on Citus a function reading a table inside a query on a shard is
    /// refused (a nested distributed execution).
    static let partial = "health_store.is_partial_in(x.day, z.time_zone, zp.sent_offset)"
    static let zone = "LEFT JOIN health_store.settings z ON z.person = x.person LEFT JOIN health_store.persons zp ON zp.person = x.person"

    /// health.samples without the coalescings, decided naively: a sample of rule total with a
    /// duration whose own source's samples inside its span are two or more and add up to it.
    static let counted = """
        (SELECT s.* FROM health.samples s
         WHERE NOT EXISTS (
           SELECT 1 FROM health.catalog k,
                  LATERAL (SELECT count(*) AS n, sum(q.value::numeric) AS total FROM health.samples q
                           WHERE q.person = s.person AND q.type = s.type AND q.source = s.source AND q.uuid <> s.uuid
                             AND q.start_at >= s.start_at AND q.end_at <= s.end_at) inside
           WHERE k.type = s.type AND k.rule = 'total' AND s.end_at > s.start_at
             AND inside.n >= 2 AND abs(inside.total - s.value::numeric) <= 1e-9 * abs(s.value::numeric)))
        """

    /// Per person, day, per-source type and source: the total, stage minutes and the rank. A
    /// sleep source with no minute asleep ranks after those with some (in byte order among
    /// themselves); a night none of whose sources has a minute asleep is `in_bed_only`, its
    /// sources by time in bed.
    static var ranked: String { """
        per AS (
          SELECT s.person, s.day, s.type, c.metric, c.rule, CASE c.rule WHEN 'sleep' THEN 'min' ELSE c.unit END AS unit, s.source,
                 CASE c.rule WHEN 'sleep' THEN coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value IN (1, 3, 4, 5)), 0) / 60
                             ELSE sum(s.value::numeric) END AS total,
                 count(*) AS samples,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 3), 0) / 60 AS core,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 4), 0) / 60 AS deep,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 5), 0) / 60 AS rem,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 1), 0) / 60 AS unspecified,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 2), 0) / 60 AS awake,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 0), 0) / 60 AS in_bed,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE coalesce(s.value NOT IN (0, 1, 2, 3, 4, 5), true)), 0) / 60 AS unknown
          FROM \(counted) s JOIN health.catalog c ON c.type = s.type
          WHERE c.rule IN ('total', 'sleep')
          GROUP BY s.person, s.day, s.type, c.metric, c.rule, c.unit, s.source
        ),
        ranked AS (
          SELECT per.*, row_number() OVER (PARTITION BY per.person, per.day, per.type
                   ORDER BY per.rule = 'sleep' AND per.total = 0,
                            CASE WHEN NOT (per.rule = 'sleep' AND per.total = 0) THEN array_position(p.sources, per.source) END NULLS LAST,
                            per.total DESC NULLS LAST,
                            CASE WHEN per.rule = 'sleep' AND NOT EXISTS (SELECT 1 FROM per o WHERE o.person = per.person AND o.day = per.day
                                                                          AND o.type = per.type AND o.total > 0)
                                 THEN per.in_bed END DESC NULLS LAST,
                            per.source COLLATE "C")::integer AS rank,
                 per.rule = 'sleep' AND NOT bool_or(per.total > 0) OVER (PARTITION BY per.person, per.day, per.type) AS in_bed_only,
                 coalesce((SELECT jsonb_object_agg(o.source, o.total::float8) FROM per o
                           WHERE o.person = per.person AND o.day = per.day AND o.type = per.type AND o.source <> per.source), '{}') AS others
          FROM per LEFT JOIN health_store.source_priorities p ON p.person = per.person AND p.type = per.type
        )
        """ }

    static let latest = """
        SELECT DISTINCT ON (s.person, s.day, s.type) s.person, s.day, s.type, c.metric, c.unit, s.value, s.start_at AS measured_at, s.source
        FROM health.samples s JOIN health.catalog c ON c.type = s.type AND c.rule = 'latest'
        ORDER BY s.person, s.day, s.type, s.start_at DESC, s.end_at DESC, s.source COLLATE "C", s.uuid
        """

    static var naive: [(view: String, columns: String, order: String, sql: String)] {
        [
            ("daily_source_totals", "person, day, type, metric, unit, source, total, samples, rank, is_winner, is_partial",
             "person, day, type, source COLLATE \"C\"", """
             WITH \(ranked)
             SELECT x.person, x.day, x.type, x.metric, x.unit, x.source, x.total::float8 AS total, x.samples, x.rank,
                    x.rank = 1 AS is_winner, \(partial) AS is_partial
             FROM ranked x \(zone)
             WHERE NOT x.in_bed_only
             """),
            ("daily_totals", "person, day, type, metric, unit, value, source, alternatives, is_partial",
             "person, day, type", """
             WITH \(ranked)
             SELECT x.person, x.day, x.type, x.metric, x.unit, x.total::float8 AS value, x.source, x.others AS alternatives,
                    \(partial) AS is_partial
             FROM ranked x \(zone)
             WHERE x.rank = 1 AND NOT x.in_bed_only
             """),
            ("daily_sleep", "person, day, source, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min, in_bed_min, unknown_min, alternatives, is_partial",
             "person, day", """
             WITH \(ranked)
             SELECT x.person, x.day, x.source, CASE WHEN NOT x.in_bed_only THEN x.total::float8 END AS asleep_min,
                    x.core::float8 AS core_min, x.deep::float8 AS deep_min,
                    x.rem::float8 AS rem_min, x.unspecified::float8 AS unspecified_min, x.awake::float8 AS awake_min,
                    x.in_bed::float8 AS in_bed_min, x.unknown::float8 AS unknown_min,
                    CASE WHEN x.in_bed_only THEN '{}' ELSE x.others END AS alternatives, \(partial) AS is_partial
             FROM ranked x \(zone)
             WHERE x.rank = 1 AND x.type = 'HKCategoryTypeIdentifierSleepAnalysis'
             """),
            ("daily_readings", "person, day, type, metric, unit, min, mean, max, samples, is_partial",
             "person, day, type", """
             SELECT x.*, \(partial) AS is_partial FROM (
               SELECT s.person, s.day, s.type, c.metric, c.unit, min(s.value) AS min, avg(s.value) AS mean, max(s.value) AS max,
                      count(s.value) AS samples
               FROM health.samples s JOIN health.catalog c ON c.type = s.type AND c.rule = 'reading'
               GROUP BY s.person, s.day, s.type, c.metric, c.unit) x \(zone)
             """),
            ("daily_body", "person, day, type, metric, unit, value, measured_at, source", "person, day, type", latest),
            ("daily_workouts", "person, day, workouts, duration_s, distance_m, energy_kcal, is_partial", "person, day", """
             SELECT x.*, \(partial) AS is_partial FROM (
               SELECT s.person, s.day, count(*) AS workouts, sum(s.duration_s) AS duration_s, sum(s.distance_m) AS distance_m,
                      sum(s.energy_kcal) AS energy_kcal
               FROM health.samples s WHERE s.type = 'HKWorkoutTypeIdentifier' AND s.kind = 'workout'
               GROUP BY s.person, s.day) x \(zone)
             """),
            ("workouts", "person, day, uuid, start_at, end_at, activity_type, activity_name, duration_s, distance_m, energy_kcal, source, overlapping",
             "person, uuid", """
             SELECT a.person, a.day, a.uuid, a.start_at, a.end_at, a.activity_type,
                    coalesce(a.activity_name, 'activity type ' || a.activity_type) AS activity_name,
                    a.duration_s, a.distance_m, a.energy_kcal, a.source,
                    coalesce((SELECT array_agg(b.uuid ORDER BY b.start_at, b.uuid) FROM health.samples b
                              WHERE b.person = a.person AND b.type = a.type AND b.kind = 'workout' AND b.uuid <> a.uuid
                                AND a.start_at < b.end_at AND b.start_at < a.end_at), '{}') AS overlapping
             FROM health.samples a WHERE a.type = 'HKWorkoutTypeIdentifier' AND a.kind = 'workout'
             """),
            ("unknown_types", "person, type, kind, samples, first_start_at, last_start_at", "person, type", """
             SELECT s.person, s.type, min(s.kind COLLATE "C") AS kind, count(*) AS samples, min(s.start_at) AS first_start_at, max(s.start_at) AS last_start_at
             FROM health.samples s WHERE NOT EXISTS (SELECT 1 FROM health.catalog c WHERE c.type = s.type)
             GROUP BY s.person, s.type
             """),
            ("daily_summary", summaryColumns.joined(separator: ", "), "person, day", naiveSummary),
        ]
    }

    static let summaryColumns = [
        "person", "day", "is_partial", "steps", "distance_m", "flights_climbed", "active_energy_kcal", "basal_energy_kcal",
        "exercise_min", "stand_min", "sleep_min", "heart_rate_min", "heart_rate_mean", "heart_rate_max", "resting_heart_rate",
        "walking_heart_rate", "hrv_sdnn_ms", "oxygen_saturation_pct", "respiratory_rate", "vo2_max", "body_temperature_c",
        "blood_pressure_systolic", "blood_pressure_diastolic", "body_mass_kg", "height_m", "body_mass_index", "body_fat_pct",
        "lean_body_mass_kg", "workouts", "workout_duration_s", "unknown_samples",
    ]

    static var naiveSummary: String {
        func pick(_ cte: String, _ expression: String, _ metric: String) -> String {
            "(SELECT \(expression) FROM \(cte) v WHERE v.person = x.person AND v.day = x.day AND v.metric = '\(metric)')"
        }
        let totals = ["steps": "steps", "distance_m": "distance_m", "flights_climbed": "flights_climbed",
                      "active_energy_kcal": "active_energy_kcal", "basal_energy_kcal": "basal_energy_kcal",
                      "exercise_min": "exercise_min", "stand_min": "stand_min", "sleep_min": "sleep_min"]
        let means = ["heart_rate_mean": "heart_rate_bpm", "resting_heart_rate": "resting_heart_rate_bpm",
                     "walking_heart_rate": "walking_heart_rate_bpm", "hrv_sdnn_ms": "hrv_sdnn_ms",
                     "respiratory_rate": "respiratory_rate_per_min", "vo2_max": "vo2_max_ml_per_kg_min",
                     "body_temperature_c": "body_temperature_c", "blood_pressure_systolic": "blood_pressure_systolic_mmhg",
                     "blood_pressure_diastolic": "blood_pressure_diastolic_mmhg"]
        let latest = ["body_mass_kg": "body_mass_kg", "height_m": "height_m", "body_mass_index": "body_mass_index",
                      "lean_body_mass_kg": "lean_body_mass_kg"]
        var select: [String] = ["x.person", "x.day", "\(partial) AS is_partial"]
        for column in summaryColumns.dropFirst(3) {
            let expression: String
            if let metric = totals[column] {
                expression = pick("winners", "v.value", metric)
            } else if let metric = means[column] {
                expression = pick("readings", "v.mean", metric)
            } else if let metric = latest[column] {
                expression = pick("latest", "v.value", metric)
            } else {
                switch column {
                case "heart_rate_min": expression = pick("readings", "v.min", "heart_rate_bpm")
                case "heart_rate_max": expression = pick("readings", "v.max", "heart_rate_bpm")
                case "oxygen_saturation_pct": expression = pick("readings", "100 * v.mean", "oxygen_saturation_fraction")
                case "body_fat_pct": expression = pick("latest", "100 * v.value", "body_fat_fraction")
                case "workouts": expression = "(SELECT v.n FROM workouts v WHERE v.person = x.person AND v.day = x.day)"
                case "workout_duration_s": expression = "(SELECT v.d FROM workouts v WHERE v.person = x.person AND v.day = x.day)"
                case "unknown_samples": expression = "(SELECT v.n FROM unknown v WHERE v.person = x.person AND v.day = x.day)"
                default: expression = "NULL /* \(column) */"
                }
            }
            select.append(expression + " AS " + column)
        }
        return """
            WITH \(ranked),
            winners AS (SELECT person, day, metric, total::float8 AS value FROM ranked WHERE rank = 1 AND NOT in_bed_only),
            readings AS (
              SELECT s.person, s.day, c.metric, min(s.value) AS min, avg(s.value) AS mean, max(s.value) AS max
              FROM health.samples s JOIN health.catalog c ON c.type = s.type AND c.rule = 'reading'
              GROUP BY s.person, s.day, c.metric),
            latest AS (\(Self.latest)),
            workouts AS (
              SELECT s.person, s.day, count(*) AS n, sum(s.duration_s) AS d FROM health.samples s
              WHERE s.type = 'HKWorkoutTypeIdentifier' AND s.kind = 'workout' GROUP BY s.person, s.day),
            unknown AS (
              SELECT s.person, s.day, count(*) AS n FROM health.samples s
              WHERE NOT EXISTS (SELECT 1 FROM health.catalog c WHERE c.type = s.type) GROUP BY s.person, s.day),
            days AS (SELECT DISTINCT s.person, s.day FROM \(Self.counted) s)
            SELECT \(select.joined(separator: ",\n       "))
            FROM days x \(zone)
            """
    }

    /// Every per-day view against its naive query; records an issue per difference.
    static func compareViews(_ c: PostgresConnection, label: String) throws {
        for check in naive {
            let actual = try c.table("SELECT \(check.columns) FROM health.\(check.view) ORDER BY \(check.order)")
            let expected = try c.table("SELECT \(check.columns) FROM (\(check.sql)) n ORDER BY \(check.order)")
            #expect(expected.count > 0 || check.view == "unknown_types", "\(label): the naive \(check.view) has rows")
            let diff = differences(actual, expected, label: "\(label) \(check.view)")
            #expect(diff.isEmpty, "\(diff.joined(separator: "\n"))")
        }
    }
}
