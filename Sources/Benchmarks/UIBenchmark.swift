import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The page section of the benchmark; see docs/benchmarks.md ("The page").
///
///     health-warehouse-bench ui [--samples N] [--database-url URL] [--runs N]
///
/// Loads ~N samples of one person the way the views section does (in-database generator,
/// rollups rebuilt), starts the release `serve`, signs in, and times `GET /ui/days/365`: its
/// round trip and serve's own time (p50 over `--runs` after two warm-ups), its weight, and its
/// first render in headless Chromium (Tests/DeploymentTests/ui/render_time.py). Baseline in the
/// same run: the one `daily_summary` query a dashboard would send for those days, and `GET /healthz`.
func runUIBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = ViewsBenchmark.Options()
    options.durability = durability
    options.naive = false
    options.upkeep = false
    var runs = 15
    var reader = OptionReader(arguments, usage: UIBenchmark.usage)
    while let option = reader.next() {
        switch option {
        case "--samples": options.samples = try reader.number(atLeast: 10_000)
        case "--database-url": options.databaseURL = try reader.value()
        case "--runs": runs = try reader.number()
        case "-h", "--help":
            ViewsBenchmark.say(UIBenchmark.usage)
            return
        default:
            throw reader.failure("unknown option \(option)")
        }
    }
    try UIBenchmark(options: options, runs: runs).run()
}

/// The page benchmark's steps.
struct UIBenchmark {
    static let usage = """
        usage: health-warehouse-bench ui [--samples N] [--database-url URL] [--runs N] [--durability default|fast]
          --samples N        samples to load for the timed person (default 10000000, ~9 years)
          --database-url U   a server to use (needs CREATEDB); default: a throwaway cluster
          --runs N           timed loads of /ui/days/365, after two warm-ups (default 15)
        """
    static let path = "/ui/days/365"

    let options: ViewsBenchmark.Options
    let runs: Int

    func run() throws {
        let say = ViewsBenchmark.say
        say("ui benchmark: load average at the start \(loadAverage())")
        let databases = try ViewsBenchmark.Databases(url: options.databaseURL, durability: options.durability)
        defer { databases.cleanup() }
        let url = try databases.fresh("ui")
        let connection = try PostgresConnection(connectionString: url)
        defer { connection.close() }
        let load = try ViewsBenchmark(options: options).loadSamples(url, connection: connection)
        say(String(format: "loaded %@ samples for %@ (%d days) in %.0f s; rollups rebuilt in %.1f s", ViewsBenchmark.grouped(load.samples),
                   ViewsBenchmark.person, load.days, load.loadSeconds, load.rebuildSeconds))
        let token = try prepare(url)
        let (serve, port) = try CLIProcess.startServe(["--database-url", url])
        var log = ""
        defer { if log.isEmpty { serve.signal(SIGTERM); _ = serve.wait() } }
        let session = try signIn(port: port, token: token)
        let page = try timeRequests(port: port, path: Self.path, cookie: session)
        let weight = try weights(port: port, cookie: session)
        let healthz = try timeRequests(port: port, path: "/healthz", cookie: nil)
        let query = try timeQuery(connection)
        let render = try renderInChromium(port: port, token: token)
        serve.signal(SIGTERM)
        log = serve.wait().stderr
        let served = servedMilliseconds(log: log, path: Self.path)
        say(String(format: "GET %@ (gzip accepted): round trip p50 %.1f ms (p90 %.1f), serve's own time p50 %.1f ms (goal <= 50), of which reading the views %.1f ms",
                   Self.path, page.timings.percentile(0.5), page.timings.percentile(0.9), served.total.percentile(0.5),
                   served.database.percentile(0.5)))
        say("page weight: \(ViewsBenchmark.grouped(page.body.count)) bytes sent gzip-compressed (goal <= 300 kB), "
            + "\(ViewsBenchmark.grouped(weight.total)) bytes of HTML uncompressed; by section: \(weight.sections)")
        say(String(format: "baseline: the 365-day daily_summary query alone p50 %.1f ms (page / query %.1fx); GET /healthz p50 %.1f ms",
                   query.percentile(0.5), served.total.percentile(0.5) / max(query.percentile(0.5), 0.001), healthz.timings.percentile(0.5)))
        say(render)
        say("load average at the end \(loadAverage())")
    }
}
