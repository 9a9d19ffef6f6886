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

    /// The JSON summary's integer `key`.
    static func summaryValue(_ stdout: String, _ key: String) -> Int? {
        guard let match = stdout.firstMatch(of: try! Regex("\"\(key)\":(\\d+)")) else { return nil }
        return Int(match.output[1].substring ?? "")
    }

    @Test("an appended file killed mid-way, then a re-run: read from its recorded offset, the same rows as one clean run, rollups equal to a recompute")
    func killedMidFile() throws {
        let folder = NSTemporaryDirectory() + "hw-ingest-kill-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Enough days that the appended half spans several groups (BatchGroup commits at
        // 20,000 samples or after a second) however fast the machine ingests.
        let generated = try CLIProcess.run(["generate", "--days", "120", "--start", "2026-03-01", "--seed", "5", "--format", "csv", "--out", folder + "/parts"])
        #expect(generated.status == 0, "\(generated.stderr)")
        // The bodies appended to one CSV file, in two halves: the first half is ingested,
        // then the second is appended (as a collector appending to a file does), so the kill
        // lands inside the appended part.
        let parts = try FileManager.default.contentsOfDirectory(atPath: folder + "/parts").sorted()
        #expect(parts.count > 20)
        var firstHalf = Data()
        var secondHalf = Data()
        for (index, name) in parts.enumerated() {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/parts/" + name))
            if index < parts.count / 2 { firstHalf.append(bytes) } else { secondHalf.append(bytes) }
        }
        try FileManager.default.createDirectory(atPath: folder + "/backlog", withIntermediateDirectories: true)
        let file = URL(fileURLWithPath: folder + "/backlog/all.csv")

        try TestPostgres.withDatabase { clean in
            try (firstHalf + secondHalf).write(to: file)
            let once = try CLIProcess.run(["ingest", folder + "/backlog", "--database-url", clean.connectionString])
            #expect(once.status == 0, "\(once.stderr)")
            let expected = try Self.fingerprint(clean)
            #expect(expected.count > 10_000)
            let wholeFileSamples = try #require(try clean.scalar("SELECT samples FROM health_store.ingested_files", as: Int.self))

            try TestPostgres.withDatabase { db in
                try firstHalf.write(to: file)
                let first = try CLIProcess.run(["ingest", folder + "/backlog", "--json", "--database-url", db.connectionString])
                #expect(first.status == 0, "\(first.stderr)")
                let firstSamples = try #require(Self.summaryValue(first.stdout, "samples"))
                let firstDeliveries = try #require(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self))
                let firstBatches = Set(try db.query("SELECT export_id::text || '/' || batch_sequence FROM health_store.deliveries").compactMap { $0[0] })
                #expect(try db.scalar("SELECT ingested_bytes FROM health_store.ingested_files", as: Int.self) == firstHalf.count)

                let handle = try FileHandle(forWritingTo: file)
                try handle.seekToEnd()
                try handle.write(contentsOf: secondHalf)
                try handle.close()

                let killed = try CLIProcess.start(["ingest", folder + "/backlog", "--database-url", db.connectionString])
                // Kill it once some batches of the appended part are in, well before the end.
                #expect(waitUntil(timeout: 120) {
                    ((try? db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self)) ?? 0) >= firstDeliveries + 3
                })
                killed.signal(SIGKILL)
                #expect(killed.wait().status == 128 + SIGKILL)
                let partial = try Self.fingerprint(db).count
                #expect(partial < expected.count, "the kill came too late to prove anything")
                #expect(try db.scalar("SELECT ingested_bytes FROM health_store.ingested_files", as: Int.self) == firstHalf.count,
                        "a killed run must not move the file's recorded offset")

                let again = try CLIProcess.run(["ingest", folder + "/backlog", "--json", "--database-url", db.connectionString])
                #expect(again.status == 0, "\(again.stderr)")
                // Read from the recorded offset: exactly the appended part's samples, none of
                // the first half's again (those batches were not delivered a second time).
                #expect(Self.summaryValue(again.stdout, "samples") == wholeFileSamples - firstSamples, "\(again.stdout)")
                #expect((Self.summaryValue(again.stdout, "duplicates") ?? 0) > 0, "the batches stored before the kill come again as duplicates")
                let deliveredTwice = Set(try db.query("""
                    SELECT export_id::text || '/' || batch_sequence FROM health_store.deliveries GROUP BY 1 HAVING count(*) > 1
                    """).compactMap { $0[0] })
                #expect(deliveredTwice.isDisjoint(with: firstBatches), "the first half was read again")
                #expect(!deliveredTwice.isEmpty, "the batches stored before the kill were delivered again")
                let after = try Self.fingerprint(db)
                #expect(after.count == expected.count)
                #expect(after.digest == expected.digest)
                #expect(try db.scalar("SELECT ingested_bytes FROM health_store.ingested_files", as: Int.self) == firstHalf.count + secondHalf.count)
                #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)

                // And a third run has nothing to do.
                let third = try CLIProcess.run(["ingest", folder + "/backlog", "--json", "--database-url", db.connectionString])
                #expect(third.status == 0)
                #expect(third.stdout.contains("\"files_skipped\":1"))
            }
        }
    }

    @Test("the server killed mid-ingest (commits asynchronous, batches grouped): after a restart a re-run ends with the rows of one clean run, the ledger claiming nothing lost")
    func serverKilledMidIngest() throws {
        let folder = NSTemporaryDirectory() + "hw-ingest-crash-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let generated = try CLIProcess.run(["generate", "--days", "40", "--start", "2026-03-01", "--seed", "6", "--out", folder])
        #expect(generated.status == 0, "\(generated.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).count
        #expect(files > 100)

        try TestPostgres.withDatabase { clean in
            let once = try CLIProcess.run(["ingest", folder, "--database-url", clean.connectionString])
            #expect(once.status == 0, "\(once.stderr)")
            let expected = try Self.fingerprint(clean)

            // Durable commits everywhere but where ingest turns them off for its groups.
            let cluster = try TestCluster(durable: true)
            defer { cluster.destroy() }
            let db = try cluster.freshDatabase(label: "crash")
            let running = try CLIProcess.start(["ingest", folder, "--database-url", db.connectionString])
            #expect(waitUntil(timeout: 120) {
                ((try? db.scalar("SELECT count(*) FROM health_store.ingested_files", as: Int.self)) ?? 0) >= files / 4
            })
            try cluster.kill()
            let failed = running.wait()
            #expect(failed.status == 1, "\(failed.stderr)")
            #expect(failed.stderr.contains("run again"), "\(failed.stderr)")
            try cluster.start()

            // Whatever the crash kept, the ledger claims no file whose batches it lost.
            let claimed = try db.scalar("""
                SELECT count(*) FROM health_store.ingested_files f
                WHERE f.batches <> (SELECT count(*) FROM health_store.deliveries d WHERE d.file = f.path)
                   OR f.samples <> (SELECT coalesce(sum(d.samples), 0) FROM health_store.deliveries d WHERE d.file = f.path)
                """, as: Int.self)
            #expect(claimed == 0)
            #expect(try Self.fingerprint(db).count < expected.count, "the kill came too late to prove anything")

            let again = try CLIProcess.run(["ingest", folder, "--database-url", db.connectionString])
            #expect(again.status == 0, "\(again.stderr)")
            let after = try Self.fingerprint(db)
            #expect(after.count == expected.count)
            #expect(after.digest == expected.digest)
            #expect(try db.scalar("SELECT count(*) FROM health_store.ingested_files", as: Int.self) == files)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)
        }
    }
}

