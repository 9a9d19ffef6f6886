import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The receiver section; see docs/benchmarks.md ("## Receiver").
///
///     health-warehouse-bench receiver [--batches N] [--format json|csv] [--clients 1,2,4]
///                                     [--skip-node] [--skip-direct] [--durability default|fast]
///                                     [--stridee-rides N] [--stridee-batches N] [--stridee-only | --skip-stridee]
///
/// Full 1000-sample batches sent one at a time (each answer awaited, as the app sends them) to
/// a real `serve` process, next to, in the same run and on the same cluster: the bare
/// one-statement upsert of the same bodies into a plain table, the same write path without
/// HTTP (`BatchStore`), and the reference's Node receiver. Then the same bodies from 2 and 4
/// clients at once, each a person of its own, for serve and for the bare upsert. Last, the Stridee
/// part (`StrideeReceiverBenchmark.swift`): six-hour rides and 2,000-item wellness batches.
func runReceiverBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var batches = 200, format = PayloadFormat.json, clients = [1, 2, 4], node = true, direct = true
    var strideeRides = 20, strideeBatches = 20, healthd = true, stridee = true
    var options = OptionReader(arguments, usage: receiverUsage)
    while let option = options.next() {
        switch option {
        case "--batches": batches = try options.number()
        case "--format":
            guard let f = PayloadFormat(rawValue: try options.value()) else { throw options.failure("--format takes json or csv") }
            format = f
        case "--clients":
            let list = try options.value().split(separator: ",").map { Int($0) ?? 0 }
            guard !list.isEmpty, list.allSatisfy({ (1...32).contains($0) }) else { throw options.failure("--clients takes counts from 1 to 32, e.g. 1,2,4") }
            clients = Array(Set(list + [1])).sorted()
        case "--skip-node": node = false
        case "--skip-direct": direct = false
        case "--stridee-rides": strideeRides = try options.number()
        case "--stridee-batches": strideeBatches = try options.number()
        case "--stridee-only": healthd = false
        case "--skip-stridee": stridee = false
        default: throw options.failure("unknown option \(option)")
        }
    }

    if !healthd {
        let cluster = try TestCluster(durability: durability)
        defer { cluster.destroy() }
        print(durability.benchmarkLabel)
        try runStrideeReceiverSection(cluster, rides: strideeRides, batches: strideeBatches)
        return
    }
    let bodies = try ReceiverBodies(count: batches, format: format)
    print("""
        receiver benchmark: \(batches) \(format.rawValue.uppercased()) bodies of 1000 samples (\(String(format: "%.1f", bodies.megabytes)) MB, \(bodies.distinct) distinct samples), one at a time per client
          \(durability.benchmarkLabel)
          load average at the start: \(loadAverage())
        """)
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }

    // One client's sides back to back, so they meet the same machine; then the curve.
    var bare: [Int: Timings] = [:], http: [Int: ServeRun.Outcome] = [:]
    var directTimings: Timings?, nodeOutcome: NodeReceiver.Outcome?, nodeSkipped: String? = "skipped (--skip-node)"
    for n in clients {
        say("\(n) client(s): bare upsert …")
        bare[n] = try BareUpsert.run(bodies, clients: n, cluster: cluster)
        if n == 1 && direct { directTimings = try storeWithoutHTTP(bodies, cluster: cluster) }
        say("\(n) client(s): serve …")
        http[n] = try ServeRun.run(bodies, clients: n, cluster: cluster)
        if n == 1 && node {
            say("Node receiver …")
            try checkpoint(cluster)
            (nodeOutcome, nodeSkipped) = try NodeReceiver.run(bodies)
        }
    }

    let one = http[1]!, bareOne = bare[1]!
    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
    func mib(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
    var lines = [
        "",
        "one client (the app's way)",
        "  bare upsert, one statement per body:      \(bareOne.summary)   (baseline)",
    ]
    if let directTimings { lines.append("  write path without HTTP (BatchStore):     \(directTimings.summary)") }
    lines += [
        "  HTTP through `serve`:                     \(one.timings.summary)",
        "    in serve: \(one.phases.summary)",
        "  HTTP / bare upsert, samples/s:  \(ratio(one.timings.samplesPerSecond, bareOne.samplesPerSecond))  (goal ≥ 0.80×)",
        "  HTTP p99 / bare upsert p99:     \(ratio(one.timings.percentile(0.99), bareOne.percentile(0.99)))  (goal ≤ 1.25×)",
        "  serve peak RSS (VmHWM):         \(mib(one.peakKiB))  (goal ≤ 64 MiB)",
    ]
    if let directTimings {
        lines.append("  HTTP / without HTTP, samples/s: \(ratio(one.timings.samplesPerSecond, directTimings.samplesPerSecond))")
    }
    if let nodeOutcome {
        lines += [
            "  Node receiver (reference server.mjs, Node \(nodeOutcome.version), SQLite): \(nodeOutcome.timings.summary), peak RSS \(mib(nodeOutcome.peakKiB))",
            "  HTTP / Node, samples/s:         \(ratio(one.timings.samplesPerSecond, nodeOutcome.timings.samplesPerSecond))  (goal ≥ 3×)",
        ]
    } else {
        lines.append("  Node receiver: not measured: \(nodeSkipped ?? "?")")
    }
    lines += ["", "clients at once, each a person of its own (own token), one serve; each client sends every body",
              "  clients   HTTP samples/s   p50 ms   p99 ms   bare samples/s   p50 ms   p99 ms   HTTP/bare   serve RSS"]
    for n in clients {
        let h = http[n]!, b = bare[n]!
        lines.append(String(format: "  %7d   %14.0f   %6.1f   %6.1f   %14.0f   %6.1f   %6.1f   %8.2f×   %@", n,
                            h.timings.samplesPerSecond, h.timings.percentile(0.5), h.timings.percentile(0.99),
                            b.samplesPerSecond, b.percentile(0.5), b.percentile(0.99),
                            h.timings.samplesPerSecond / b.samplesPerSecond, mib(h.peakKiB)))
    }
    if let most = clients.last, most > 1 {
        lines.append("  scaling, \(most) clients / 1: HTTP \(ratio(http[most]!.timings.samplesPerSecond, one.timings.samplesPerSecond)), bare \(ratio(bare[most]!.samplesPerSecond, bareOne.samplesPerSecond))")
    }
    let differences = http.values.reduce(0) { $0 + $1.rollupDifferences }
    lines += [
        "",
        "checks: every answer's inserted/duplicates as expected and \(bodies.distinct) rows per person on every side\(nodeOutcome != nil ? " (Node: its answers, /stats and its SQLite file)" : ""); verify_rollups: \(differences) differences",
        "load average at the end: \(loadAverage())",
    ]
    print(lines.joined(separator: "\n"))
    guard differences == 0 else { throw BenchmarkError.usage("verify_rollups found \(differences) differences") }
    if stridee { try runStrideeReceiverSection(cluster, rides: strideeRides, batches: strideeBatches) }
}

