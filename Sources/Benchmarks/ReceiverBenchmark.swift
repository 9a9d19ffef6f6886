import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The receiver section; see docs/benchmarks.md ("## Receiver").
///
///     health-warehouse-bench receiver [--batches N] [--history-days N] [--against REV] [--format json|csv]
///                                     [--clients 1,2,4] [--skip-node] [--skip-direct] [--durability default|fast]
///                                     [--stridee-rides N] [--stridee-batches N] [--stridee-only | --skip-stridee]
///
/// What users run: a person whose history is already held. Each receiver is first sent the
/// same `--history-days` of a phone-and-watch user's scheduled exports (untimed), then its
/// database vacuumed and analyzed as autovacuum would have done; then full 1000-sample batches
/// are sent one at a time (each answer awaited, as the app sends them), batch by batch to every
/// receiver in turn (the order rotating), so each meets the same machine: a real `serve`
/// process, the bare one-statement upsert of the same bodies into a plain table (the
/// baseline), `serve` of another commit (`--against REV`, built in a temporary folder), the
/// same write path without HTTP (`BatchStore`), and the reference's Node receiver. Then the
/// same with 2 and 4 clients at once, each a person of its own with the same history, for
/// serve and the bare upsert. Last, the Stridee part (`StrideeReceiverBenchmark.swift`).
func runReceiverBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var batches = 200, historyDays = 90, format = PayloadFormat.json, clients = [1, 2, 4], node = true, direct = true
    var strideeRides = 20, strideeBatches = 20, healthd = true, stridee = true, against: [String] = []
    var options = OptionReader(arguments, usage: receiverUsage)
    while let option = options.next() {
        switch option {
        case "--batches": batches = try options.number()
        case "--history-days": historyDays = try options.number()
        case "--against": against.append(try options.value())
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
    // Other builds first: their compiles must not share the machine with a timed phase.
    let builds = try against.map { try AgainstBuild.build($0) }
    let history = try historyDays > 0 ? ReceiverBodies.history(days: historyDays, format: format) : nil
    let bodies = try ReceiverBodies(count: batches, format: format, after: history)
    print("""
        receiver benchmark: \(batches) \(format.rawValue.uppercased()) bodies of 1000 samples (\(String(format: "%.1f", bodies.megabytes)) MB), one at a time per client, \
        after a history of \(historyDays) days (\(history?.bodies.count ?? 0) bodies, \(history?.distinct ?? 0) samples held) sent first, untimed, then VACUUM (ANALYZE)
          \(durability.benchmarkLabel)
          load average at the start: \(loadAverage())
        """)
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }

    let one = try runOneClient(bodies, history: history, builds: builds, node: node, direct: direct, cluster: cluster)
    var lines = one.lines
    lines += ["", "clients at once, each a person of its own (own token) with the same history, one serve; each client sends every body",
              "  clients   HTTP samples/s   p50 ms   p99 ms   bare samples/s   p50 ms   p99 ms   HTTP/bare   serve RSS   HTTP / one client"]
    var differences = 0
    for n in clients where n > 1 {
        say("\(n) clients: bare upsert …")
        let b = try BareUpsert.run(bodies, clients: n, cluster: cluster, history: history)
        say("\(n) clients: serve …")
        let h = try ServeRun.run(bodies, clients: n, cluster: cluster, history: history)
        differences += h.rollupDifferences
        lines.append(String(format: "  %7d   %14.0f   %6.1f   %6.1f   %14.0f   %6.1f   %6.1f   %8.2f×   %7.1f MiB   %.2f× (goal ≥ 1×)", n,
                            h.timings.samplesPerSecond, h.timings.percentile(0.5), h.timings.percentile(0.99),
                            b.samplesPerSecond, b.percentile(0.5), b.percentile(0.99),
                            h.timings.samplesPerSecond / b.samplesPerSecond, Double(h.peakKiB) / 1024,
                            h.timings.samplesPerSecond / one.serveSamplesPerSecond))
    }
    lines += [
        "",
        "checks: every answer's inserted/duplicates as expected and \(bodies.distinct) rows per person on every side (Node: its answers, /stats and its SQLite file); verify_rollups: \(differences) differences",
        "load average at the end: \(loadAverage())",
    ]
    print(lines.joined(separator: "\n"))
    guard differences == 0 else { throw BenchmarkError.usage("verify_rollups found \(differences) differences") }
    if stridee { try runStrideeReceiverSection(cluster, rides: strideeRides, batches: strideeBatches) }
}

