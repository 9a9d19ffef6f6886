import Dispatch
import Foundation
import Postgres
import Testing
import TestSupport

/// An upgrade that replaces views a dashboard is reading. `serve` listens first,
/// answers 503 while it migrates, waits for the reader without ever holding it (or a new
/// reader) up for longer than its lock wait, says on stderr whom it waits for, and once the
/// reader ends it migrates and stores batches. No deadlock (40P01) for anyone.
@Suite("Upgrading beside a reader")
struct UpgradeBesideReaderTests {
    /// Seconds a query of `health.daily_summary` takes on a fresh connection.
    static func timedRead(_ url: String) throws -> Double {
        let connection = try PostgresConnection(connectionString: url)
        defer { connection.close() }
        let started = DispatchTime.now().uptimeNanoseconds
        try connection.query("SELECT count(*) FROM health.daily_summary")
        return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    }

    @Test("a changed repeatable definition while a reader holds health.daily_summary: /healthz and batches 503 with Retry-After, readers never blocked past the lock wait, migrated and storing once the reader ends, no 40P01")
    func upgradeBesideReader() throws {
        try TestPostgres.withDatabase { db in
            // The binary's definitions differ from those recorded: serve re-applies 40_public_views.
            try db.query("UPDATE health_store.schema_repeatables SET sha256 = 'a changed definition' WHERE name = '40_public_views'")
            let reader = try PostgresConnection(connectionString: db.connectionString)
            defer { reader.close() }
            try reader.query("BEGIN")
            try reader.query("SELECT count(*) FROM health.daily_summary")
            let readerPid = try #require(try reader.query("SELECT pg_backend_pid()").first?.decode(0, as: Int.self))

            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString], ready: false)
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            #expect(serve.waitForStderr("migrate.waiting", timeout: 60), "\(serve.stderrSoFar)")
            let healthz = try HTTPTestClient.request(port: port, path: "/healthz")
            #expect(healthz.status == 503)
            #expect(healthz.header("Retry-After") == "60")
            let body = Bodies.json(samples: [Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-000000000001", start: "2026-08-21T10:25:30.000+02:00", value: "42")])
            let early = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: body)
            #expect(early.status == 503 && early.header("Retry-After") != nil)

            // Meanwhile new readers, and the old reader's own next query, are served within the lock wait.
            var slowest = 0.0
            for _ in 0..<12 {
                slowest = max(slowest, try Self.timedRead(db.connectionString))
                usleep(150_000)
            }
            #expect(slowest < 1.0, "a new reader waited \(slowest) s")
            let started = DispatchTime.now().uptimeNanoseconds
            try reader.query("SELECT count(*) FROM health.daily_totals")
            #expect(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 < 1.0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
            // Whom it waits for: the reader's process, by relation, never a query.
            let waiting = serve.stderrSoFar.split(separator: "\n").filter { $0.contains("migrate.waiting") }
            #expect(waiting.contains { $0.contains("pid=\(readerPid)") && $0.contains("health.daily_summary") }, "\(waiting)")

            try reader.query("COMMIT")
            #expect(serve.waitForStderr("serve.ready", timeout: 60), "\(serve.stderrSoFar)")
            #expect(try HTTPTestClient.request(port: port, path: "/healthz").status == 200)
            let stored = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: body)
            #expect(stored.status == 200)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 1)
            #expect(try db.scalar("SELECT sha256 FROM health_store.schema_repeatables WHERE name = '40_public_views'", as: String.self)
                    != "a changed definition")
            #expect(!serve.stderrSoFar.contains("40P01"))
        }
    }
}
