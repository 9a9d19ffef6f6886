import Foundation
import Postgres
import Testing
import TestSupport

/// `ingest` killed in the middle of a file: a re-run completes it, with every sample once.
@Suite("ingest under faults")
struct IngestReliabilityTests {
    /// Every sample of a database, as one fingerprint, plus the count.
    static func fingerprint(_ db: TestDatabase) throws -> (count: Int, digest: String) {
        let row = try #require(db.query("""
            SELECT count(*), md5(string_agg(person || ' ' || uuid::text || ' ' || day::text || ' ' || payload::text, ',' ORDER BY person, uuid))
            FROM health_store.samples
            """).first)
        return (try row.decode(0), row[1] ?? "")
    }

    @Test("SIGKILL mid-file, then a re-run: the same rows as one clean run, rollups equal to a recompute")
    func killedMidFile() throws {
        let folder = NSTemporaryDirectory() + "hw-ingest-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let generated = try CLIProcess.run(["generate", "--days", "40", "--start", "2026-03-01", "--seed", "5", "--format", "csv", "--out", folder + "/parts"])
        #expect(generated.status == 0, "\(generated.stderr)")
        // All bodies appended to one CSV file, so the kill lands inside a file.
        let parts = try FileManager.default.contentsOfDirectory(atPath: folder + "/parts").sorted()
        var appended = Data()
        for name in parts { appended.append(try Data(contentsOf: URL(fileURLWithPath: folder + "/parts/" + name))) }
        try FileManager.default.createDirectory(atPath: folder + "/backlog", withIntermediateDirectories: true)
        try appended.write(to: URL(fileURLWithPath: folder + "/backlog/all.csv"))
        #expect(parts.count > 20)

        try TestPostgres.withDatabase { clean in
            let once = try CLIProcess.run(["ingest", folder + "/backlog", "--database-url", clean.connectionString])
            #expect(once.status == 0, "\(once.stderr)")
            let expected = try Self.fingerprint(clean)
            #expect(expected.count > 10_000)

            try TestPostgres.withDatabase { db in
                let first = try CLIProcess.start(["ingest", folder + "/backlog", "--database-url", db.connectionString])
                // Kill it once some batches are in, well before the end.
                #expect(waitUntil(timeout: 120) {
                    ((try? db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self)) ?? 0) >= 3
                })
                first.signal(SIGKILL)
                #expect(first.wait().status == 128 + SIGKILL)
                let partial = try Self.fingerprint(db).count
                #expect(partial < expected.count, "the kill came too late to prove anything")
                #expect(try db.scalar("SELECT count(*) FROM health_store.ingested_files", as: Int.self) == 0,
                        "a killed run must not mark the file as ingested")

                let again = try CLIProcess.run(["ingest", folder + "/backlog", "--database-url", db.connectionString])
                #expect(again.status == 0, "\(again.stderr)")
                let after = try Self.fingerprint(db)
                #expect(after.count == expected.count)
                #expect(after.digest == expected.digest)
                #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)

                // And a third run has nothing to do.
                let third = try CLIProcess.run(["ingest", folder + "/backlog", "--json", "--database-url", db.connectionString])
                #expect(third.status == 0)
                #expect(third.stdout.contains("\"files_skipped\":1"))
            }
        }
    }
}
