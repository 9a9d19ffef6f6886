import Foundation
import Harness
import Postgres
import Warehouse

/// The citus section; see docs/scaling.md ("Measured").
///
///     health-warehouse-bench citus --citus-url URL [--batches N (50)] [--clients N (4)]
///                                  [--shards N (8)] [--durability default|fast]
///
/// The same HTTP run — `clients` clients at once, each a person of its own, each sending the
/// same 1000-sample bodies through one `serve` — against one PostgreSQL (a throwaway cluster of
/// this run) and against a Citus coordinator and its workers (a fresh database made on every
/// node, migrated, so distributed by person), then the daily views of one person on both.
/// `--durability` sets the throwaway cluster's; the Citus nodes' own settings are printed.
func runCitusBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var url = ProcessInfo.processInfo.environment["HEALTH_WAREHOUSE_BENCH_CITUS_URL"]
    var batches = 50, clients = 4, shards = 8
    var options = OptionReader(arguments, usage: citusUsage)
    while let option = options.next() {
        switch option {
        case "--citus-url": url = try options.value()
        case "--batches": batches = try options.number()
        case "--clients": clients = try options.number()
        case "--shards": shards = try options.number()
        default: throw options.failure("unknown option \(option)")
        }
    }
    guard let url, !url.isEmpty else {
        throw options.failure("--citus-url (or HEALTH_WAREHOUSE_BENCH_CITUS_URL) must name a coordinator database with its workers registered")
    }
    let bodies = try ReceiverBodies(count: batches, format: .json)
    let coordinator = try CitusCoordinator(connectionString: url, prefix: "hw_bench_citus_\(getpid())_", shardCount: shards)
    defer { coordinator.dropAll() }
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    print("""
        citus benchmark: \(batches) JSON bodies of 1000 samples from each of \(clients) clients at once (a person each), one serve
          one PostgreSQL: \(durability.benchmarkLabel)
          Citus: a coordinator and \(coordinator.workers.count) workers, \(shards) shards a table; \(try citusSettings(url))
          load average at the start: \(loadAverage())
        """)

    say("one PostgreSQL …")
    let plain = try cluster.freshDatabase(label: "plain")
    let plainRun = try ServeRun.run(bodies, clients: clients, database: plain) { try checkpoint(cluster) }
    say("Citus …")
    let distributed = try coordinator.freshDatabase(label: "citus", migrated: true)
    let citusRun = try ServeRun.run(bodies, clients: clients, database: distributed) {}

    let ratio = citusRun.timings.samplesPerSecond / plainRun.timings.samplesPerSecond
    var lines = [
        "",
        "HTTP through serve, \(clients) clients",
        "  one PostgreSQL:  \(plainRun.timings.summary)",
        "  Citus:           \(citusRun.timings.summary)",
        "    in serve: \(citusRun.phases.summary)",
        String(format: "  Citus / one PostgreSQL, samples/s: %.2f×  (goal ≥ 0.70×)", ratio),
        "  verify_rollups: \(plainRun.rollupDifferences) differences on one PostgreSQL, \(citusRun.rollupDifferences) on Citus",
        "",
        "views of one person (client1), p50 of 20 runs after 3 warm-ups",
        "  view                       one PostgreSQL   Citus     difference (goal ≤ 2 ms)   Citus tasks",
    ]
    for view in citusViews {
        let sql = "SELECT * FROM health.\(view) WHERE person = $1"
        let a = try queryMilliseconds(plain, sql), b = try queryMilliseconds(distributed, sql)
        let name = "  " + view.padding(toLength: 24, withPad: " ", startingAt: 0)
        let plan = try distributed.query("EXPLAIN SELECT * FROM health.\(view) WHERE person = 'client1'").compactMap { $0[0] }
        let tasks = plan.first { $0.contains("Task Count:") }.map { $0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces) } ?? "?"
        lines.append(name + String(format: " %8.2f ms   %8.2f ms   %+6.2f ms", a, b, b - a) + "                  " + tasks)
    }
    lines.append("load average at the end: \(loadAverage())")
    print(lines.joined(separator: "\n"))
    let differences = plainRun.rollupDifferences + citusRun.rollupDifferences
    guard differences == 0 else { throw BenchmarkError.usage("verify_rollups found \(differences) differences") }
}

let citusUsage = """
    usage: health-warehouse-bench citus --citus-url URL [--batches N (50)] [--clients N (4)] [--shards N (8)]
                                        [--durability default|fast]
    """

/// The daily views and freshness, each read for one person.
let citusViews = ["daily_summary", "daily_totals", "daily_readings", "daily_body", "daily_sleep", "daily_workouts", "freshness"]

/// The median time of `sql` for person client1 over one connection, after warm-ups.
func queryMilliseconds(_ database: TestDatabase, _ sql: String) throws -> Double {
    let connection = try database.connect()
    defer { connection.close() }
    for _ in 0..<3 { try connection.query(sql, ["client1"]) }
    var timings = Timings()
    for _ in 0..<20 {
        let start = monotonicSeconds()
        try connection.query(sql, ["client1"])
        timings.milliseconds.append((monotonicSeconds() - start) * 1000)
    }
    return timings.percentile(0.5)
}

/// `fsync on, synchronous_commit on` of the coordinator and each worker, as they run.
func citusSettings(_ url: String) throws -> String {
    let admin = try PostgresConnection(connectionString: url)
    defer { admin.close() }
    let local: String = try admin.query("SELECT 'fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')").first?.decode(0) ?? "?"
    let workers = try admin.query("""
        SELECT string_agg(result, '; ') FROM run_command_on_workers(
          $$SELECT 'fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')$$)
        """).first?.decodeIfPresent(0, as: String.self) ?? "?"
    return "coordinator \(local); workers \(workers)"
}
