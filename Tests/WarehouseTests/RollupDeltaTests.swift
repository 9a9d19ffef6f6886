import Postgres
import Testing
import TestSupport
import Warehouse

/// A key that only gains samples in a batch is not recomputed: its stored level-1 row is
/// merged with the level-1 row of the added samples (health_store.merge_source_rollups). These
/// tests hold that merge to a recompute, column by column and digit by digit, for every rule.
@Suite("Rollup level 1 merged from added samples")
struct RollupDeltaTests {
    typealias S = Sample

    /// Level-1 rows whose stored text differs from a recompute's (numeric scale included,
    /// which verify_rollups's jsonb comparison would not see), and verify_rollups's findings.
    static func drift(_ c: PostgresConnection, person: String = "p") throws -> [String] {
        let exact = try c.table("""
            SELECT coalesce(r.type, v.type), coalesce(r.day, v.day), coalesce(r.source, v.source),
                   (to_jsonb(r) - 'rank')::text, (to_jsonb(v) - 'rank')::text
            FROM (SELECT * FROM health_store.rollup_source WHERE person = $1) r
            FULL JOIN (SELECT * FROM health_store.calc_source WHERE person = $1) v
              ON v.type = r.type AND v.day = r.day AND v.source = r.source
            WHERE (to_jsonb(r) - 'rank')::text IS DISTINCT FROM (to_jsonb(v) - 'rank')::text
            """, [person])
        let verify = try c.table("SELECT level, day, type, source, stored, recomputed FROM health_store.verify_rollups($1)", [person])
        return exact.rows.map { "level 1 text: \($0.map { $0 ?? "NULL" })" }
            + verify.rows.map { "verify: \($0.map { $0 ?? "NULL" })" }
    }

