import AppleExport
import Civil
import DemoData
import Foundation
import Postgres
import Testing
import TestSupport

/// `generate --format apple-export` and what importing its archive does: a killed import
/// resumed ends as one clean run; the same person's healthd bodies and export are twins.
@Suite("Generated exports")
struct GeneratedExportTests {
    /// `generate --format apple-export` into a fresh folder; returns export.zip.
    static func generate(days: Int, malformed: Bool = false) throws -> URL {
        let folder = try Exports.temporaryFolder()
        let out = try CLIProcess.run(["generate", "--format", "apple-export", "--days", String(days), "--start", "2024-03-01", "--seed", "3",
                                      "--out", folder.path] + (malformed ? ["--malformed"] : []))
        try #require(out.status == 0, "\(out.stderr)")
        return folder.appendingPathComponent("export.zip")
    }

    @Test("generate writes an export.zip of export.xml and GPX routes that imports whole; --malformed adds one Record, skipped and named")
    func generated() throws {
        let archive = try Self.generate(days: 3, malformed: true)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        let zip = try #require(try CLIProcess.runProgram("/usr/bin/env", ["python3", "-c", """
            import sys, zipfile
            names = zipfile.ZipFile(sys.argv[1]).namelist()
            print(names[0], sum(1 for n in names if n.startswith('apple_health_export/workout-routes/') and n.endswith('.gpx')))
            """, archive.path]).stdout.split(separator: "\n").first)
        #expect(zip.hasPrefix("apple_health_export/export.xml "), "\(zip)")
        try TestPostgres.withDatabase { db in
            let (summary, skipped) = try Importing(database: db).run(archive.path)
            #expect(skipped.map(\.name) == ["Record"])
            #expect(skipped.first?.reason.contains("Demo") == true)
            #expect(summary.recordsRead > 3 * 1200)
            #expect(summary.new == summary.recordsRead - 1 + summary.workouts)
            #expect(summary.activitySummaries == 3)
            #expect(summary.routes == Int(zip.split(separator: " ").last!)!)
            #expect(try db.rollupDifferences() == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.daily_sleep", as: Int.self) == 3)
        }
    }

    @Test("an import killed after some batches resumes after its last committed one and ends as one clean run")
    func killedAndResumed() throws {
        let archive = try Self.generate(days: 12)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        var clean: [String: [String]] = [:]
        var cleanDeliveries = 0
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", archive.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            clean = try db.importedRows()
            cleanDeliveries = try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) ?? 0
        }
        #expect(cleanDeliveries > 10)
        try TestPostgres.withDatabase { db in
            let running = try CLIProcess.start(["import-apple-health", archive.path], environment: ["DATABASE_URL": db.connectionString])
            let deadline = Date().addingTimeInterval(120)
            while running.isRunning && Date() < deadline {
                if try (db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) ?? 0) >= 3 { break }
                usleep(10_000)
            }
            running.signal(SIGKILL)
            let killed = running.wait()
            #expect(killed.status == 128 + SIGKILL, "killed mid-run, not finished: \(killed.stderr)")
            let stored = try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) ?? 0
            #expect(stored >= 3 && stored < cleanDeliveries)
            let ledger = try db.rows("SELECT ingested_records, ingested_bytes = size_bytes FROM health_store.ingested_files")
            #expect(ledger.first?[1] == "f", "not complete")

            let out = try CLIProcess.run(["import-apple-health", "--json", archive.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("resumed after \(ledger.first?[0] ?? "?") elements stored by an earlier run"), "\(out.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
            #expect(json["duplicates"] as? Int == 0, "nothing committed before was stored again")
            let resumed = try db.importedRows()
            for table in clean.keys.sorted() {
                #expect(resumed[table] == clean[table], "\(table): resumed equals one clean run")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == cleanDeliveries, "no batch stored twice")
            #expect(try db.scalar("SELECT count(DISTINCT export_id) FROM health_store.deliveries", as: Int.self) == 1)
            #expect(try db.rows("SELECT is_complete, batches_received FROM health.export_runs").first == ["t", String(cleanDeliveries)])
            #expect(try db.rollupDifferences() == 0)
        }
    }

    @Test("the same person's healthd bodies and export are twins: after both, every sample is held once")
    func samePersonBothWays() throws {
        let options = DemoGenerator.Options(start: CivilDate("2024-03-01")!, days: 4, seed: 3)
        let archive = try Self.generate(days: 4)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        var pushed: [DemoSample] = []
        DemoAppleExport.forEachDay(options) { _, samples in pushed += samples }
        try TestPostgres.withDatabase { db in
            let (summary, _) = try Importing(database: db).run(archive.path)
            let imported = try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) ?? 0
            #expect(imported == summary.new)
            // The phone's healthd sends the simulator's samples (not the extra types) a batch at a time.
            let healthd = pushed.filter { $0.type.group != "other" }
            for chunk in stride(from: 0, to: healthd.count, by: 1000).map({ Array(healthd[$0..<min($0 + 1000, healthd.count)]) }) {
                _ = try TwinTests.push(db, samples: chunk, window: ("2024-02-28T00:00:00.000+01:00", "2024-03-06T00:00:00.000+01:00"))
            }
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == imported, "each pushed sample replaced its imported twin")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE origin = 'export'", as: Int.self)
                    == pushed.count - healthd.count, "only the extra types stay imported")
            #expect(try db.rollupDifferences() == 0)
        }
    }
}
