import Foundation
import Hashing
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("status")
struct StatusTests {
    @Test("status shows each person's counts, freshness, settings and open problems, as text and as JSON")
    func statusReportsPersons() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let body = try Bodies.fixture("contract-example.json")
            guard case .batches(let batches) = try PayloadDecoder.decode(json: body) else { Issue.record("no batch"); return }
            try BatchStore(pool: pool).store(batches, person: "alice", origin: .http, bodySHA256: SHA256.hash(body))
            try BatchStore(pool: pool).store(batches, person: "alice", origin: .http, bodySHA256: SHA256.hash(body))
            try db.query("SELECT health.set_time_zone('alice', 'Europe/Berlin')")
            // One of the three marked deleted in Health (a reconciliation's mark): held no more.
            try db.query("""
                SELECT health_store.mark_deleted('alice', ARRAY(SELECT uuid FROM health.samples WHERE person = 'alice' ORDER BY uuid LIMIT 1),
                                                 now(), now())
                """)

            let json = try CLIProcess.run(["status", "--json", "--database-url", db.connectionString])
            #expect(json.status == 0, "\(json.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let persons = try #require(object["persons"] as? [[String: Any]])
            let alice = try #require(persons.first { $0["person"] as? String == "alice" })
            #expect(alice["samples"] as? Int == 2, "held: the marked one left out, as GET /stats counts")
            #expect(alice["deliveries"] as? Int == 2)
            #expect(alice["time_zone"] as? String == "Europe/Berlin")
            #expect(alice["is_stale"] as? Bool == false)
            #expect(alice["incomplete_export_runs"] as? Int == 0)
            #expect((object["migrations"] as? [String: Any])?["pending"] as? Int == 0)

            let text = try CLIProcess.run(["status", "--database-url", db.connectionString])
            #expect(text.status == 0)
            #expect(text.stdout.contains("person alice"))
            #expect(text.stdout.contains("samples held        2 from 2 deliveries"))
            #expect(text.stdout.contains("Europe/Berlin"))
            // Never "live": the app delivers when iOS lets it ("deliveries" is fine).
            let words = text.stdout.lowercased().split { !$0.isLetter }
            #expect(!words.contains("live") && !words.contains("realtime"))
        }
    }

    @Test("set-time-zone re-days the person's samples; a person nothing is held of is named; a bad zone is a clear error, exit 64")
    func setTimeZone() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            // 23:30 on 2026-08-21 written at +02:00 is 21:30 UTC; in New York it is still the 21st,
            // in Tokyo already the 22nd.
            let body = Bodies.json(samples: [Bodies.quantity(uuid: "AC000000-0000-4000-8000-000000000001", start: "2026-08-21T23:30:00.000+02:00", value: "7")])
            guard case .batches(let batches) = try PayloadDecoder.decode(json: body) else { Issue.record("no batch"); return }
            try BatchStore(pool: pool).store(batches, person: "default", origin: .http, bodySHA256: SHA256.hash(body))
            #expect(try db.scalar("SELECT day::text FROM health.samples", as: String.self) == "2026-08-21")
            let tokyo = try CLIProcess.run(["set-time-zone", "Asia/Tokyo", "--database-url", db.connectionString])
            #expect(tokyo.status == 0, "\(tokyo.stderr)")
            #expect(!tokyo.stderr.contains("nothing of"), "\(tokyo.stderr)")
            #expect(try db.scalar("SELECT day::text FROM health.samples", as: String.self) == "2026-08-22")
            // A person nothing is held of yet: set (before a first push is right), and said, for a mistyped name.
            let typo = try CLIProcess.run(["set-time-zone", "Asia/Tokyo", "--person", "defualt", "--database-url", db.connectionString])
            #expect(typo.status == 0 && typo.stderr.contains("nothing of defualt was held before"), "\(typo.stderr)")
            #expect(try db.scalar("SELECT day::text FROM health.daily_totals", as: String.self) == "2026-08-22")
            let bad = try CLIProcess.run(["set-time-zone", "Mars/Olympus", "--database-url", db.connectionString])
            #expect(bad.status == 64, "an unknown time zone is a usage error")
            #expect(bad.stderr.contains("Mars/Olympus"))
            #expect(bad.stderr.contains("hint: "))
            #expect(try db.scalar("SELECT time_zone FROM health.settings WHERE person = 'default'", as: String.self) == "Asia/Tokyo")
        }
    }
}
