import Backlog
import DemoData
import Foundation
import HealthPayload
import Postgres
import TestSupport
import Warehouse

/// The ingest section of the benchmark; see docs/benchmarks.md ("## Ingest").
///
/// A generated backlog (≥ 1M samples by default) is loaded by `Ingester` — the code path of
/// `health-warehouse ingest` — into a fresh database; the same rows are then loaded with
/// `COPY` into another fresh database made from the same migrations, so both figures come
/// from one cluster in one run. Last, re-running over unchanged files (the whole backlog,
/// then 1000 of its files through the release binary when it is built).
func runIngestBenchmark(_ arguments: [String]) throws {
    var days = 1150
    var format = PayloadFormat.json
    var keep: String?
    var runs = 2
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        index += 1
        func value() throws -> String {
            guard index < arguments.count else { throw BenchmarkError.usage("\(argument) needs a value") }
            index += 1
            return arguments[index - 1]
        }
        switch argument {
        case "--days":
            guard let n = Int(try value()), n > 0 else { throw BenchmarkError.usage("--days must be a positive whole number") }
            days = n
        case "--format":
            guard let f = PayloadFormat(rawValue: try value()) else { throw BenchmarkError.usage("--format must be json or csv") }
            format = f
        case "--keep":
            keep = try value()
        case "--runs":
            guard let n = Int(try value()), n > 0 else { throw BenchmarkError.usage("--runs must be a positive whole number") }
            runs = n
        default:
            throw BenchmarkError.usage("usage: health-warehouse-bench ingest [--days N (1150)] [--format json|csv] [--runs N (2)] [--keep DIR]")
        }
    }
    func say(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }
    func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // 1. The backlog: one file per body, as a saving proxy or `generate` writes them.
    let folder = keep ?? NSTemporaryDirectory() + "hw-bench-backlog-\(getpid())"
    defer { if keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let generateStart = now()
    let summary = try DemoGenerator(.init(start: CivilDate("2023-01-02")!, days: days, format: format, seed: 1)).generate { body in
        try Data(body.bytes).write(to: URL(fileURLWithPath: folder + "/" + body.fileName))
    }
    say("backlog: \(summary.bodies) \(format.rawValue) files, \(summary.samples) samples, \(summary.bytes / 1_000_000) MB, generated in \(String(format: "%.1f", now() - generateStart)) s")

    // 2. A throwaway cluster; every database a copy of the migrated template.
    let cluster = try TestCluster()
    defer { cluster.destroy() }
    let schema = Migrator().migrations.map(\.fileName).joined(separator: ", ")
    say("schema: \(schema)")

    // 3. ingest, through the same code as the command, and 4. COPY of the same rows into the
    // same tables and indexes, each into a fresh database; alternated `runs` times and the best
    // of each kept, because the machine is shared.
    let deliveryColumns = "person, received_at, origin, format, export_id, batch_sequence, is_final, basis, window_start, window_end, occasion_start, occasion_end, generated_at, samples, inserted, duplicates, replaced, quarantined, body_sha256, file"
    let dump = cluster.root.appendingPathComponent("samples.copy").path
    let deliveriesDump = cluster.root.appendingPathComponent("deliveries.copy").path
    defer {
        try? FileManager.default.removeItem(atPath: dump)
        try? FileManager.default.removeItem(atPath: deliveriesDump)
    }
    var ingestDB: TestDatabase!
    var result = IngestSummary()
    var rows = 0
    var bestIngest = Double.infinity, bestCopy = Double.infinity
    var copied = 0
    var ingestTimes: [String] = [], copyTimes: [String] = []
    for run in 1...runs {
        let db = try cluster.freshDatabase(label: "bench_ingest_\(run)")
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
        let summary = Ingester(pool: pool, options: IngestOptions()).run([folder])
        pool.close()
        guard summary.failures.isEmpty else { throw BenchmarkError.usage("ingest failed: \(summary.failures.prefix(3))") }
        ingestTimes.append(String(format: "%.1f", summary.seconds))
        if summary.seconds < bestIngest {
            bestIngest = summary.seconds
            result = summary
        }
        if run == 1 {
            ingestDB = db
            rows = try db.scalar("SELECT count(*) FROM health_store.samples") ?? 0
            // Server-side files: no client transfer on either side; the server writes and reads them.
            try db.query("COPY health_store.samples TO '\(dump)'")
            try db.query("COPY health_store.deliveries (\(deliveryColumns)) TO '\(deliveriesDump)'")
        }
        let copyDB = try cluster.freshDatabase(label: "bench_copy_\(run)")
        let connection = try copyDB.connect()
        let copyStart = now()
        try connection.withTransaction { c in
            try c.query("COPY health_store.samples FROM '\(dump)'")
            try c.query("COPY health_store.deliveries (\(deliveryColumns)) FROM '\(deliveriesDump)'")
        }
        let copySeconds = now() - copyStart
        connection.close()
        copyTimes.append(String(format: "%.1f", copySeconds))
        bestCopy = min(bestCopy, copySeconds)
        copied = try copyDB.scalar("SELECT count(*) FROM health_store.samples") ?? 0
        say("run \(run): ingest \(String(format: "%.1f", summary.seconds)) s, COPY \(String(format: "%.1f", copySeconds)) s")
    }
    let ingestRows = Double(rows) / bestIngest
    let ingestSamples = Double(result.samples) / bestIngest
    let copyRows = Double(copied) / bestCopy
    let pool = PostgresPool(connectionString: ingestDB.connectionString, maxConnections: 2)
    defer { pool.close() }
    let ingester = Ingester(pool: pool, options: IngestOptions())

    // 5. Re-running over unchanged files.
    let rerun = ingester.run([folder])
    let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().prefix(1000).map { folder + "/" + $0 }
    let rerun1000 = ingester.run(Array(files))
    var binaryLine = "release binary not built: run `swift build -c release --product health-warehouse` for the CLI figure"
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("health-warehouse").path
    if FileManager.default.isExecutableFile(atPath: binary) {
        let start = now()
        let status = try ProcessRunner.run(binary, ["ingest", "--database-url", ingestDB.connectionString] + files)
        binaryLine = String(format: "%.3f s for `health-warehouse ingest` over the 1000 files, process start and migration check included (exit %d)",
                            now() - start, status.status)
    }

    print("""
        ingest benchmark (\(days) days, \(format.rawValue), \(summary.bodies) files, \(result.samples) samples, \(rows) distinct rows)
          ingest:  \(String(format: "%.1f", bestIngest)) s, \(Int(ingestSamples)) samples/s (\(Int(ingestRows)) rows stored/s), \(result.batches) batches, one transaction each (best of \(ingestTimes.joined(separator: ", ")) s; \(String(format: "%.1f", result.databaseSeconds)) s of it inside the batches' transactions)
          COPY:    \(String(format: "%.1f", bestCopy)) s, \(Int(copyRows)) rows/s into the same tables and indexes, \(copied) samples + deliveries (best of \(copyTimes.joined(separator: ", ")) s)
          ratio:   \(String(format: "%.2f", ingestRows / copyRows))× COPY's rate (rows stored/s; goal ≥ 0.8×)
          re-run:  \(String(format: "%.3f", rerun.seconds)) s over \(rerun.filesSeen) unchanged files (\(rerun.filesSkipped) skipped, \(rerun.batches) batches)
                   \(String(format: "%.3f", rerun1000.seconds)) s over 1000 unchanged files in-process (goal < 1 s)
                   \(binaryLine)
          schema:  \(schema)
        """)
}
