import Foundation
import Harness
import Postgres
import Warehouse

/// The HTTP side: the release `serve` binary on a loopback port, sent the bodies by `clients`
/// clients at once, client k as person `client<k+1>` with a token of its own.
enum ServeRun {
    /// What one run measured.
    struct Outcome {
        var timings: Timings
        /// `serve`'s peak resident size over the run (VmHWM), KiB.
        var peakKiB: Int
        /// Rows `verify_rollups` reported over every person: 0 when the rollups are right.
        var rollupDifferences: Int
        /// serve's own split of each stored batch, from its `http.request` log lines.
        var phases: LoggedPhases
    }

    /// Per-batch times `serve` logs for each `200` batch (`decode_ms`, `db_ms`, `ms`).
    struct LoggedPhases {
        var decode = Timings(), database = Timings(), request = Timings()

        /// Reads the `http.request … status=200` lines of a serve log (only the `last` ones
        /// when given: the timed batches after a history).
        init(log: String, last: Int? = nil) {
            let lines = log.split(separator: "\n").filter { $0.contains(" http.request ") && $0.contains(" status=200 ") }
            for line in lines.suffix(last ?? lines.count) {
                func field(_ name: String) -> Double? {
                    guard let range = line.range(of: " \(name)=") else { return nil }
                    return Double(line[range.upperBound...].prefix { $0 == "." || $0.isNumber })
                }
                guard let decode = field("decode_ms"), let database = field("db_ms"), let request = field("ms") else { continue }
                self.decode.milliseconds.append(decode)
                self.database.milliseconds.append(database)
                self.request.milliseconds.append(request)
            }
        }

        /// `decode 1.2 ms, db 57.0 ms, whole request 60.1 ms (p50 of serve's log)`
        var summary: String {
            String(format: "decode %.1f ms, db %.1f ms, whole request in serve %.1f ms (p50s of serve's log over %d batches)",
                   decode.percentile(0.5), database.percentile(0.5), request.percentile(0.5), request.milliseconds.count)
        }
    }

    /// Runs `clients` clients against one `serve` over a fresh database, each person first sent
    /// `history` untimed (then the database vacuumed and analyzed, as autovacuum would have);
    /// checks every answer, the rows each person holds and `verify_rollups`.
    static func run(_ bodies: ReceiverBodies, clients: Int, cluster: TestCluster, history: ReceiverBodies? = nil) throws -> Outcome {
        let database = try cluster.freshDatabase(label: "http\(clients)")
        defer { try? dropDatabase(database, cluster: cluster) }
        return try run(bodies, clients: clients, database: database, history: history) {
            if history != nil { try settleDatabase(database) }
            try checkpoint(cluster)
        }
    }

    /// `run` over a migrated `database` of any server (a Citus coordinator's too); `beforeClock`
    /// runs once serve is up and the history sent, right before the clock starts.
    static func run(_ bodies: ReceiverBodies, clients: Int, database: TestDatabase, history: ReceiverBodies? = nil,
                    beforeClock: () throws -> Void) throws -> Outcome {
        let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
        let tokens = try (0..<clients).map { try TokenStore(pool: pool).create(person: "client\($0 + 1)", label: "bench").token }
        pool.close()
        let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString])
        var log: String?
        defer {
            if log == nil {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
        }
        if let history {
            for k in 0..<clients {
                _ = try post(history, port: port, token: tokens[k], receiver: "serve (history)") { _, _ in }
            }
        }
        try beforeClock()
        let (parts, seconds) = try onThreads(clients) { k in
            try post(bodies, port: port, token: tokens[k], receiver: "serve") { index, answer in
                let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                let again = (counts?["duplicates"] as? Int).map { $0 + ((counts?["replaced"] as? Int) ?? 0) }
                try bodies.check(index: index, inserted: counts?["inserted"] as? Int, duplicates: again, receiver: "serve")
            }
        }
        let peak = peakResidentKiB(of: serve.pid)
        serve.signal(SIGTERM)
        log = serve.wait().stderr
        var differences = 0
        for k in 0..<clients {
            let person = "client\(k + 1)"
            let rows = try database.scalar("SELECT count(*) FROM health.samples WHERE person = $1", [person], as: Int.self) ?? 0
            guard rows == bodies.distinct else {
                throw BenchmarkError.usage("serve: \(person) holds \(rows) samples, expected \(bodies.distinct)")
            }
            differences += try database.scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [person], as: Int.self) ?? 0
        }
        return Outcome(timings: .merged(parts, seconds: seconds), peakKiB: peak, rollupDifferences: differences,
                       phases: LoggedPhases(log: log ?? ""))
    }
}

/// Posts every body in order, each on a new connection and each answer awaited, as the app
/// sends them; `check` sees each `200` answer after its batch's clock has stopped.
func post(_ bodies: ReceiverBodies, port: Int, token: String, receiver: String,
          check: (Int, HTTPTestResponse) throws -> Void) throws -> Timings {
    let headers = [("Content-Type", bodies.contentType), ("Authorization", "Bearer \(token)")]
    var timings = Timings()
    let start = monotonicSeconds()
    for (index, body) in bodies.bodies.enumerated() {
        let t0 = monotonicSeconds()
        let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers, body: body, timeout: 120)
        timings.milliseconds.append((monotonicSeconds() - t0) * 1000)
        guard answer.status == 200 else {
            throw BenchmarkError.usage("\(receiver): body \(index) answered \(answer.status): \(answer.bodyText.prefix(200))")
        }
        timings.samples += bodies.inserted[index] + bodies.duplicates[index]
        try check(index, answer)
    }
    timings.seconds = monotonicSeconds() - start
    return timings
}
