import AppleExport
import DemoData
import Foundation
import Hashing
import HealthPayload
import Pipeline
import Postgres
import Testing
import TestSupport
import Warehouse

/// The twins rule (docs/apple-export.md, "Twins"): a record of the export equal to a sample healthd or Stridee
/// pushed (same person, type, start, end and value, whatever the source is called) is that
/// sample, whichever came first; nothing is counted twice in any view.
@Suite("Twins of imported records and pushed samples")
struct TwinTests {
    static let phone = "com.apple.health.1F0E2C3B-AAAA-4BBB-8CCC-000000000001"
    static let watch = "com.apple.health.1F0E2C3B-AAAA-4BBB-8CCC-000000000002"

    /// What healthd sends of the fixture's 2024-03-10: the same readings to the millisecond
    /// (the export writes whole seconds), under Apple's own uuids and the bundle as source.
    static func pushedSamples() -> [DemoSample] {
        func at(_ text: String) -> Int64 { Bodies.instant(text).millisecondsSinceEpoch }
        var n = 0
        func uuid() -> String {
            n += 1
            return "0E5C1D2A-0000-4000-8000-" + String(format: "%012d", n)
        }
        return [
            DemoSample(uuid: uuid(), type: .steps, source: phone, start: at("2024-03-10T08:00:00.123+01:00"),
                       end: at("2024-03-10T08:10:00.456+01:00"), value: "812"),
            DemoSample(uuid: uuid(), type: .distance, source: phone, start: at("2024-03-10T08:00:00.123+01:00"),
                       end: at("2024-03-10T08:10:00.456+01:00"), value: "612.3"),
            DemoSample(uuid: uuid(), type: .heartRate, source: watch, start: at("2024-03-10T08:04:00.250+01:00"),
                       end: at("2024-03-10T08:04:00.250+01:00"), value: "72"),
            DemoSample(uuid: uuid(), type: .sleep, source: watch, start: at("2024-03-09T23:10:00.000+01:00"),
                       end: at("2024-03-10T00:10:00.000+01:00"), value: "3", name: "asleepCore"),
            DemoSample(uuid: uuid(), type: .sleep, source: watch, start: at("2024-03-10T00:10:00.000+01:00"),
                       end: at("2024-03-10T01:40:00.000+01:00"), value: "4", name: "asleepDeep"),
            DemoSample(uuid: uuid(), type: .sleep, source: watch, start: at("2024-03-10T01:40:00.000+01:00"),
                       end: at("2024-03-10T01:50:00.000+01:00"), value: "2", name: "awake"),
            DemoSample(uuid: uuid(), type: .sleep, source: watch, start: at("2024-03-10T01:50:00.000+01:00"),
                       end: at("2024-03-10T02:50:00.000+01:00"), value: "5", name: "asleepREM"),
            DemoSample(uuid: uuid(), type: .bodyMass, source: "com.withings.wiscale2", start: at("2024-03-10T07:30:00.000+01:00"),
                       end: at("2024-03-10T07:30:00.000+01:00"), value: "68.0388555"),
            DemoSample(uuid: uuid(), type: .workout, source: watch, start: at("2024-03-10T18:00:00.400+01:00"),
                       end: at("2024-03-10T18:30:00.300+01:00"), activityType: 37, activityName: "running",
                       durationSeconds: "1800", distanceMeters: "5200", activeEnergyKilocalories: "310"),
        ]
    }

