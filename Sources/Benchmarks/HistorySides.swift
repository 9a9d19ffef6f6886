import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// One receiver of the one-client comparison with history (`ReceiverHistory`): handed the
/// person's history untimed, settled as a running server would be, then sent the timed bodies
/// one at a time, interleaved with the other sides so each meets the same machine.
protocol HistorySide: AnyObject {
    /// How the report names it.
    var name: String { get }
    /// Stores body `index` of `bodies` and checks the answer's counts; returns its round trip
    /// in milliseconds (what the clock measures of this side alone).
    func send(_ bodies: ReceiverBodies, index: Int) throws -> Double
    /// After the history: what autovacuum would have done by now on a server that ran a while.
    func settle() throws
    /// After the timed bodies: checks what is held, stops what runs; a note for the report.
    func finish(_ bodies: ReceiverBodies) throws -> String
}

extension HistorySide {
    /// Sends every body of `bodies` untimed (the history).
    func load(_ bodies: ReceiverBodies) throws {
        for index in bodies.bodies.indices { _ = try send(bodies, index: index) }
    }
}

/// `VACUUM (ANALYZE)` of a database: what autovacuum does once a table has changed enough.
func settleDatabase(_ database: TestDatabase) throws {
    try database.query("VACUUM (ANALYZE)")
}

/// `serve` of this build, or of another (`binary`, from `--against`), over a database of its own
/// that the build migrates itself.
final class ServeSide: HistorySide {
    let name: String
    private let database: TestDatabase
    private let cluster: TestCluster
    private let serve: CLIProcess.Running
    private let port: Int
    private let token: String
    private var stopped = false

    init(name: String, binary: String?, cluster: TestCluster) throws {
        self.name = name
        self.cluster = cluster
        database = try cluster.freshDatabase(label: "side", migrated: false)
        func cli(_ arguments: [String]) throws -> CLIProcess.Output {
            let out = try binary.map { try CLIProcess.runProgram($0, arguments) } ?? CLIProcess.run(arguments)
            guard out.status == 0 else { throw BenchmarkError.usage("\(name): \(arguments.first ?? "") failed: \(out.stderr.suffix(500))") }
            return out
        }
        _ = try cli(["migrate", "--database-url", database.connectionString])
        token = try cli(["token", "create", "--person", "client1", "--database-url", database.connectionString])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString], ready: false, binary: binary)
        let deadline = monotonicSeconds() + 60
        while (try? HTTPTestClient.request(port: port, path: "/healthz"))?.status != 200 {
            guard monotonicSeconds() < deadline else { throw BenchmarkError.usage("\(name): /healthz never answered 200") }
            usleep(50_000)
        }
    }

    deinit {
        if !stopped {
            serve.signal(SIGKILL)
            _ = serve.wait()
        }
        try? dropDatabase(database, cluster: cluster)
    }

    func send(_ bodies: ReceiverBodies, index: Int) throws -> Double {
        let headers = [("Content-Type", bodies.contentType), ("Authorization", "Bearer \(token)")]
        let t0 = monotonicSeconds()
        let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers, body: bodies.bodies[index], timeout: 120)
        let ms = (monotonicSeconds() - t0) * 1000
        guard answer.status == 200 else { throw BenchmarkError.usage("\(name): body \(index) answered \(answer.status): \(answer.bodyText.prefix(200))") }
        let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        let again = (counts?["duplicates"] as? Int).map { $0 + ((counts?["replaced"] as? Int) ?? 0) }
        try bodies.check(index: index, inserted: counts?["inserted"] as? Int, duplicates: again, receiver: name)
        return ms
    }

    func settle() throws { try settleDatabase(database) }

    func finish(_ bodies: ReceiverBodies) throws -> String {
        let peak = peakResidentKiB(of: serve.pid)
        serve.signal(SIGTERM)
        let log = serve.wait().stderr
        stopped = true
        let rows = try database.scalar("SELECT count(*) FROM health.samples WHERE person = 'client1'", as: Int.self) ?? 0
        guard rows == bodies.distinct else { throw BenchmarkError.usage("\(name): holds \(rows) samples, expected \(bodies.distinct)") }
        let differences = try database.scalar("SELECT count(*) FROM health_store.verify_rollups('client1')", as: Int.self) ?? 0
        guard differences == 0 else { throw BenchmarkError.usage("\(name): verify_rollups found \(differences) differences") }
        let phases = ServeRun.LoggedPhases(log: log)
        let timed = ServeRun.LoggedPhases(log: log, last: bodies.bodies.count)
        return String(format: "peak RSS %.1f MiB; in serve over the timed batches: decode p50 %.1f ms, db p50 %.1f ms, db mean %.1f ms (whole log: %d batches)",
                      Double(peak) / 1024, timed.decode.percentile(0.5), timed.database.percentile(0.5), timed.database.mean,
                      phases.request.milliseconds.count)
    }
}