let receiverUsage = """
    usage: health-warehouse-bench receiver [--batches N (200)] [--history-days N (90)] [--against REV]… [--format json|csv]
                                           [--clients 1,2,4] [--skip-node] [--skip-direct] [--durability default|fast]
                                           [--stridee-rides N (20)] [--stridee-batches N (20)] [--stridee-only | --skip-stridee]
    """

/// The one-client comparison: every side handed the history, settled, then the timed bodies
/// interleaved batch by batch (the order rotating), so no side meets a quieter machine.
/// Returns the report's lines and serve's samples/s.
func runOneClient(_ bodies: ReceiverBodies, history: ReceiverBodies?, builds: [AgainstBuild.Built], node: Bool, direct: Bool,
                  cluster: TestCluster) throws -> (lines: [String], serveSamplesPerSecond: Double) {
    let bare = try BareSide(cluster: cluster)
    let serve = try ServeSide(name: "HTTP through `serve` (this build)", binary: nil, cluster: cluster)
    var sides: [any HistorySide] = [bare, serve]
    for build in builds { sides.append(try ServeSide(name: "HTTP through `serve` of \(build.short)", binary: build.binary, cluster: cluster)) }
    if direct { sides.append(try DirectSide(cluster: cluster)) }
    var nodeSkipped = "skipped (--skip-node)"
    if node {
        let started = try NodeSide.start()
        if let side = started.side { sides.append(side) } else { nodeSkipped = started.skipped ?? "?" }
    }
    if let history {
        for side in sides {
            say("\(side.name): history …")
            try side.load(history)
            try side.settle()
        }
    }
    try checkpoint(cluster)
    say("one client, \(bodies.bodies.count) batches to \(sides.count) receivers in turn …")
    var timings = [Timings](repeating: Timings(), count: sides.count)
    for index in bodies.bodies.indices {
        for turn in sides.indices {
            let k = (index + turn) % sides.count
            timings[k].milliseconds.append(try sides[k].send(bodies, index: index))
            timings[k].samples += bodies.inserted[index] + bodies.duplicates[index]
        }
    }
    for k in sides.indices { timings[k].seconds = timings[k].milliseconds.reduce(0, +) / 1000 }
    let notes = try sides.map { try $0.finish(bodies) }

    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
    let http = timings[1], baseline = timings[0]
    var lines = ["", "one client (the app's way), a person with history; the timed batches interleaved across receivers"]
    for k in sides.indices {
        lines.append("  \(sides[k].name):")
        lines.append("      \(timings[k].summary)\(k == 0 ? "   (baseline)" : "")")
        if !notes[k].isEmpty { lines.append("      \(notes[k])") }
    }
    if !node || sides.count == 2 + builds.count + (direct ? 1 : 0) { lines.append("  Node receiver: not measured: \(nodeSkipped)") }
    lines += [
        "  HTTP / bare upsert, samples/s:  \(ratio(http.samplesPerSecond, baseline.samplesPerSecond))  (goal ≥ 0.65×)",
        "  HTTP p99 / bare upsert p99:     \(ratio(http.percentile(0.99), baseline.percentile(0.99)))  (goal ≤ 1.5×)",
    ]
    for (offset, build) in builds.enumerated() {
        let other = timings[2 + offset]
        lines.append("  HTTP / HTTP of \(build.short), samples/s: \(ratio(http.samplesPerSecond, other.samplesPerSecond))  (goal ≥ 0.95×); p99 \(ratio(http.percentile(0.99), other.percentile(0.99)))")
    }
    if let k = sides.firstIndex(where: { $0 is NodeSide }) {
        lines.append("  HTTP / Node, samples/s:         \(ratio(http.samplesPerSecond, timings[k].samplesPerSecond))  (goal ≥ 1.5×)")
    }
    if let k = sides.firstIndex(where: { $0 is DirectSide }) {
        lines.append("  HTTP / without HTTP, samples/s: \(ratio(http.samplesPerSecond, timings[k].samplesPerSecond))")
    }
    return (lines, http.samplesPerSecond)
}

/// Progress on stderr; figures go to stdout, flushed first so a log keeps the order.
func say(_ text: String) {
    fflush(nil)
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