    /// Five insert-only batches into the same keys, one per rule and an unknown type, on one
    /// day and source; after each, every level-1 row equals a recompute to the last digit.
    @Test("insert-only batches into existing keys equal a recompute for every rule (total, sleep with unnamed values, reading, latest with its tie rule, workouts with and without distance)")
    func insertOnlyBatches() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            let day = "2026-03-10T"
            let batches: [[String]] = [
                // 1: every key is new (merged with no stored row).
                [
                    S.quantity(S.U(0x101), HK.steps, source: "watch", start: day + "08:00:00.000+01:00", end: day + "08:05:00.000+01:00", value: 120),
                    S.quantity(S.U(0x102), HK.distance, source: "watch", start: day + "08:00:00.000+01:00", end: day + "08:05:00.000+01:00", value: 80.125),
                    S.quantity(S.U(0x103), HK.heartRate, source: "watch", start: day + "08:00:00.000+01:00", value: 71),
                    S.quantity(S.U(0x104), HK.bodyMass, source: "watch", start: day + "07:00:00.000+01:00", value: 80.4),
                    S.sleep(S.U(0x105), source: "watch", start: day + "01:00:00.000+01:00", end: day + "02:00:00.000+01:00", value: 3),
                    S.sleep(S.U(0x106), source: "watch", start: day + "02:00:00.000+01:00", end: day + "02:30:00.000+01:00", value: 0),
                    S.workout(S.U(0x107), source: "watch", start: day + "17:00:00.000+01:00", end: day + "17:40:00.000+01:00",
                              activityType: 50, activityName: "traditionalStrengthTraining", duration: 2400),
                    S.quantity(S.U(0x108), "HKQuantityTypeIdentifierMystery", source: "watch", start: day + "09:00:00.000+01:00",
                               value: 3, unit: "count", group: "activity"),
                ],
                // 2: values past six decimals (summed as numeric), a new maximum, a later end at
                // the same start (the latest), unnamed sleep values, a workout with distance.
                [
                    S.quantity(S.U(0x201), HK.steps, source: "watch", start: day + "09:00:00.000+01:00", end: day + "09:05:00.000+01:00", value: 1.0 / 7),
                    S.quantity(S.U(0x202), HK.distance, source: "watch", start: day + "09:00:00.000+01:00", end: day + "09:05:00.000+01:00", value: 100.0 / 3),
                    S.quantity(S.U(0x203), HK.heartRate, source: "watch", start: day + "09:00:00.000+01:00", value: 152),
                    S.quantity(S.U(0x204), HK.bodyMass, source: "watch", start: day + "07:00:00.000+01:00", end: day + "07:01:00.000+01:00", value: 80.6),
                    S.sleep(S.U(0x205), source: "watch", start: day + "02:30:00.000+01:00", end: day + "03:00:00.000+01:00", value: 7),
                    S.sleep(S.U(0x206), source: "watch", start: day + "03:00:00.000+01:00", end: day + "03:10:00.000+01:00", value: 9, name: .some(nil)),
                    S.workout(S.U(0x207), source: "watch", start: day + "18:00:00.000+01:00", end: day + "18:30:00.000+01:00",
                              activityType: 37, activityName: "running", duration: 1800.5, distance: 5000.25),
                    S.quantity(S.U(0x208), "HKQuantityTypeIdentifierMystery", source: "watch", start: day + "10:00:00.000+01:00",
                               value: 4, unit: "count", group: "activity"),
                ],
                // 3: the latest ties on start and end: the smaller uuid wins, the larger loses;
                // a new minimum; asleep stages; a workout with energy only.
                [
                    S.quantity(S.U(0x004), HK.bodyMass, source: "watch", start: day + "07:00:00.000+01:00", end: day + "07:01:00.000+01:00", value: 80.2),
                    S.quantity(S.U(0x304), HK.bodyMass, source: "watch", start: day + "07:00:00.000+01:00", end: day + "07:01:00.000+01:00", value: 99.9),
                    S.quantity(S.U(0x303), HK.heartRate, source: "watch", start: day + "10:00:00.000+01:00", value: 44.5),
                    S.sleep(S.U(0x305), source: "watch", start: day + "03:10:00.000+01:00", end: day + "04:00:00.000+01:00", value: 4),
                    S.sleep(S.U(0x306), source: "watch", start: day + "04:00:00.000+01:00", end: day + "04:20:00.000+01:00", value: 5),
                    S.sleep(S.U(0x307), source: "watch", start: day + "04:20:00.000+01:00", end: day + "04:25:00.000+01:00", value: 1),
                    S.sleep(S.U(0x308), source: "watch", start: day + "04:25:00.000+01:00", end: day + "04:30:00.000+01:00", value: 2),
                    S.workout(S.U(0x309), source: "watch", start: day + "19:00:00.000+01:00", end: day + "19:20:00.000+01:00",
                              activityType: 14, activityName: nil, duration: 1200, energy: 110.75),
                    S.quantity(S.U(0x30A), HK.steps, source: "watch", start: day + "10:00:00.000+01:00", end: day + "10:05:00.000+01:00", value: 0.000001),
                ],
                // 4: nothing later than what is held (the latest stays), a negative value, a
                // large one.
                [
                    S.quantity(S.U(0x401), HK.bodyMass, source: "watch", start: day + "06:00:00.000+01:00", value: 70),
                    S.quantity(S.U(0x402), HK.heartRate, source: "watch", start: day + "11:00:00.000+01:00", value: 60, unit: "count/min"),
                    S.quantity(S.U(0x403), HK.distance, source: "watch", start: day + "11:00:00.000+01:00", value: -0.5),
                    S.quantity(S.U(0x404), HK.steps, source: "watch", start: day + "11:00:00.000+01:00", value: 123_456_789.25),
                ],
                // 5: a second source for the total and sleep keys, on the same day.
                [
                    S.quantity(S.U(0x501), HK.steps, source: "phone", start: day + "12:00:00.000+01:00", value: 40),
                    S.sleep(S.U(0x502), source: "phone", start: day + "01:00:00.000+01:00", end: day + "05:00:00.000+01:00", value: 0),
                    S.workout(S.U(0x503), source: "watch", start: day + "20:00:00.000+01:00", end: day + "20:30:00.000+01:00",
                              activityType: 37, activityName: "running", duration: 1800, distance: 4000, energy: 200),
                ],
            ]
            for (n, batch) in batches.enumerated() {
                let counts = try store.batch(batch)
                #expect(counts.inserted == batch.count && counts.replaced == 0, "batch \(n + 1) only inserts: \(counts)")
                let drift = try Self.drift(c)
                #expect(drift.isEmpty, "after batch \(n + 1): \(drift.joined(separator: "\n"))")
            }

