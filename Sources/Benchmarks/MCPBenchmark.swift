import Assistant
import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The assistant section of the benchmark; see docs/benchmarks.md ("The assistant (MCP)").
///
///     health-warehouse-bench mcp [--samples N] [--database-url URL] [--runs N]
///
/// Loads ~N samples of one person the way the views section does, then times the tools
/// `day` (yesterday) and `summary` (the last 365 days): the server's own time for a whole
/// `tools/call` message in this process (parsing, reading the views as `health_reader`,
/// writing the answer's JSON: what `health-warehouse mcp` does per stdio line), and the round
/// trip of the same message to a release `serve --mcp` over HTTP. Baseline in the same run:
/// the plain SQL a dashboard would send for the same rows.
func runMCPBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = ViewsBenchmark.Options()
    options.durability = durability
    options.samples = 1_000_000
    var runs = 15
    var reader = OptionReader(arguments, usage: MCPBenchmark.usage)
    while let option = reader.next() {
        switch option {
        case "--samples": options.samples = try reader.number(atLeast: 10_000)
        case "--database-url": options.databaseURL = try reader.value()
        case "--runs": runs = try reader.number()
        case "-h", "--help":
            ViewsBenchmark.say(MCPBenchmark.usage)
            return
        default:
            throw reader.failure("unknown option \(option)")
        }
    }
    try MCPBenchmark(options: options, runs: runs).run()
}

/// The assistant benchmark's steps.
struct MCPBenchmark {
    static let usage = """
        usage: health-warehouse-bench mcp [--samples N] [--database-url URL] [--runs N] [--durability default|fast]
          --samples N        samples to load for the timed person (default 1000000; the goal is stated at 10000000)
          --database-url U   a server to use (needs CREATEDB); default: a throwaway cluster
          --runs N           timed calls of each tool, after two warm-ups (default 15)
        """

    let options: ViewsBenchmark.Options
    let runs: Int

    func run() throws {
        let say = ViewsBenchmark.say
        say("mcp benchmark: load average at the start \(loadAverage())")
        defer { say("load average at the end \(loadAverage())") }
        let databases = try ViewsBenchmark.Databases(url: options.databaseURL, durability: options.durability)
        defer { databases.cleanup() }
        let url = try databases.fresh("mcp")
        let connection = try PostgresConnection(connectionString: url)
        defer { connection.close() }
        let load = try ViewsBenchmark(options: options).loadSamples(url, connection: connection)
        say(String(format: "loaded %@ samples for %@ (%d days) in %.0f s; rollups rebuilt in %.1f s", ViewsBenchmark.grouped(load.samples),
                   ViewsBenchmark.person, load.days, load.loadSeconds, load.rebuildSeconds))
        let token = try UIBenchmark(options: options, runs: runs).prepare(url)
        let yesterday = try connection.query("SELECT ($1::date - 1)::text", [load.lastDay]).first?[0] ?? load.lastDay
        let first = try connection.query("SELECT ($1::date - 364)::text", [load.lastDay]).first?[0] ?? load.lastDay
        let calls: [(label: String, tool: String, arguments: String, baseline: String, parameters: [String])] = [
            ("day(\(yesterday))", "day", #"{"date":"\#(yesterday)"}"#,
             "SELECT * FROM health.daily_summary WHERE person = $1 AND day = $2::date", [ViewsBenchmark.person, yesterday]),
            ("summary(\(first) to \(load.lastDay), 365 days)", "summary", #"{"from":"\#(first)","to":"\#(load.lastDay)"}"#,
             "SELECT * FROM health.daily_summary WHERE person = $1 AND day BETWEEN $2::date AND $3::date",
             [ViewsBenchmark.person, first, load.lastDay]),
        ]
        let pool = ViewReading.pool(connectionString: url, maxConnections: 1)
        defer { pool.close() }
        let server = MCPServer(toolbox: Toolbox(reader: try AssistantReader(pool: pool), allowSQL: false), version: "bench")
        let (serve, port) = try CLIProcess.startServe(["--mcp", "--database-url", url])
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        let session = try initialize(port: port, token: token)
        for call in calls {
            let message = Array(#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"\#(call.tool)","arguments":\#(call.arguments)}}"#.utf8)
            var bytes = 0
            let own = try time {
                guard let answer = server.answer(bytes: message, person: ViewsBenchmark.person),
                      case .bool(false)? = answer["result"]?["isError"] else {
                    throw BenchmarkError.usage("\(call.tool) failed")
                }
                // What `health-warehouse mcp` writes on its standard output: the answer's one line.
                bytes = answer.text.utf8.count
            }
            let http = try time {
                let answer = try HTTPTestClient.request(port: port, method: "POST", path: MCPEndpoint.path, headers: [
                    ("Authorization", "Bearer \(token)"), ("Mcp-Session-Id", session), ("Content-Type", "application/json"),
                ], body: message, timeout: 120)
                guard answer.status == 200 else { throw BenchmarkError.usage("POST /mcp answered \(answer.status)") }
            }
            let baseline = try time { _ = try connection.query(call.baseline, call.parameters) }
            say(String(format: "%@: the server's own time p50 %.1f ms (p90 %.1f; goal <= 50), over HTTP p50 %.1f ms; answer %@ bytes; "
                       + "baseline: the plain daily_summary query p50 %.1f ms",
                       call.label, own.percentile(0.5), own.percentile(0.9), http.percentile(0.5), ViewsBenchmark.grouped(bytes),
                       baseline.percentile(0.5)))
        }
    }

    /// Opens an MCP session on `/mcp`; its id.
    func initialize(port: Int, token: String) throws -> String {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
        let answer = try HTTPTestClient.request(port: port, method: "POST", path: MCPEndpoint.path, headers: [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"),
        ], body: Array(body.utf8), timeout: 120)
        guard answer.status == 200, let session = answer.header("Mcp-Session-Id") else {
            throw BenchmarkError.usage("initialize answered \(answer.status)")
        }
        return session
    }

    /// Two warm-ups, then `runs` timed calls of `work`.
    func time(_ work: () throws -> Void) throws -> Timings {
        var timings = Timings()
        for run in 0..<(runs + 2) {
            let started = monotonicSeconds()
            try work()
            if run >= 2 { timings.milliseconds.append((monotonicSeconds() - started) * 1000) }
        }
        return timings
    }
}
