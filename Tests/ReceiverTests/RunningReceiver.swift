import Foundation
import Harness
import HealthPayload
import HTTPServer
import Postgres
import Receiver
import TestSupport
import Warehouse

/// A receiver on a loopback port over a test database, stopped by `stop()`. With
/// `HEALTH_WAREHOUSE_TEST_TLS=1` it serves HTTPS with the run's throwaway CA
/// (`ThrowawayCA.shared`), and every client of these tests speaks TLS to it
/// (`HTTPTestTLS`): `make test` runs the healthd and Stridee contract suites so a second time.
final class RunningReceiver: Sendable {
    let server: HTTPServer
    let pool: PostgresPool
    var port: Int { server.boundPort }

    /// `sessionSettings` are the writer pool's, as `serve` sets `lock_timeout` and `statement_timeout`.
    init(connectionString: String, authHeader: String = "Authorization", maxBody: Int = 4 << 20, poolSize: Int = 4,
         sessionSettings: [(name: String, value: String)] = [], maxHAEBody: Int = HAEDecoder.defaultMaxBodyBytes,
         metrics: ReceiverMetrics? = nil) throws {
        pool = PostgresPool(connectionString: connectionString, maxConnections: poolSize, waitLimit: 30,
                            sessionSettings: sessionSettings)
        let receiver = Receiver(pool: pool, configuration: ReceiverConfiguration(authHeader: authHeader, maxHAEBodyBytes: maxHAEBody),
                                metrics: metrics)
        // The credential is checked on the head, as in `serve`.
        server = HTTPServer(configuration: HTTPServerConfiguration(
            address: try ListenAddress.parse("127.0.0.1:0"), maxBodyBytes: maxBody, connectionLimit: 64,
            connectionTimeoutSeconds: 10, tls: try Self.tlsFiles()), onHead: receiver.admit)
        try server.start()
        if server.usesTLS { HTTPTestTLS.register(port: server.boundPort, authority: try ThrowawayCA.shared.get().certificatePath) }
    }

    /// The run's server pair when `HEALTH_WAREHOUSE_TEST_TLS=1`, else nil (plain HTTP).
    static func tlsFiles() throws -> TLSFiles? {
        guard ProcessInfo.processInfo.environment["HEALTH_WAREHOUSE_TEST_TLS"] == "1" else { return nil }
        let ca = try ThrowawayCA.shared.get()
        return TLSFiles(certificatePath: ca.directory + "/server.pem", keyPath: ca.directory + "/server.key")
    }

    func stop() {
        if server.usesTLS { HTTPTestTLS.unregister(port: server.boundPort) }
        server.stop(graceSeconds: 5)
        pool.close()
    }

    /// POSTs a body and returns the answer.
    func post(_ body: [UInt8], contentType: String? = "application/json", headers: [(name: String, value: String)] = [],
              path: String = "/") throws -> HTTPTestResponse {
        var fields = headers
        if let contentType { fields.append(("Content-Type", contentType)) }
        return try HTTPTestClient.request(port: port, method: "POST", path: path, headers: fields, body: body)
    }

    func get(_ path: String, headers: [(name: String, value: String)] = []) throws -> HTTPTestResponse {
        try HTTPTestClient.request(port: port, method: "GET", path: path, headers: headers)
    }
}

/// Runs `body` with a receiver over a fresh database.
func withReceiver<T>(label: String = #function, authHeader: String = "Authorization", maxBody: Int = 4 << 20,
                     _ body: (RunningReceiver, TestDatabase) throws -> T) throws -> T {
    try TestPostgres.withDatabase(label: label) { db in
        let receiver = try RunningReceiver(connectionString: db.connectionString, authHeader: authHeader, maxBody: maxBody)
        defer { receiver.stop() }
        return try body(receiver, db)
    }
}

/// The JSON object of a response body.
func json(_ response: HTTPTestResponse) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
}

/// Counts of what a database holds for a person.
func counts(_ db: TestDatabase, person: String = "default") throws -> (samples: Int, deliveries: Int, quarantine: Int) {
    let row = try db.query("""
        SELECT (SELECT count(*) FROM health_store.samples WHERE person = $1),
               (SELECT count(*) FROM health_store.deliveries WHERE person = $1),
               (SELECT count(*) FROM health_store.quarantine WHERE person = $1)
        """, [person]).first!
    return (try row.decode(0), try row.decode(1), try row.decode(2))
}