            // The merged rows hold what the rules say.
            let rows = try c.table("""
                SELECT type, source, samples, n_values, sum_value::text AS sum_value, min_value, max_value, total::text AS total,
                       latest_uuid::text AS latest_uuid, latest_value, asleep_s::text AS asleep_s, unknown_s::text AS unknown_s,
                       workouts, duration_s::text AS duration_s, distance_m::text AS distance_m, energy_kcal::text AS energy_kcal
                FROM (SELECT r.person, r.type, r.day, r.source, r.total, (r.agg).* FROM health_store.rollup_source r) r WHERE person = 'p' AND source = 'watch' ORDER BY type
                """)
            let mass = rows.row(where: "type", is: HK.bodyMass)
            #expect(text(mass, "latest_uuid") == S.U(0x004).lowercased() && double(mass, "latest_value") == 80.2,
                    "the latest: same start and end as two others, the smallest uuid: \(mass)")
            let sleep = rows.row(where: "type", is: HK.sleep)
            #expect(text(sleep, "asleep_s") == "8100.000000" && text(sleep, "unknown_s") == "2400.000000", "\(sleep)")
            let workouts = rows.row(where: "type", is: HK.workout)
            #expect(text(workouts, "workouts") == "4" && text(workouts, "distance_m") == "9000.25" && text(workouts, "energy_kcal") == "310.75",
                    "\(workouts)")
            let heart = rows.row(where: "type", is: HK.heartRate)
            #expect(double(heart, "min_value") == 44.5 && double(heart, "max_value") == 152 && text(heart, "n_values") == "4", "\(heart)")
            let steps = rows.row(where: "type", is: HK.steps)
            #expect(text(steps, "total") == "123456909.392858142857143", "micro-units and the numeric rest add exactly: \(steps)")
        }
    }

    /// The merge is really what runs: a level-1 row put wrong stays wrong by the same amount
    /// through an insert-only batch (a recompute would repair it), and a batch that replaces
    /// one of the key's samples recomputes the key and repairs it.
    @Test("an insert-only batch merges into the stored row; a batch replacing a sample recomputes its old and new keys")
    func mergeAndRecompute() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([
                S.quantity(S.U(1), HK.steps, source: "watch", start: "2026-03-10T08:00:00.000+01:00", value: 100),
                S.quantity(S.U(2), HK.steps, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 200),
                S.quantity(S.U(3), HK.heartRate, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 70),
            ])
            #expect(try Self.drift(c).isEmpty)
            // The changed value is made in a CTE of its own: Citus refuses a STABLE function
            // (jsonb_populate_record) called with a column in an UPDATE, and a composite field
            // as an UPDATE's target.
            try c.query("""
                WITH wrong AS MATERIALIZED (
                  SELECT person, type, day, source, jsonb_populate_record(agg, jsonb_build_object('samples', (agg).samples + 100)) AS agg
                  FROM health_store.rollup_source WHERE person = 'p' AND type = $1)
                UPDATE health_store.rollup_source r SET agg = w.agg FROM wrong w
                WHERE r.person = w.person AND r.type = w.type AND r.day = w.day AND r.source = w.source
                """, [HK.steps])

            try store.batch([S.quantity(S.U(4), HK.steps, source: "watch", start: "2026-03-10T10:00:00.000+01:00", value: 1)])
            let held = try c.table("SELECT (agg).samples, total::text AS total FROM health_store.rollup_source WHERE type = $1", [HK.steps])
            #expect(held.rows == [["103", "301.000000"]], "merged into the stored row, not recomputed: \(held.rows)")
            #expect(try c.table("SELECT level FROM health_store.verify_rollups('p')").rows == [["source"]])

            // One batch: new samples on both days, sample 2 re-sent a day later (it leaves the
            // 10th and joins the 11th), and a new sample on an untouched key.
            let counts = try store.batch([
                S.quantity(S.U(5), HK.steps, source: "watch", start: "2026-03-10T11:00:00.000+01:00", value: 5),
                S.quantity(S.U(2), HK.steps, source: "watch", start: "2026-03-11T09:00:00.000+01:00", value: 250),
                S.quantity(S.U(6), HK.steps, source: "watch", start: "2026-03-11T10:00:00.000+01:00", value: 6),
                S.quantity(S.U(7), HK.heartRate, source: "watch", start: "2026-03-10T10:00:00.000+01:00", value: 90),
            ])
            #expect(counts.inserted == 3 && counts.replaced == 1, "\(counts)")
            let drift = try Self.drift(c)
            #expect(drift.isEmpty, "the replaced sample's keys were recomputed: \(drift.joined(separator: "\n"))")
            let days = try c.table("""
                SELECT day::text, (agg).samples, total::text FROM health_store.rollup_source WHERE type = $1 ORDER BY day
                """, [HK.steps])
            #expect(days.rows == [["2026-03-10", "3", "106.000000"], ["2026-03-11", "2", "256.000000"]], "\(days.rows)")
            #expect(try c.table("SELECT mean FROM health.daily_readings WHERE person = 'p'").rows == [["80"]])
        }
    }

    /// A database migrated before the merge (migration 0021) with samples and rollups in it:
    /// the migration adds asleep_s to every stored sleep row, leaves every rollup equal to a
    /// recompute, and the next batches merge into what it left.
    @Test("migrating a database that already holds rollups to 0021 fills asleep_s and keeps every rollup equal to a recompute",
          .disabled(if: TestPostgres.citusURL != nil, "the schema before 0042 never ran on Citus"))
    func upgradeFromBeforeTheMerge() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            let before = Migrator().versioned.filter { $0.version! < 21 }
            #expect(try Migrator(migrations: before).migrate(c).count == before.count)
            let store = Store(connection: c)
            try store.batch([
                S.sleep(S.U(1), source: "watch", start: "2026-03-10T01:00:00.000+01:00", end: "2026-03-10T02:30:00.000+01:00", value: 3),
                S.sleep(S.U(2), source: "watch", start: "2026-03-10T02:30:00.000+01:00", end: "2026-03-10T03:00:00.000+01:00", value: 2),
                S.quantity(S.U(3), HK.steps, source: "watch", start: "2026-03-10T08:00:00.000+01:00", value: 100),
            ])

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == Migrator().versioned.compactMap(\.version).filter { $0 >= 21 },
                    "the merge migration and the later ones are pending: \(applied.map(\.name))")
            let sleep = try c.table("SELECT (agg).asleep_s::text, (total = 90)::text FROM health_store.rollup_source WHERE type = $1", [HK.sleep])
            #expect(sleep.rows == [["5400.000000", "true"]], "asleep_s filled by the migration's rebuild: \(sleep.rows)")
            #expect(try Self.drift(c).isEmpty)

            // The next batch merges into the rows the migration left.
            try store.batch([
                S.sleep(S.U(4), source: "watch", start: "2026-03-10T03:00:00.000+01:00", end: "2026-03-10T03:30:00.000+01:00", value: 4),
                S.quantity(S.U(5), HK.steps, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 50),
            ])
            let drift = try Self.drift(c)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
            let minutes = try c.table("SELECT sleep_min::float8 FROM health.daily_summary WHERE person = 'p'")
            #expect(minutes.rows == [["120"]], "90 + 30 minutes asleep, awake left out: \(minutes.rows)")
        }
    }
}

