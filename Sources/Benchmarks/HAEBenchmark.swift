import Civil
import DemoData
import Foundation
import Harness
import Postgres
import Warehouse

let haeUsage = """
    usage: health-warehouse-bench hae [--days N] [--rounds N] [--durability default|fast]
      --days N     days of Health Auto Export minute buckets of every metric (default 7: about 47,000 points)
      --rounds N   each side this many times, taking turns, each on a fresh database (default 3); medians reported
    """

/// `hae` (docs/benchmarks.md, "Health Auto Export"): a week of minute buckets of every metric
/// POSTed to `/hae` of a real `serve` as one body, against the same readings as healthd samples
/// POSTed to `/` in 1000-sample bodies, each answer awaited: the time to store them (goal: at
/// most 1.5× healthd's), serve's peak resident memory, and the day totals of both compared.
func runHAEBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var days = 7, rounds = 3
    var options = OptionReader(arguments, usage: haeUsage)
    while let option = options.next() {
        switch option {
        case "--days": days = try options.number()
        case "--rounds": rounds = max(1, try options.number())
        default: throw options.failure("unknown option \(option)")
        }
    }
    let demo = HAEDemo(start: CivilDate("2024-01-01")!, days: days, seed: 34)
    let sides: [HAESide] = [
        HAESide(name: "healthd", path: "/", bodies: demo.healthdBodies(), headers: []),
        HAESide(name: "hae", path: "/hae", bodies: [demo.haeBody()], headers: [("automation-aggregation", "minutes")]),
    ]
    print("""
        hae benchmark: \(days) days of minute buckets of every metric, \(demo.points.count) points (\(demo.sampleCount) samples), \
        as one Health Auto Export body (\(String(format: "%.1f", sides[1].megabytes)) MB) vs \(sides[0].bodies.count) healthd bodies \
        (\(String(format: "%.1f", sides[0].megabytes)) MB), each side on a fresh database, \(rounds) rounds taking turns
          \(durability.benchmarkLabel)
          load average at the start: \(loadAverage())
        """)
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    var seconds: [[Double]] = [[], []], peaks: [[Int]] = [[], []]
    var totals: [[[String?]]] = [[], []]
    for round in 0..<rounds {
        for k in (round % 2 == 0 ? [0, 1] : [1, 0]) {
            say("round \(round + 1): \(sides[k].name) …")
            let run = try sides[k].run(cluster: cluster, samples: demo.sampleCount)
            seconds[k].append(run.seconds)
            peaks[k].append(run.peakKiB)
            totals[k] = run.dayTotals
        }
    }
    let median = seconds.map { Timings(milliseconds: $0.map { $0 * 1000 }).percentile(0.5) / 1000 }
    guard totals[0] == totals[1] else { throw BenchmarkError.usage("the day totals of the two sides differ") }
    print(String(format: """
          side       seconds (median)   samples/s   serve peak RSS
          healthd    %16.2f   %9.0f   %10.0f MiB
          hae        %16.2f   %9.0f   %10.0f MiB
          hae / healthd: %.2f× the time (goal ≤ 1.5×); day totals of both equal (%d rows of health.daily_totals)
        """, median[0], Double(demo.sampleCount) / median[0], Double(peaks[0].max() ?? 0) / 1024,
        median[1], Double(demo.sampleCount) / median[1], Double(peaks[1].max() ?? 0) / 1024, median[1] / median[0], totals[0].count))
}

/// One way of sending the benchmark's readings to `serve`.
struct HAESide {
    var name: String
    var path: String
    var bodies: [[UInt8]]
    var headers: [(name: String, value: String)]

    var megabytes: Double { Double(bodies.reduce(0) { $0 + $1.count }) / 1_048_576 }

    /// Sends every body to a fresh `serve` over a fresh database: seconds from the first
    /// request to the last answer, serve's peak RSS, and the day totals it then holds (after
    /// checking the samples held and `verify_rollups`).
    func run(cluster: TestCluster, samples: Int) throws -> (seconds: Double, peakKiB: Int, dayTotals: [[String?]]) {
        let database = try cluster.freshDatabase(label: "hae_\(name)")
        defer { try? dropDatabase(database, cluster: cluster) }
        let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
        let token = try TokenStore(pool: pool).create(person: "runner", label: "bench").token
        pool.close()
        let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait()
        }
        try checkpoint(cluster)
        let all = headers + [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")]
        let start = monotonicSeconds()
        for (index, body) in bodies.enumerated() {
            let answer = try HTTPTestClient.request(port: port, method: "POST", path: path, headers: all, body: body, timeout: 600)
            guard answer.status == 200 else {
                throw BenchmarkError.usage("\(name): body \(index) answered \(answer.status): \(answer.bodyText.prefix(300))")
            }
        }
        let seconds = monotonicSeconds() - start
        let peak = peakResidentKiB(of: serve.pid)
        let held = try database.scalar("SELECT count(*) FROM health.samples WHERE person = 'runner'", as: Int.self) ?? 0
        guard held == samples else { throw BenchmarkError.usage("\(name): holds \(held) samples, expected \(samples)") }
        guard try database.query("SELECT * FROM health_store.verify_rollups('runner')").isEmpty else {
            throw BenchmarkError.usage("\(name): the rollups differ from a recompute")
        }
        let totals = try database.query("""
            SELECT day::text, type, round(value::numeric, 6)::text FROM health.daily_totals WHERE person = 'runner' ORDER BY day, type
            """).map { row in (0..<3).map { row[$0] } }
        return (seconds, peak, totals)
    }
}
