import Civil
import DemoData
import Foundation
import Hashing
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

/// `person list|export|import|delete` (docs/people.md), run as the built binary against a real
/// PostgreSQL filled through every way in.
@Suite("person")
struct PersonTests {
    /// Views whose rows are about deliveries, which a round trip makes anew (their received
    /// times and counts are the import's own): left out of the comparison.
    static let deliveryViews: Set<String> = ["deliveries", "export_runs", "freshness", "quarantine"]
    /// Columns that are when a row was received: the round trip's own time.
    static let receivedColumns: Set<String> = ["first_received_at", "last_received_at", "received_at"]

    /// Every row of `person` in every health view with a person column (but `deliveryViews`),
    /// received times left out, sorted: view name → rows as text.
    static func snapshot(_ db: TestDatabase, person: String) throws -> [String: [String]] {
        let views = try db.query("""
            SELECT c.table_name, array_agg(quote_ident(c.column_name) ORDER BY c.ordinal_position)::text
            FROM information_schema.columns c JOIN information_schema.views v USING (table_schema, table_name)
            WHERE c.table_schema = 'health' AND c.column_name <> ALL ($1::text[])
            GROUP BY c.table_name HAVING bool_or(c.column_name = 'person')
            """, [PostgresArrayParameter.text(Array(receivedColumns))])
        var out: [String: [String]] = [:]
        for view in views {
            let name: String = try view.decode(0)
            guard !deliveryViews.contains(name) else { continue }
            let columns = try view.decode(1, as: String.self).dropFirst().dropLast()
            out[name] = try db.query("SELECT (ROW(\(columns)))::text AS r FROM health.\(name) WHERE person = $1 ORDER BY 1", [person])
                .map { try $0.decode(0) }
        }
        return out
    }

    /// Rows of `person` in every table of `health_store.person_tables`.
    static func storedRows(_ db: TestDatabase, person: String) throws -> Int {
        try db.scalar("SELECT sum(held)::bigint FROM health_store.person_rows($1)", [person], as: Int.self) ?? -1
    }