extension RollupDeltaTests {
    /// A database whose stored sleep was made under the rule before 0066 (a night with only time
    /// in bed stored as 0 minutes asleep, with its ranking): migrating applies 0066, whose queued
    /// task recomputes levels 2 and 3 under the current rule at the end of the same run.
    @Test("0066 redoes a night with only time in bed stored as 0 minutes asleep: sleep_min NULL, no ranking, rollups equal a recompute")
    func inBedNightsUpgrade() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.sleep(S.U(1), source: "phone", start: "2026-03-01T22:30:00.000+01:00", end: "2026-03-02T06:38:00.000+01:00", value: 0),
            ])
            // What the rule before 0066 stored for that night.
            try c.execute(script: """
                UPDATE health_store.rollup_day_type SET value = 0, asleep_min = 0, ranked_sources = ARRAY['phone'] WHERE person = 'p';
                UPDATE health_store.rollup_source SET rank = 1 WHERE person = 'p';
                UPDATE health_store.rollup_day SET sleep_min = 0 WHERE person = 'p';
                DELETE FROM health_store.schema_migrations WHERE version = 66;
                """)
            #expect(try db.scalar("SELECT sleep_min FROM health.daily_summary", as: Double.self) == 0)
            #expect(try Self.drift(c).isEmpty == false, "the old rule's rows differ from a recompute")

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == [66])
            #expect(try c.table("SELECT day::text, sleep_min FROM health.daily_summary").rows == [["2026-03-02", nil]])
            #expect(try c.table("SELECT source, asleep_min, in_bed_min FROM health.daily_sleep").rows == [["phone", nil, "488"]])
            #expect(try c.table("SELECT * FROM health.daily_source_totals").count == 0)
            #expect(try c.table("SELECT * FROM health_store.migration_tasks").count == 0)
            let drift = try Self.drift(c)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
        }
    }

    /// A database whose rollups were made under the rules before 0105 (a known type sent with
    /// another kind ranked with no value; sleep of another kind counted as unknown; sleep losers
    /// by time in bed): migrating applies 0105, whose queued tasks make them again.
    @Test("0105 redoes the rollups of a person holding valueless sources or sleep of another kind: views as the current rules say, rollups equal a recompute")
    func valuelessSourcesUpgrade() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch(try ViewsRulesTests.otherKinds())
            // What the rules before 0105 stored.
            try c.execute(script: """
                UPDATE health_store.rollup_source SET rank = 2 WHERE person = 'p' AND source = 'phone';
                UPDATE health_store.rollup_day_type SET ranked_sources = ARRAY['watch', 'phone'], alternatives = '{"phone": null}'
                  WHERE person = 'p' AND rule = 'total';
                -- The one sleep key's aggregates, made apart (Citus refuses a stable function of a column in an UPDATE).
                DO $$ DECLARE v health_store.source_aggregates; BEGIN
                  SELECT jsonb_populate_record(r.agg, '{"unknown_s": 3600}') INTO STRICT v
                  FROM health_store.rollup_source r WHERE r.person = 'p' AND r.rule = 'sleep';
                  UPDATE health_store.rollup_source SET agg = v WHERE person = 'p' AND rule = 'sleep';
                END $$;
                UPDATE health_store.rollup_day_type SET unknown_min = 60 WHERE person = 'p' AND rule = 'sleep';
                DELETE FROM health_store.schema_migrations WHERE version = 105;
                """)
            #expect(try Self.drift(c).isEmpty == false, "the old rules' rows differ from a recompute")

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == [105])
            #expect(try c.table("SELECT source, rank FROM health.daily_source_totals WHERE metric = 'steps'").rows == [["watch", "1"]])
            #expect(try c.table("SELECT alternatives::text FROM health.daily_totals WHERE metric = 'steps'").rows == [["{}"]])
            #expect(try c.table("SELECT unknown_min FROM health.daily_sleep").rows == [["0"]])
            #expect(try c.table("SELECT * FROM health_store.migration_tasks").count == 0)
            let drift = try Self.drift(c)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
        }
    }

    @Test("0107 redoes the day values of a person with a sleep priority: a night with no sleep shows the most time in bed again")
    func inBedPriorityUpgrade() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.sleep(S.U(1), source: "phone", start: "2026-03-01T22:30:00.000+01:00", end: "2026-03-02T06:30:00.000+01:00", value: 0),
                S.sleep(S.U(2), source: "watch", start: "2026-03-02T05:00:00.000+01:00", end: "2026-03-02T06:00:00.000+01:00", value: 0),
            ])
            try c.query("SELECT health.set_source_priority('p', 'HKCategoryTypeIdentifierSleepAnalysis', ARRAY['watch'])")
            #expect(try c.table("SELECT source, in_bed_min FROM health.daily_sleep").rows == [["phone", "480"]])
            // What the rule before 0107 stored: the listed watch shown.
            try c.execute(script: """
                UPDATE health_store.rollup_day_type SET source = 'watch', in_bed_min = 60 WHERE person = 'p' AND rule = 'sleep';
                DELETE FROM health_store.schema_migrations WHERE version = 107;
                """)
            #expect(try Self.drift(c).isEmpty == false, "the old rule's row differs from a recompute")

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == [107])
            #expect(try c.table("SELECT source, in_bed_min FROM health.daily_sleep").rows == [["phone", "480"]])
            #expect(try c.table("SELECT * FROM health_store.migration_tasks").count == 0)
            let drift = try Self.drift(c)
            #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
        }
    }
}
