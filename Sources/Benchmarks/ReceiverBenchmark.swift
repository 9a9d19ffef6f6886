import DemoData
import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The receiver section: realistic 1000-sample batches sent one at a time over HTTP to a
/// real `serve` process, as the app sends them, next to the same bodies stored by the same
/// SQL directly (no HTTP, no decoding in Swift) in the same run.
///
///     health-warehouse-bench receiver [--batches N] [--stridee-rides N] [--stridee-batches N] [--stridee-only]
///
/// Then the Stridee section (`StrideeReceiverBenchmark.swift`); `--stridee-only` runs it alone.
func runReceiverBenchmark(_ arguments: [String]) throws {
    func count(_ flag: String, default value: Int) -> Int {
        guard let i = arguments.firstIndex(of: flag), i + 1 < arguments.count, let n = Int(arguments[i + 1]), n > 0 else { return value }
        return n
    }
    let batches = count("--batches", default: 200)
    let strideeOnly = arguments.contains("--stridee-only")
    if !strideeOnly { print("receiver benchmark: \(batches) batches of 1000 samples per format, one at a time") }
    let cluster = try TestCluster()
    defer { cluster.destroy() }

    for format in [PayloadFormat.json, .csv] where !strideeOnly {
        // Manual 30-day exports: full 1000-sample batches of a phone-and-watch user's data.
        var bodies: [[UInt8]] = []
        let days = batches + batches / 4
        DemoGenerator(.init(start: CivilDate("2024-01-01")!, days: days, format: format, seed: 7, manualExportDays: 30)).generate { body in
            if body.sampleCount == DemoGenerator.maxSamplesPerBatch, bodies.count < batches { bodies.append(body.bytes) }
        }
        guard bodies.count == batches else { throw BenchmarkError.usage("generated \(bodies.count) full batches, wanted \(batches)") }
        let megabytes = Double(bodies.reduce(0) { $0 + $1.count }) / 1_048_576

        let baselineDB = try cluster.freshDatabase(label: "baseline\(format.rawValue)")
        let baseline = try storeDirectly(bodies, format: format, connectionString: baselineDB.connectionString)

        let httpDB = try cluster.freshDatabase(label: "http\(format.rawValue)")
        let (http, rss) = try sendOverHTTP(bodies, format: format, connectionString: httpDB.connectionString)

        let stored = try httpDB.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) ?? 0
        let storedBaseline = try baselineDB.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) ?? 0
        guard stored == storedBaseline else {
            throw BenchmarkError.usage("row counts differ: http \(stored), baseline \(storedBaseline)")
        }
        print("""

            \(format.rawValue.uppercased()) (\(String(format: "%.1f", megabytes)) MB in \(batches) bodies)
              baseline, same SQL without HTTP: \(baseline.summary)
              HTTP through `serve`:            \(http.summary)
              ratio HTTP / baseline (samples/s): \(String(format: "%.2f", http.samplesPerSecond / baseline.samplesPerSecond))  (goal >= 0.80)
              p99 per batch over HTTP: \(String(format: "%.1f", http.percentile(0.99))) ms  (goal <= 50 ms)
              serve RSS: peak \(rss.peak / 1024) MiB, at end \(rss.last / 1024) MiB  (goal <= 64 MiB)
            """)
    }
    try runStrideeReceiverSection(cluster, rides: count("--stridee-rides", default: 20), batches: count("--stridee-batches", default: 20))
}

/// Per-batch latencies of one run.
struct Timings {
    var milliseconds: [Double] = []
    var samples = 0
    var seconds = 0.0

    var samplesPerSecond: Double { Double(samples) / seconds }

    func percentile(_ p: Double) -> Double {
        let sorted = milliseconds.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    var summary: String {
        String(format: "%.0f samples/s, p50 %.1f ms, p99 %.1f ms per batch", samplesPerSecond, percentile(0.5), percentile(0.99))
    }
}

/// The baseline: each body handed to `health_store.store_batch` by PostgreSQL itself — the
/// JSON body's samples array taken by `->'samples'`, the CSV's as the JSON array the decoder
/// builds (decoded before the clock starts) — one transaction per batch.
func storeDirectly(_ bodies: [[UInt8]], format: PayloadFormat, connectionString: String) throws -> Timings {
    let connection = try PostgresConnection(connectionString: connectionString)
    defer { connection.close() }
    var prepared: [(envelope: String, samples: [UInt8])] = []
    for body in bodies {
        guard case .batches(let batches) = try PayloadDecoder.decode(body, format: format), let batch = batches.first else {
            throw BenchmarkError.usage("a generated body did not decode")
        }
        prepared.append((batch.envelope.jsonText, format == .json ? body : batch.samplesJSON))
    }
    var timings = Timings()
    let started = DispatchTime.now().uptimeNanoseconds
    for item in prepared {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let samplesSQL = format == .json ? "($6::jsonb)->'samples'" : "$6::jsonb"
        try connection.withTransaction { conn in
            try conn.query("""
                SELECT inserted FROM health_store.store_batch($1, $2, $3, $4, $5::jsonb, \(samplesSQL), '[]'::jsonb, sha256($6::bytea))
                """, ["default", "http", format.rawValue, nil, item.envelope, PostgresBinaryText(item.samples)])
        }
        timings.milliseconds.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        timings.samples += 1000
    }
    timings.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    return timings
}

/// Resident memory of a process, sampled while the run lasts (KiB).
struct ResidentMemory {
    var peak = 0
    var last = 0

    /// A `kB` field of `/proc/PID/status`: the resident size now (`VmRSS:`), or its peak (`VmHWM:`).
    static func kibibytes(of pid: pid_t, field: String = "VmRSS:") -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
}

/// Starts the real `serve` binary on a free port and sends every body, one at a time.
func sendOverHTTP(_ bodies: [[UInt8]], format: PayloadFormat, connectionString: String) throws -> (Timings, ResidentMemory) {
    let (serve, port) = try CLIProcess.startServe(["--database-url", connectionString])
    defer {
        serve.signal(SIGTERM)
        _ = serve.wait()
    }
    let contentType = format == .json ? "application/json" : "text/csv; charset=utf-8"
    var memory = ResidentMemory()
    var timings = Timings()
    let started = DispatchTime.now().uptimeNanoseconds
    for (i, body) in bodies.enumerated() {
        let t0 = DispatchTime.now().uptimeNanoseconds
        let response = try HTTPTestClient.request(port: port, method: "POST", path: "/",
                                                  headers: [("Content-Type", contentType)], body: body, timeout: 60)
        guard response.status == 200 else { throw BenchmarkError.usage("batch \(i) answered \(response.status): \(response.bodyText)") }
        timings.milliseconds.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
        timings.samples += 1000
        if i % 10 == 0 {
            let rss = ResidentMemory.kibibytes(of: serve.pid)
            memory.peak = max(memory.peak, rss)
        }
    }
    timings.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    memory.last = ResidentMemory.kibibytes(of: serve.pid)
    memory.peak = max(memory.peak, memory.last)
    return (timings, memory)
}