    /// How `person`'s samples from the Health app's export are stored: how many hold their shared
    /// members apart (a context) and their creation date as seconds, their payloads' bytes, and
    /// the person's sets of shared members.
    static func exportStorage(_ db: TestDatabase, person: String) throws -> [Int] {
        let row = try #require(try db.query("""
            SELECT count(context)::int, count(created_s)::int, coalesce(sum(pg_column_size(payload)), 0)::int,
                   (SELECT count(*)::int FROM health_store.export_contexts x WHERE x.person = $1)
            FROM health_store.sample_rows WHERE person = $1 AND origin = 'export'
            """, [person]).first)
        return try (0..<4).map { try row.decode($0) }
    }

    /// A person filled through every way in: healthd bodies (`ingest`), Stridee workouts with
    /// streams and routes and wellness bodies, an Apple Health export (samples, routes, activity
    /// summaries), Health Auto Export files (minute buckets, a workout with its heart rate and
    /// route, sleep segments, the other arrays), a time zone, a source priority, a source's name and a staleness setting.
    static func fill(_ db: TestDatabase, person: String, folder: String, days: Int, seed: Int) throws {
        let generated = try CLIProcess.run(["generate", "--days", "\(days)", "--start", "2026-03-01", "--seed", "\(seed)",
                                            "--out", "\(folder)/backlog", "--stridee-out", "\(folder)/stridee"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let export = try CLIProcess.run(["generate", "--days", "\(days)", "--start", "2026-01-01", "--seed", "\(seed + 100)",
                                         "--format", "apple-export", "--out", "\(folder)/export"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try CLIProcess.run(["set-time-zone", "Europe/Berlin", "--person", person, "--database-url", db.connectionString]).status == 0)
        // A healthd workout sent without name, distance or energy, and Health Auto Export's copy of it that has
        // them: what it fills (health_store.workout_fills) goes with the person.
        let dance = "F1F2F3F4-0000-4000-8000-" + String(format: "%012d", seed)
        try Data(Bodies.workout(uuid: dance, start: "2026-02-25T18:00:00.000+01:00", end: "2026-02-25T18:45:00.000+01:00",
                                activityType: 14, name: nil, distance: nil, energy: nil))
            .write(to: URL(fileURLWithPath: "\(folder)/backlog/zz-dance.json"))
        let ingest = try CLIProcess.run(["ingest", "\(folder)/backlog", "--person", person, "--database-url", db.connectionString])
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let imported = try CLIProcess.run(["import-apple-health", "\(folder)/export/export.zip", "--person", person,
                                           "--database-url", db.connectionString])
        #expect(imported.status == 0, "\(imported.stderr)")
        try FileManager.default.createDirectory(atPath: "\(folder)/hae/points", withIntermediateDirectories: true)
        try Data(HAEBodies.body(workouts: [HAEBodies.workout(id: nil, name: "Dance", start: "2026-02-25 18:00:00 +0100",
                                                            end: "2026-02-25 18:45:00 +0100", duration: 2700, distanceKm: 1.5,
                                                            energyKcal: 310)]))
            .write(to: URL(fileURLWithPath: "\(folder)/hae/points/dance.json"))
        try Data(HAEDemo(start: CivilDate("2026-02-20")!, days: 2, seed: UInt64(seed)).haeBody()).write(to: URL(fileURLWithPath: "\(folder)/hae/minutes.json"))
        for fixture in ["hae-workouts-v2.good.json", "hae-records.good.json", "hae-sleep-segments.good.json"] {
            try Data(try Bodies.fixture(fixture)).write(to: URL(fileURLWithPath: "\(folder)/hae/points/\(fixture)"))
        }
        for (path, grouping) in [("\(folder)/hae/minutes.json", ["--hae-aggregation", "minutes"]), ("\(folder)/hae/points", [])] {
            let hae = try CLIProcess.run(["ingest", path, "--person", person, "--database-url", db.connectionString] + grouping)
            #expect(hae.status == 0, "\(hae.stderr)")
        }
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
        defer { pool.close() }
        let stridee = StrideeStore(pool: pool)
        for name in try FileManager.default.contentsOfDirectory(atPath: "\(folder)/stridee").sorted() {
            let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(folder)/stridee/\(name)")))
            if name.contains("-workout-") {
                _ = try stridee.storeWorkout(try StrideeDecoder.decodeWorkout(body), person: person, connect: true, bodySHA256: SHA256.hash(body))
            } else {
                _ = try stridee.storeWellness(try StrideeDecoder.decodeWellness(body), person: person, connect: true)
            }
        }
        let source = try #require(try db.scalar("""
            SELECT min(source) FROM health_store.samples WHERE person = $1 AND type = 'HKQuantityTypeIdentifierStepCount'
            """, [person], as: String.self))
        try db.query("SELECT health.set_source_priority($1, 'HKQuantityTypeIdentifierStepCount', ARRAY[$2])", [person, source])
        try db.query("SELECT health.set_source_name($1, $2, 'My phone')", [person, source])
        try db.query("SELECT health.set_stale_after($1, interval '9 hours')", [person])
    }

    @Test("export, delete, import: every health view of the person equal row for row; another person untouched")
    func roundTrip() throws {
        let folder = NSTemporaryDirectory() + "hw-person-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            try Self.fill(db, person: "alice", folder: "\(folder)/alice", days: 8, seed: 3)
            try Self.fill(db, person: "bob", folder: "\(folder)/bob", days: 3, seed: 5)
            // Marks as a reconciliation leaves them (by its own writer), and its record.
            let marker = try db.connect()
            try marker.withTransaction { connection in
                try connection.query("SELECT health_store.lock_person('alice')")
                try connection.query("""
                    SELECT health_store.mark_deleted('alice', ARRAY(SELECT uuid FROM health_store.samples
                             WHERE person = 'alice' AND type = 'HKQuantityTypeIdentifierStepCount' ORDER BY uuid LIMIT 25),
                           '2026-03-09T00:00:00Z', '2026-03-10T08:00:00Z')
                    """)
                try connection.query("""
                    INSERT INTO health_store.reconciliations (person, export_date, reconciled_at, path, deleted)
                    VALUES ('alice', '2026-03-09T00:00:00Z', '2026-03-10T08:00:00Z', '/exports/export.zip', 25)
                    """)
            }
            marker.close()
            let alice = try Self.snapshot(db, person: "alice"), bob = try Self.snapshot(db, person: "bob")
            #expect(alice["deleted_samples"]?.count == 25)
            for view in ["samples", "workouts", "workout_routes", "workout_streams", "wellness", "activity_summaries", "settings",
                         "hae_records"] {
                #expect(alice[view]?.isEmpty == false, "alice has \(view)")
            }
            #expect(alice["workouts"]!.contains { $0.contains(",stridee,") || $0.contains(",both,") })
            #expect(alice["workouts"]!.contains { $0.contains(",hae,") })
            #expect(alice["workouts"]!.contains { $0.contains(",14,Dance,2700,1500,310,") && $0.contains(",healthd,") },
                    "healthd's dance filled by the app's copy: \(alice["workouts"]!.filter { $0.contains("Dance") })")

            // The frame of her days: the offset her phone wrote its latest batch in (not UTC).
            // (health.today in a statement of its own: on Citus a function reading a table cannot
            // run inside a query over a distributed one.)
            func frame() throws -> String {
                let offset = try db.scalar("SELECT sent_offset::text FROM health_store.persons WHERE person = 'alice'", as: String.self)
                return (offset ?? "NULL") + " " + (try db.scalar("SELECT health.today('alice')::text", as: String.self) ?? "")
            }
            let offsetBefore = try frame()
            #expect(!offsetBefore.hasPrefix("0 ") && !offsetBefore.hasPrefix("NULL "), "the test's batches are written in an offset: \(offsetBefore)")
            let stored = try Self.exportStorage(db, person: "alice")
            #expect(stored[0] > 0 && stored[1] > 0 && stored[3] > 0, "the export's records hold members and dates apart: \(stored)")

            let url = ["--database-url", db.connectionString]
            let exported = try CLIProcess.run(["person", "export", "alice", "--to", "\(folder)/out"] + url)
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(FileManager.default.fileExists(atPath: "\(folder)/out/hae/fills.json"))
            let deleted = try CLIProcess.run(["person", "delete", "alice", "--yes"] + url)
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(deleted.stdout.contains("sample_rows\t\(try #require(alice["samples"]).count)"), "\(deleted.stdout)")
            #expect(try Self.storedRows(db, person: "alice") == 0)
            #expect(try Self.snapshot(db, person: "bob") == bob)

            let imported = try CLIProcess.run(["person", "import", "alice", "--from", "\(folder)/out"] + url)
            #expect(imported.status == 0, "\(imported.stderr)")
            let after = try Self.snapshot(db, person: "alice")
            for (view, rows) in alice {
                let same = after[view] == rows
                #expect(same, "health.\(view): \(rows.count) rows before, \(after[view]?.count ?? 0) after; first differing: \(Self.firstDifference(rows, after[view] ?? []))")
            }
            #expect(try Self.snapshot(db, person: "bob") == bob)
            #expect(try frame() == offsetBefore, "before: 0 (the exported bodies' generatedAt is UTC), today the UTC date")
            #expect(try Self.exportStorage(db, person: "alice") == stored,
                    "the export's records stored as compactly as the import stored them (contexts, dates, payload bytes, member sets)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('alice')", as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.reconciliations WHERE person = 'alice' AND deleted = 25",
                                  as: Int.self) == 1)
        }
    }

    @Test("a Stridee ride's heart rate, power and cadence come back point for point through export and import, whatever the database's collation")
    func streamsRoundTrip() throws {
        let folder = NSTemporaryDirectory() + "hw-person-streams-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let times = (0..<6).map { "2026-10-01T06:0\(3 + $0):1\($0)Z" }
            func stream(_ base: Double) -> String {
                "[" + times.enumerated().map { StrideeBody.sample($0.element, String(base + Double($0.offset) * 1.5)) }
                    .joined(separator: ",") + "]"
            }
            let body = StrideeBody.workout(["serverType": "\"CYCLING\"", "activityType": "13", "heartRate": stream(121),
                                            "runningPower": stream(240), "cyclingPower": stream(201), "cyclingCadence": stream(84)])
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            _ = try StrideeStore(pool: pool).storeWorkout(try StrideeDecoder.decodeWorkout(Array(body.utf8)), person: "rider",
                                                          connect: true, bodySHA256: SHA256.hash(Array(body.utf8)))
            pool.close()
            let points = "SELECT stream || ' ' || t::text || ' ' || value || ' ' || unit FROM health.workout_streams WHERE person = 'rider' ORDER BY 1"
            let before: [String] = try db.query(points).map { try $0.decode(0) }
            #expect(before.count == 24, "six points in each of the four streams: \(before)")

            let url = ["--database-url", db.connectionString]
            #expect(try CLIProcess.run(["person", "export", "rider", "--to", "\(folder)/out"] + url).status == 0)
            let written = try String(contentsOfFile: "\(folder)/out/workouts/\(StrideeBody.uuid.lowercased()).json", encoding: .utf8)
            for name in ["heartRate", "runningPower", "cyclingPower", "cyclingCadence"] {
                #expect(written.contains("\"\(name)\": [{"), "the body names the \(name) stream as healthkit.v1 does")
            }
            #expect(try CLIProcess.run(["person", "delete", "rider", "--yes"] + url).status == 0)
            let imported = try CLIProcess.run(["person", "import", "rider", "--from", "\(folder)/out"] + url)
            #expect(imported.status == 0, "\(imported.stderr)")
            let after: [String] = try db.query(points).map { try $0.decode(0) }
            #expect(after == before, "every stream point back: \(Self.firstDifference(before, after))")
        }
    }

    static func firstDifference(_ a: [String], _ b: [String]) -> String {
        let onlyA = Set(a).subtracting(b).sorted().first, onlyB = Set(b).subtracting(a).sorted().first
        return "before only: \(onlyA ?? "-") | after only: \(onlyB ?? "-")"
    }
}
