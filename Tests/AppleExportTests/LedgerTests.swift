import Civil
import DemoData
import Foundation
import Pipeline
import Postgres
import Testing
import TestSupport
import Warehouse

/// `health_store.ingested_files` has one writer (`FileLedger`) and one meaning per column,
/// whether `ingest` or `import-apple-health` read the file.
@Suite("The ledger of files read")
struct LedgerTests {
    /// An export of 1000 activity summaries and then one Record: its first batch (the
    /// summaries) has no delivery, its second (final) one has.
    static func summariesThenRecord() throws -> URL {
        let start = CivilDate("2021-01-01")!
        let summaries = (0..<1000).map { day in
            " <ActivitySummary dateComponents=\"\(start.adding(days: day))\" activeEnergyBurned=\"500\" activeEnergyBurnedGoal=\"600\" activeEnergyBurnedUnit=\"Cal\" appleExerciseTime=\"30\" appleExerciseTimeGoal=\"30\" appleStandHours=\"10\" appleStandHoursGoal=\"12\"/>\n"
        }
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n" + summaries.joined()
            + " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" startDate=\"2024-03-10 08:00:00 +0100\" endDate=\"2024-03-10 08:01:00 +0100\" value=\"10\"/>\n</HealthData>\n"
        let folder = try Exports.temporaryFolder()
        let file = folder.appendingPathComponent("export.xml")
        try Data(xml.utf8).write(to: file)
        return file
    }

    /// Each row beside what its deliveries say: path, batches, deliveries, samples, their samples, runs, hash length.
    static func rowsBesideDeliveries(_ db: TestDatabase) throws -> [[String?]] {
        try db.rows("""
            SELECT f.path, f.batches::text, count(d.*)::text, f.samples::text, coalesce(sum(d.samples), 0)::text,
                   f.inserted::text, coalesce(sum(d.inserted), 0)::text, f.runs::text, length(f.sha256)::text
            FROM health_store.ingested_files f
            LEFT JOIN health_store.deliveries d ON d.person = f.person AND d.file = f.path
            GROUP BY f.person, f.path ORDER BY f.path
            """)
    }

    @Test("an ingested file and an imported export: batches are their deliveries, samples and inserted theirs, one run, a 32-byte hash")
    func oneMeaning() throws {
        let export = try Self.summariesThenRecord()
        defer { try? FileManager.default.removeItem(at: export.deletingLastPathComponent()) }
        let backlog = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: backlog) }
        let body = { (n: Int) in Bodies.json(samples: [Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-00000000000\(n)", start: "2026-08-21T10:25:30.000+02:00", value: "10")]) }
        try Data(body(1) + [0x0A] + body(2) + [0x0A]).write(to: backlog.appendingPathComponent("bodies.jsonl"))
        try TestPostgres.withDatabase { db in
            let (summary, _) = try Importing(database: db).run(export.path)
            #expect(summary.activitySummaries == 1000 && summary.new == 1 && summary.batches == 1)
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
            defer { pool.close() }
            let ingested = Ingester(pool: pool, options: IngestOptions()).run([backlog.path])
            #expect(ingested.filesIngested == 1 && ingested.batches == 2)
            let rows = try Self.rowsBesideDeliveries(db)
            #expect(rows.count == 2)
            for row in rows {
                #expect(row[1] == row[2], "\(row[0] ?? ""): batches are deliveries")
                #expect(row[3] == row[4] && row[5] == row[6], "\(row[0] ?? ""): samples and inserted are the deliveries'")
                #expect(row[7] == "1" && row[8] == "32", "\(row[0] ?? "")")
            }
            let batches = Set(rows.map { ($0[0]?.hasSuffix("export.xml") == true ? "export " : "file ") + ($0[1] ?? "") })
            #expect(batches == ["export 1", "file 2"], "the export's summaries-only batch is no delivery")
        }
    }

    @Test("an export found unchanged by its hash takes the new time, counts no run and keeps last_ingested_at")
    func touched() throws {
        let export = try Self.summariesThenRecord()
        defer { try? FileManager.default.removeItem(at: export.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(export.path)
            let before = try db.rows("SELECT runs::text, last_ingested_at::text, mtime_ns::text FROM health_store.ingested_files")
            var times = [timespec(tv_sec: 1_900_000_000, tv_nsec: 0), timespec(tv_sec: 1_900_000_000, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, export.path, &times, 0)
            let (again, _) = try Importing(database: db).run(export.path)
            #expect(again.unchanged)
            let after = try db.rows("SELECT runs::text, last_ingested_at::text, mtime_ns::text FROM health_store.ingested_files")
            #expect(after.first?[0] == before.first?[0] && after.first?[1] == before.first?[1])
            #expect(after.first?[2] == "1900000000000000000")
        }
    }

    @Test("0050 gives an export row written by an older version the count of its deliveries as batches; resume reads such a row")
    func olderRows() throws {
        let export = try Self.summariesThenRecord()
        defer { try? FileManager.default.removeItem(at: export.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(export.path)
            // The older writer counted every batch of the import, with a delivery or not.
            _ = try db.query("UPDATE health_store.ingested_files SET batches = 2")
            let migration = try #require(Migrator().versioned.first { $0.version == 50 })
            let connection = try db.connect()
            defer { connection.close() }
            try connection.execute(script: migration.sql)
            #expect(try db.scalar("SELECT batches FROM health_store.ingested_files", as: Int.self) == 1)
            // An older version's interrupted import: its ledger row says the first 1000 elements are stored.
            _ = try db.query("UPDATE health_store.ingested_files SET ingested_bytes = 0, ingested_records = 1000, mtime_ns = mtime_ns + 1")
            let (resumed, _) = try Importing(database: db).run(export.path)
            #expect(resumed.resumedAfter == 1000 && resumed.activitySummaries == 0 && resumed.duplicates == 1)
        }
    }
}
