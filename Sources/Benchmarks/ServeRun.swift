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
    }

    /// Runs `clients` clients against one `serve` over a fresh database; checks every answer,
    /// the rows each person holds and `verify_rollups`.
    static func run(_ bodies: ReceiverBodies, clients: Int, cluster: TestCluster) throws -> Outcome {
        let database = try cluster.freshDatabase(label: "http\(clients)")
        defer { try? dropDatabase(database, cluster: cluster) }
        let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
        let tokens = try (0..<clients).map { try TokenStore(pool: pool).create(person: "client\($0 + 1)", label: "bench").token }
        pool.close()
        let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait()
        }
        try checkpoint(cluster)
        let (parts, seconds) = try onThreads(clients) { k in
            try post(bodies, port: port, token: tokens[k], receiver: "serve") { index, answer in
                let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
                let again = (counts?["duplicates"] as? Int).map { $0 + ((counts?["replaced"] as? Int) ?? 0) }
                try bodies.check(index: index, inserted: counts?["inserted"] as? Int, duplicates: again, receiver: "serve")
            }
        }
        let peak = peakResidentKiB(of: serve.pid)
        var differences = 0
        for k in 0..<clients {
            let person = "client\(k + 1)"
            let rows = try database.scalar("SELECT count(*) FROM health.samples WHERE person = $1", [person], as: Int.self) ?? 0
            guard rows == bodies.distinct else {
                throw BenchmarkError.usage("serve: \(person) holds \(rows) samples, expected \(bodies.distinct)")
            }
            differences += try database.scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [person], as: Int.self) ?? 0
        }
        return Outcome(timings: .merged(parts, seconds: seconds), peakKiB: peak, rollupDifferences: differences)
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