let receiverUsage = """
    usage: health-warehouse-bench receiver [--batches N (200)] [--format json|csv] [--clients 1,2,4]
                                           [--skip-node] [--skip-direct] [--durability default|fast]
                                           [--stridee-rides N (20)] [--stridee-batches N (20)] [--stridee-only | --skip-stridee]
    """

/// The same write path without HTTP: each body decoded before the clock starts, then stored
/// by `BatchStore` (what `serve` calls), one transaction per batch, over one connection.
func storeWithoutHTTP(_ bodies: ReceiverBodies, cluster: TestCluster) throws -> Timings {
    say("write path without HTTP …")
    let database = try cluster.freshDatabase(label: "direct")
    defer { try? dropDatabase(database, cluster: cluster) }
    let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
    defer { pool.close() }
    var prepared: [(batches: [Batch], sha256: [UInt8])] = []
    for body in bodies.bodies {
        guard case .batches(let batches) = try PayloadDecoder.decode(body, format: bodies.format) else {
            throw BenchmarkError.usage("a generated body did not decode")
        }
        // The body's SHA-256, as serve records it, from PostgreSQL (the benchmarks do not link Hashing).
        let hex: String = try database.scalar("SELECT encode(sha256($1), 'hex')", [PostgresBytea(body)]) ?? ""
        let digest = stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0 }
        prepared.append((batches, digest))
    }
    let store = BatchStore(pool: pool)
    try checkpoint(cluster)
    var timings = Timings()
    let start = monotonicSeconds()
    for (index, item) in prepared.enumerated() {
        let t0 = monotonicSeconds()
        let counts = try store.store(item.batches, person: "client1", origin: .http, bodySHA256: item.sha256)
        timings.milliseconds.append((monotonicSeconds() - t0) * 1000)
        timings.samples += counts.samples
        try bodies.check(index: index, inserted: counts.inserted, duplicates: counts.duplicates + counts.replaced, receiver: "BatchStore")
    }
    timings.seconds = monotonicSeconds() - start
    return timings
}

/// Progress on stderr; figures go to stdout, flushed first so a log keeps the order.
func say(_ text: String) {
    fflush(nil)
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