/// The baseline: each body upserted by one bare statement into one plain table (`BareUpsert`).
final class BareSide: HistorySide {
    let name = "bare upsert"
    private let database: TestDatabase
    private let cluster: TestCluster
    private let connection: PostgresConnection

    init(cluster: TestCluster) throws {
        self.cluster = cluster
        database = try cluster.freshDatabase(label: "bare", migrated: false)
        try database.query(BareUpsert.table)
        connection = try database.connect()
    }

    deinit {
        connection.close()
        try? dropDatabase(database, cluster: cluster)
    }

    func send(_ bodies: ReceiverBodies, index: Int) throws -> Double {
        let parameter = try BareUpsert.parameter(bodies.bodies[index], format: bodies.format)
        let t0 = monotonicSeconds()
        try connection.query(BareUpsert.statement(bodies.format), ["client1", PostgresBinaryText(parameter)])
        return (monotonicSeconds() - t0) * 1000
    }

    func settle() throws { try settleDatabase(database) }

    func finish(_ bodies: ReceiverBodies) throws -> String {
        let rows = try database.scalar("SELECT count(*) FROM bare_samples", as: Int.self) ?? 0
        guard rows == bodies.distinct else { throw BenchmarkError.usage("bare upsert: holds \(rows) rows, expected \(bodies.distinct)") }
        return ""
    }
}

/// This build's write path without HTTP: each body decoded before its clock starts, then
/// stored by `BatchStore` (what `serve` calls), one transaction per batch.
final class DirectSide: HistorySide {
    let name = "write path without HTTP"
    private let database: TestDatabase
    private let cluster: TestCluster
    private let pool: PostgresPool

    init(cluster: TestCluster) throws {
        self.cluster = cluster
        database = try cluster.freshDatabase(label: "direct")
        pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
    }

    deinit {
        pool.close()
        try? dropDatabase(database, cluster: cluster)
    }

    func send(_ bodies: ReceiverBodies, index: Int) throws -> Double {
        let body = bodies.bodies[index]
        guard case .batches(let batches) = try PayloadDecoder.decode(body, format: bodies.format) else {
            throw BenchmarkError.usage("a generated body did not decode")
        }
        let t0 = monotonicSeconds()
        let counts = try BatchStore(pool: pool).store(batches, person: "client1", origin: .http, bodySHA256: Array(repeating: 0, count: 32))
        let ms = (monotonicSeconds() - t0) * 1000
        try bodies.check(index: index, inserted: counts.inserted, duplicates: counts.duplicates + counts.replaced, receiver: name)
        return ms
    }

    func settle() throws { try settleDatabase(database) }

    func finish(_ bodies: ReceiverBodies) throws -> String {
        let rows = try database.scalar("SELECT count(*) FROM health.samples WHERE person = 'client1'", as: Int.self) ?? 0
        guard rows == bodies.distinct else { throw BenchmarkError.usage("\(name): holds \(rows) samples, expected \(bodies.distinct)") }
        return ""
    }
}