    /// Stores the pushed samples as one healthd batch, through the receiver's own call.
    static func push(_ db: TestDatabase, person: String = "default", samples: [DemoSample] = pushedSamples(),
                     window bounds: (String, String) = ("2024-03-09T12:00:00.000+01:00", "2024-03-11T00:00:00.000+01:00")) throws -> StoreCounts {
        let window = (Bodies.instant(bounds.0).millisecondsSinceEpoch, Bodies.instant(bounds.1).millisecondsSinceEpoch)
        let envelope = DemoEnvelope(exportId: "0E5C1D2A-0000-4000-8000-FFFFFFFFFFFF", generatedAt: window.1, windowStart: window.0,
                                    windowEnd: window.1, occasionStart: window.0, occasionEnd: window.1, offsetMinutes: 60)
        let body = DemoEncoder.json(envelope, samples)
        guard case .batches(let batches) = try PayloadDecoder.decode(json: body) else { throw AppleExportError("not a batch") }
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
        defer { pool.close() }
        return try BatchStore(pool: pool).store(batches, person: person, origin: .http, bodySHA256: Array(repeating: 1, count: 32))
    }

    /// What the daily views say of 2024-03-10: the totals, readings and sleep once.
    static func day(_ db: TestDatabase) throws -> [String] {
        try db.rows("""
            SELECT 'total ' || metric || ' ' || value || ' ' || alternatives::text FROM health.daily_totals WHERE day = '2024-03-10' AND metric <> 'sleep_min'
            UNION ALL SELECT 'reading ' || metric || ' ' || min || ' ' || mean || ' ' || max || ' ' || samples FROM health.daily_readings WHERE day = '2024-03-10'
            UNION ALL SELECT 'sleep ' || asleep_min || ' ' || core_min || ' ' || deep_min || ' ' || rem_min || ' ' || awake_min || ' ' || in_bed_min || ' ' || alternatives::text
                      FROM health.daily_sleep WHERE day = '2024-03-10'
            UNION ALL SELECT 'workouts ' || workouts || ' ' || duration_s || ' ' || distance_m FROM health.daily_workouts WHERE day = '2024-03-10'
            UNION ALL SELECT 'summary ' || steps || ' ' || distance_m || ' ' || sleep_min || ' ' || heart_rate_mean || ' ' || workouts FROM health.daily_summary WHERE day = '2024-03-10'
            ORDER BY 1
            """).map { $0[0] ?? "∅" }
    }

