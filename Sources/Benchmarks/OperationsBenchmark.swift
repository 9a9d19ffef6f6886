import Foundation
import Harness
import HealthPayload
import HTTPServer
import Postgres
import Receiver
import Warehouse

/// The `metrics` and `tls` sections (docs/benchmarks.md, "## Operations"): what counting every
/// request costs, how long a scrape takes with 1,000 persons held, and HTTPS against plain HTTP
/// on the same run.
///
///     health-warehouse-bench metrics [--requests N] [--rounds N]
///     health-warehouse-bench tls [--batches N] [--requests N]
func runMetricsBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var requests = 4000, rounds = 3
    var options = OptionReader(arguments, usage: "metrics [--requests N] [--rounds N]")
    while let option = options.next() {
        switch option {
        case "--requests": requests = try options.number()
        case "--rounds": rounds = try options.number()
        default: throw options.failure("unknown option \(option)")
        }
    }
    print("metrics benchmark: \(requests) probe requests from 2 clients per run, \(rounds) rounds alternating without and with --metrics-listen")
    print("  load average at the start: \(loadAverage())")
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    let database = try cluster.freshDatabase(label: "metrics")
    var plain: [Double] = [], counted: [Double] = []
    for round in 1...rounds {
        say("round \(round): without, then with metrics …")
        plain.append(try probeThroughput(database, extra: [], requests: requests))
        counted.append(try probeThroughput(database, extra: ["--metrics-listen", "127.0.0.1:0"], requests: requests))
    }
    let without = plain.sorted()[plain.count / 2], with = counted.sorted()[counted.count / 2]
    let perCall = countingNanoseconds()
    print(String(format: "  probes/s without metrics %.0f, with %.0f (medians of %d runs): %.2f× (cost %.1f %%)",
                 without, with, rounds, with / without, (1 - with / without) * 100))
    print(String(format: "  counting one request in process (answered + stored, 4 families): %.0f ns, %.3f %% of a probe's %.0f µs",
                 perCall, perCall / (1e9 / without) * 100, 1e6 / without))
    for persons in [0, 1000] {
        let (render, http) = try scrapeMilliseconds(persons: persons)
        print(String(format: "  scrape with %5d persons (--metrics-per-person): render %.2f ms, GET /metrics over loopback %.2f ms (p50 of 200)",
                     persons, render, http))
    }
    print("  load average at the end: \(loadAverage())")
}

/// Probe POSTs per second through a real `serve` started with `extra`, from two clients.
func probeThroughput(_ database: TestDatabase, extra: [String], requests: Int, tls: Bool = false) throws -> Double {
    let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString] + extra)
    defer { serve.signal(SIGTERM); _ = serve.wait() }
    let probe = Array(#"{"schemaVersion":1,"connectivityTest":true}"#.utf8)
    let (_, seconds) = try onThreads(2) { _ in
        for _ in 0..<(requests / 2) {
            let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: probe)
            guard answer.status == 200 else { throw BenchmarkError.usage("probe answered \(answer.status)") }
        }
    }
    return Double(requests) / seconds
}

/// What `serve` adds per request when counting (the HTTP answer and a stored batch), in ns.
func countingNanoseconds() -> Double {
    let metrics = ReceiverMetrics(version: "bench", schema: "0000", pool: nil)
    let answer = HTTPAnswered(method: "POST", path: "/", status: 200, seconds: 0.004, bodyBytes: 400_000, byServer: false)
    let count = 200_000
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count {
        metrics.answered(answer)
        metrics.recordStored(.healthdJSON, person: "default", inserted: 1000)
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(count)
}

/// A registry holding `persons` persons' counts: its render, and a GET of it over loopback, p50 ms.
func scrapeMilliseconds(persons: Int) throws -> (render: Double, http: Double) {
    let metrics = ReceiverMetrics(version: "bench", schema: "0000", pool: nil, perPerson: persons > 0)
    for k in 0..<persons {
        for way in SampleWay.allCases { metrics.recordStored(way, person: "person\(k)", inserted: 10) }
    }
    var render = Timings(), http = Timings()
    for _ in 0..<200 {
        let t0 = monotonicSeconds()
        _ = metrics.registry.render()
        render.milliseconds.append((monotonicSeconds() - t0) * 1000)
    }
    let server = HTTPServer(configuration: HTTPServerConfiguration(address: ListenAddress(host: "127.0.0.1", port: 0))) { _ in
        HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: Array(metrics.registry.render().utf8))
    }
    try server.start()
    defer { server.stop(graceSeconds: 0) }
    for _ in 0..<200 {
        let t0 = monotonicSeconds()
        _ = try HTTPTestClient.request(port: server.boundPort, path: "/metrics")
        http.milliseconds.append((monotonicSeconds() - t0) * 1000)
    }
    return (render.percentile(0.5), http.percentile(0.5))
}

func runTLSBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var batches = 60, requests = 2000
    var options = OptionReader(arguments, usage: "tls [--batches N] [--requests N]")
    while let option = options.next() {
        switch option {
        case "--batches": batches = try options.number()
        case "--requests": requests = try options.number()
        default: throw options.failure("unknown option \(option)")
        }
    }
    let ca = try ThrowawayCA()
    defer { ca.remove() }
    let pair = try ca.issue("bench")
    let bodies = try ReceiverBodies(count: batches, format: .json)
    print("tls benchmark: \(batches) JSON bodies of 1000 samples one at a time, and \(requests) probes from 2 clients, each on a new connection")
    print("  load average at the start: \(loadAverage())")
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    let tlsArguments = ["--tls-cert", pair.certificate, "--tls-key", pair.key]
    let plainBatches = try batchSeconds(bodies, cluster: cluster, extra: [], authority: nil)
    let tlsBatches = try batchSeconds(bodies, cluster: cluster, extra: tlsArguments, authority: ca.certificatePath)
    print(String(format: "  batches: plain %.2f s, TLS %.2f s: TLS throughput %.2f× plain", plainBatches, tlsBatches, plainBatches / tlsBatches))
    let database = try cluster.freshDatabase(label: "tls-probes")
    let plainProbes = try probeThroughput(database, extra: [], requests: requests)
    let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString] + tlsArguments)
    defer { serve.signal(SIGTERM); _ = serve.wait() }
    HTTPTestTLS.register(port: port, authority: ca.certificatePath)
    let probe = Array(#"{"schemaVersion":1,"connectivityTest":true}"#.utf8)
    let perClient = requests / 2
    let (_, seconds) = try onThreads(2) { _ in
        for _ in 0..<perClient {
            _ = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: probe)
        }
    }
    let tlsProbes = Double(requests) / seconds
    print(String(format: "  probes/s (a handshake each over TLS): plain %.0f, TLS %.0f: %.2f×", plainProbes, tlsProbes, tlsProbes / plainProbes))
    HTTPTestTLS.unregister(port: port)
    for (name, priorities) in [("TLS 1.3", "NORMAL:-VERS-ALL:+VERS-TLS1.3"), ("TLS 1.2", "NORMAL:-VERS-ALL:+VERS-TLS1.2")] {
        var handshakes = Timings()
        for _ in 0..<200 {
            let t0 = monotonicSeconds()
            let connection = try HTTPTestConnection(port: port, tlsAuthority: ca.certificatePath, priorities: priorities)
            handshakes.milliseconds.append((monotonicSeconds() - t0) * 1000)
            connection.close()
        }
        print(String(format: "  handshake %@ (connect included, EC P-256 certificate): p50 %.2f ms, p95 %.2f ms", name,
                     handshakes.percentile(0.5), handshakes.percentile(0.95)))
    }
    print("  load average at the end: \(loadAverage())")
}

/// Seconds to send every body to a fresh `serve` started with `extra`, one at a time.
func batchSeconds(_ bodies: ReceiverBodies, cluster: TestCluster, extra: [String], authority: String?) throws -> Double {
    let database = try cluster.freshDatabase(label: authority == nil ? "plain" : "tls")
    defer { try? dropDatabase(database, cluster: cluster) }
    let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
    let token = try TokenStore(pool: pool).create(person: "bench", label: "bench").token
    pool.close()
    let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString] + extra)
    defer { serve.signal(SIGTERM); _ = serve.wait() }
    if let authority { HTTPTestTLS.register(port: port, authority: authority) }
    defer { HTTPTestTLS.unregister(port: port) }
    try checkpoint(cluster)
    return try post(bodies, port: port, token: token, receiver: authority == nil ? "plain" : "tls") { _, _ in }.seconds
}
