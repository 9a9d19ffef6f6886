import DemoData
import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// `serve` stays under 512 MiB resident whatever clients send (docs/receiver.md):
/// six 30 MiB workouts at once from one token, each the densest route a body that size holds.
@Suite("serve's memory")
struct ServeMemoryTests {
    static let mib = 1024

    @Test("six 30 MiB workouts at once from one token: serve stays under 512 MiB resident, bodies beyond its budget get 503 with Retry-After and store nothing, memory is back under 256 MiB soon after, and every workout sent again is stored")
    func sixLargeWorkouts() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            let token = try TokenStore(pool: pool).create(person: "runner", label: nil).token
            pool.close()
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let uuids = (0..<6).map { String(format: "5D1E8C1A-2F7B-4E0C-9A43-%012d", $0) }
            let bodies = uuids.map { StrideeBodies.denseRoute(bytes: 30 * 1_048_576, uuid: $0) }
            let path = "/v1/accounts/runner/apple/workouts"
            let auth = [(name: "Authorization", value: "Bearer \(token)")]
            let run = ServeMemoryRun.run(pid: serve.pid, port: port, path: path, headers: auth, bodies: bodies,
                                         settleBelowKiB: 256 * Self.mib, settleWithin: 15)
            print("serve memory: \(run)")
            #expect(run.peakKiB < 512 * Self.mib, "peak \(run.peakKiB / Self.mib) MiB")
            #expect(run.settledKiB < 256 * Self.mib, "settled at \(run.settledKiB / Self.mib) MiB after \(run.settleSeconds) s")
            #expect(run.statuses.allSatisfy { $0 == 202 || $0 == 503 }, "\(run.statuses)")
            #expect(run.statuses.contains(202))
            for (status, retry) in zip(run.statuses, run.retryAfter) where status == 503 {
                #expect(retry != nil, "503 carries Retry-After")
            }
            let stored = try db.scalar("SELECT count(*) FROM health_store.stridee_workouts", as: Int.self) ?? -1
            #expect(stored == run.statuses.filter { $0 == 202 }.count, "a 503 stored nothing")
            // Sent again one at a time, as a client honouring Retry-After would: all stored.
            for (index, status) in run.statuses.enumerated() where status != 202 {
                let again = try HTTPTestClient.request(port: port, method: "POST", path: path,
                                                       headers: auth + [("Content-Type", "application/json")], body: bodies[index], timeout: 300)
                #expect(again.status == 202, "\(again.bodyText)")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.stridee_workouts", as: Int.self) == 6)
            #expect(try db.scalar("SELECT min(points) FROM health_store.workout_routes", as: Int.self)! > 600_000)
            #expect(ProcessMemory.kib("VmHWM", of: serve.pid) < 512 * Self.mib)
        }
    }
}