    @Test("export first, then healthd: the pushed copies replace their twins; every view counts each reading once; the route moves to the pushed workout")
    func exportThenPush() throws {
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            let before = try Self.day(db)
            let counts = try Self.push(db)
            #expect(counts.inserted == 9)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 28, "9 imported rows gave way to 9 pushed ones")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE origin = 'export'", as: Int.self) == 19)
            #expect(try Self.day(db) == before, "the day's values are what the export alone gave")
            #expect(before.contains("total steps 812 {\"Anna’s Apple Watch\": 790}"), "\(before)")
            #expect(before.contains("reading heart_rate_bpm 72 81 90 2"), "\(before)")
            #expect(before.contains("sleep 210 60 90 60 10 0 {\"Anna’s iPhone\": 0}"), "\(before)")
            #expect(before.contains("workouts 1 1800 5200"), "\(before)")
            let workout = try db.rows("SELECT origin, source, route_points FROM health.workouts WHERE day = '2024-03-10'")
            #expect(workout.map { $0.map { $0 ?? "∅" } } == [["healthd", Self.watch, "3"]], "the imported route belongs to the pushed workout")
            #expect(try db.scalar("SELECT count(*) FROM health_store.workout_routes", as: Int.self) == 2)
            #expect(try db.rollupDifferences() == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.coverings", as: Int.self) == 0)
        }
    }

    @Test("healthd first, then the export: its twins are matched, not stored; the end state is that of the other order")
    func pushThenExport() throws {
        var ends: [[String: [String]]] = []
        try TestPostgres.withDatabase { db in
            _ = try Self.push(db)
            let (summary, _) = try Importing(database: db).run(Exports.fixtureFolder.path)
            #expect(summary.matched == 9)
            #expect(summary.new == 28 - 9)
            #expect(summary.routes == 2, "the running route is stored under the pushed workout")
            #expect(try db.scalar("SELECT matched FROM health_store.deliveries WHERE origin = 'export'", as: Int.self) == 9)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 28)
            #expect(try db.rows("SELECT origin, route_points FROM health.workouts WHERE day = '2024-03-10'").map { [$0[0], $0[1]] } == [["healthd", "3"]])
            #expect(try db.rollupDifferences() == 0)
            // Importing again matches again and adds nothing.
            let again = try Importing(database: db).run(Exports.fixtureXML.path).0
            #expect(again.matched == 9 && again.new == 0)
            ends.append(try db.importedRows())
        }
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            _ = try Self.push(db)
            ends.append(try db.importedRows())
        }
        for table in ends[0].keys.sorted() {
            #expect(ends[0][table] == ends[1][table], "\(table): healthd then export equals export then healthd")
        }
    }

    @Test("either order, a twin names the pushed sample's source: health.sources shows the export's name for each bundle identifier; a rename wins, and no import overwrites it")
    func namesFromTwins() throws {
        let expected = [
            // The phone's records write a no-break space in its name, as the Health app may.
            [Self.phone, "Anna’s\u{00A0}iPhone", "export"], [Self.watch, "Anna’s Apple Watch", "export"],
            ["com.withings.wiscale2", "Withings", "export"],
        ]
        func names(_ db: TestDatabase) throws -> [[String?]] {
            try db.rows("""
                SELECT source, name, named_by FROM health.sources WHERE person = 'default' AND source IN ($1, $2, 'com.withings.wiscale2')
                ORDER BY source COLLATE "C"
                """, [Self.phone, Self.watch])
        }
        try TestPostgres.withDatabase { db in
            _ = try Self.push(db)
            #expect(try names(db).allSatisfy { $0[1] == $0[0] && $0[2] == nil }, "no name before the export")
            try Importing(database: db).run(Exports.fixtureFolder.path)
            let learned = try names(db)
            #expect(learned == expected, "\(learned)")
            // The export's own sources keep their names, which are the sources themselves.
            #expect(try db.rows("SELECT name, named_by FROM health.sources WHERE source = 'Omron'") == [["Omron", nil]])

            let url = ["DATABASE_URL": db.connectionString]
            let renamed = try CLIProcess.run(["source", "rename", Self.watch, "Anna's watch <b>"], environment: url)
            #expect(renamed.status == 0, "\(renamed.stderr)")
            try Importing(database: db).run(Exports.fixtureXML.path)
            #expect(try names(db)[1] == [Self.watch, "Anna's watch <b>", "person"], "an import never overwrites a name the person set")
            let cleared = try CLIProcess.run(["source", "rename", Self.watch, ""], environment: url)
            #expect(cleared.status == 0, "\(cleared.stderr)")
            let cleared2 = try names(db)
            #expect(cleared2 == expected, "cleared: the learned name again: \(cleared2)")
        }
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            _ = try Self.push(db)
            let replaced = try names(db)
            #expect(replaced == expected, "the pushed copies that replace their imported twins learn the same names: \(replaced)")
        }
    }

    @Test("a sample differing in value, or by a second or more, is no twin; another person's samples are none either")
    func notTwins() throws {
        try TestPostgres.withDatabase { db in
            var samples = Self.pushedSamples()
            samples[0].value = "813"                                       // another value
            samples[2].start += 1_000; samples[2].end += 1_000              // a second later
            samples = Array(samples.prefix(3))
            _ = try Self.push(db, samples: samples)
            _ = try Self.push(db, person: "someone-else")
            let (summary, _) = try Importing(database: db).run(Exports.fixtureFolder.path)
            #expect(summary.matched == 1, "only the distance")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'default'", as: Int.self) == 28 - 1 + 3)
            #expect(try db.scalar("SELECT samples FROM health.daily_readings WHERE day = '2024-03-10' AND metric = 'heart_rate_bpm' AND person = 'default'",
                                  as: Int.self) == 3)
        }
    }

    @Test("imported records are known by the person's export deliveries, wherever they came from: after person export and person import, a push of the same readings still replaces them")
    func twinsAfterMove() throws {
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("twins-move-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
            defer { pool.close() }
            _ = try PersonExporter(pool: pool).export(person: "default", to: folder)
            let moved = try PersonImporter(pool: pool).run(person: "lee", from: folder)
            #expect(moved.samples == 28 && moved.failures.isEmpty, "\(moved)")
            // What may_hold_twins asks instead of the samples: no imported record without an
            // export delivery of its person.
            #expect(try db.scalar("""
                SELECT count(*) FROM health_store.sample_rows s
                WHERE s.origin = 'export'
                  AND NOT EXISTS (SELECT 1 FROM health_store.deliveries d WHERE d.person = s.person AND d.origin = 'export')
                """, as: Int.self) == 0)
            let counts = try Self.push(db, person: "lee")
            #expect(counts.inserted == 9)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'lee'", as: Int.self) == 28, "9 imported rows gave way")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE person = 'lee' AND origin = 'export'", as: Int.self) == 19)
            #expect(try db.rollupDifferences("lee") == 0)
            #expect(try db.scalar("SELECT count(*) FROM pg_indexes WHERE indexname = 'sample_rows_imported'", as: Int.self) == 0,
                    "no index of every imported record: migration 0099")
        }
    }

    @Test("a Health Auto Export workout after the import is the imported workout: counted once, none of its fields overwritten, its heart rate filled in")
    func haeWorkoutAfterImport() throws {
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            let columns = "uuid, origin, activity_name, duration_s, distance_m, energy_kcal, source, route_points"
            let before = try db.rows("SELECT \(columns) FROM health.workouts WHERE day = '2024-03-10'")
            #expect(before.first?[1] == "export" && before.first?[4] == "5200")
            // Another name, distance, duration and energy for the same session, within a second.
            let body = try HAEDecoder.decode(HAEBodies.body(workouts: [HAEBodies.workout(
                id: "F1F1F1F1-1111-4222-8333-444444444444", name: "Outdoor Walk", start: "2024-03-10 18:00:00 +0100",
                end: "2024-03-10 18:30:00 +0100", duration: 1790, distanceKm: 4, heartRates: [130, 140])]), aggregation: nil)
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let counts = try HAEStore.store(body, person: "default", bodySHA256: Array(repeating: 7, count: 32), pool: pool)
            #expect(counts.samples.inserted == 0 && counts.samples.matched == 1 && counts.workouts == 1)
            #expect(try db.rows("SELECT \(columns) FROM health.workouts WHERE day = '2024-03-10'") == before, "the imported workout, unchanged")
            #expect(try db.scalar("SELECT heart_rate_mean FROM health.workouts WHERE day = '2024-03-10'", as: Double.self) == 135)
            #expect(try db.rows("SELECT workouts, distance_m, energy_kcal FROM health.daily_workouts WHERE day = '2024-03-10'")
                        .map { $0.map { $0 ?? "∅" } } == [["1", "5200", "310"]])
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE origin = 'hae'", as: Int.self) == 0)
            #expect(try db.rollupDifferences() == 0)
        }
    }

    @Test("a Stridee workout body after the import takes the imported workout's place and its route")
    func strideeAfterImport() throws {
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            let header = """
                {"uuid":"7D3E4F50-1111-4222-8333-444455556666","activityType":37,"serverType":"RUNNING","sourceName":"Stridee",
                 "startDate":"2024-03-10T17:00:00.2Z","endDate":"2024-03-10T17:30:00.1Z","duration":1800}
                """
            try db.query("""
                SELECT health_store.store_workout('default', true, false, $1::jsonb, '\\x01'::bytea, NULL, NULL, clock_timestamp())
                """, [header])
            let workouts = try db.rows("SELECT uuid, origin, route_points FROM health.workouts WHERE day = '2024-03-10'")
            #expect(workouts.map { $0.map { $0 ?? "∅" } } == [["7d3e4f50-1111-4222-8333-444455556666", "stridee", "3"]])
            #expect(try db.rollupDifferences() == 0)
        }
    }
}
