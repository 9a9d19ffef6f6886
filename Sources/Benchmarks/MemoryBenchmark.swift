import DemoData
import Foundation
import Harness
import Postgres
import Warehouse

let memoryUsage = """
    usage: health-warehouse-bench memory [--bodies N] [--mib M] [--budget SIZE]
      --bodies N    workouts POSTed at once from one token (default 6)
      --mib M       each body's size in MiB, at most 30 (default 30): the densest route that fits
      --budget SIZE serve's --body-budget (default: serve's own)
    """

/// `memory` (`serve` stays under 512 MiB resident whatever clients send: docs/receiver.md): N workouts of
/// M MiB at once from one token against a real `serve`, its resident memory before, at its peak
/// (`VmHWM`) and once settled; the answers; and, sent again one at a time, every workout stored.
/// Memory is a bound, not a speed: there is no baseline, the figures are the point.
func runMemoryBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var count = 6, mib = 30
    var budget: String?
    var options = OptionReader(arguments, usage: memoryUsage)
    while let option = options.next() {
        switch option {
        case "--bodies": count = try options.number()
        case "--mib": mib = min(30, try options.number())
        case "--budget": budget = try options.value()
        default: throw options.failure("unknown option \(option)")
        }
    }
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    let db = try cluster.freshDatabase(label: "memory")
    let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
    let token = try TokenStore(pool: pool).create(person: "runner", label: nil).token
    pool.close()
    let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString] + (budget.map { ["--body-budget", $0] } ?? []))
    defer {
        serve.signal(SIGTERM)
        _ = serve.wait()
    }
    let bodies = (0..<count).map { StrideeBodies.denseRoute(bytes: mib * 1_048_576, uuid: String(format: "5D1E8C1A-2F7B-4E0C-9A43-%012d", $0)) }
    let path = "/v1/accounts/runner/apple/workouts"
    let auth = [(name: "Authorization", value: "Bearer \(token)")]
    let run = ServeMemoryRun.run(pid: serve.pid, port: port, path: path, headers: auth, bodies: bodies, settleBelowKiB: 256 * 1024,
                                 settleWithin: 15)
    var resent = 0
    for (index, status) in run.statuses.enumerated() where status != 202 {
        let again = try HTTPTestClient.request(port: port, method: "POST", path: path,
                                               headers: auth + [("Content-Type", "application/json")], body: bodies[index], timeout: 300)
        guard again.status == 202 else { throw BenchmarkError.usage("body \(index) sent again answered \(again.status): \(again.bodyText)") }
        resent += 1
    }
    let points = try db.scalar("SELECT coalesce(sum(points), 0)::int FROM health_store.workout_routes", as: Int.self) ?? 0
    func mibText(_ kib: Int) -> String { String(format: "%.0f MiB", Double(kib) / 1024) }
    print("""
        \(durability.benchmarkLabel); load average \(loadAverage())
        \(count) workouts of \(mib) MiB at once from one token (\(points / max(1, count)) route points each), in \(String(format: "%.1f", run.seconds)) s
          answers: \(run.statuses.map(String.init).joined(separator: " ")) (503s sent again: \(resent), then all \(count) stored)
          serve RSS: before \(mibText(run.beforeKiB)), peak \(mibText(run.peakKiB)) (VmHWM; the bound: < 512 MiB), \
        \(String(format: "%.1f", run.settleSeconds)) s after the last answer \(mibText(run.settledKiB)) (goal < 256 MiB)
          serve RSS peak over the whole run, resends included: \(mibText(ProcessMemory.kib("VmHWM", of: serve.pid)))
        """)
}
