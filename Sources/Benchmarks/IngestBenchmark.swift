import Backlog
import Civil
import DemoData
import Foundation
import Harness
import HealthPayload
import Pipeline
import Postgres
import Warehouse

/// The ingest section of the benchmark; see docs/benchmarks.md ("## Ingest").
///
/// A generated backlog (≥ 1M samples by default) is loaded by `Ingester` — the code path of
/// `health-warehouse ingest` — into a fresh database; the same rows are then loaded with
/// `COPY` into another fresh database made from the same migrations, so both figures come
/// from one cluster in one run. Last, re-running over unchanged files (the whole backlog,
/// then 1000 of its files through the release binary when it is built).
func runIngestBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    let options = try IngestBenchmarkOptions(arguments)
    let loadAtStart = loadAverage()

    // 1. The backlog: one file per body, as a saving proxy or `generate` writes them.
    let folder = options.keep ?? NSTemporaryDirectory() + "hw-bench-backlog-\(getpid())"
    defer { if options.keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
    let backlog = try generateBacklog(options, into: folder)

    // 2. A throwaway cluster; every database a copy of the migrated template.
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }
    var runs = try IngestRuns(cluster: cluster, folder: folder, functionTimes: options.functionTimes)
    defer { runs.removeDumps() }
    say("schema: \(runs.schema)")

    // 3. ingest, through the same code as the command, and 4. COPY of the same rows into the
    // same tables and indexes, each into a fresh database; alternated `runs` times and the best
    // of each kept, because the machine is shared.
    for run in 1...options.runs {
        if options.withoutRefresh { try runs.ingestWithoutRefresh(run) }
        let ingestSeconds = try runs.ingest(run)
        let copySeconds = try runs.copy(run)
        try runs.sayFunctionTimes()
        say("run \(run): ingest \(String(format: "%.1f", ingestSeconds)) s, COPY \(String(format: "%.1f", copySeconds)) s; load average \(loadAverage())")
    }
    let afterwards = try IngestAfterwards(runs.ingestDB, folder: folder)
    print(runs.report(options, durability: durability, bodies: backlog.bodies, loadAtStart: loadAtStart, afterwards: afterwards))
    guard afterwards.differences == 0 else { throw BenchmarkError.usage("verify_rollups found \(afterwards.differences) differences") }
}

/// `ingest`'s options.
private struct IngestBenchmarkOptions {
    var days = 1150
    var format = PayloadFormat.json
    var keep: String?
    var runs = 2
    /// Manual 30-day exports (`--full-batches`): 1000-sample batches instead of the schedule's few hundred.
    var manualExportDays = 0
    /// Each run also ingests into a database whose rollup refresh does nothing: what the rollups
    /// add to a batch, measured next to it.
    var withoutRefresh = false
    /// Server time per SQL function (track_functions) of each run's ingest.
    var functionTimes = false

    init(_ arguments: [String]) throws {
        var options = OptionReader(arguments, usage: "usage: health-warehouse-bench ingest [--days N (1150)] [--format json|csv] [--runs N (2)] [--full-batches] [--without-refresh] [--function-times] [--keep DIR] [--durability default|fast]")
        while let option = options.next() {
            switch option {
            case "--days": days = try options.number()
            case "--format":
                guard let f = PayloadFormat(rawValue: try options.value()) else { throw options.failure("--format must be json or csv") }
                format = f
            case "--keep": keep = try options.value()
            case "--full-batches": manualExportDays = 30
            case "--without-refresh": withoutRefresh = true
            case "--function-times": functionTimes = true
            case "--runs": runs = try options.number()
            default: throw options.failure("unknown option \(option)")
            }
        }
    }
}

/// Writes the generated backlog into `folder`, one file per body.
private func generateBacklog(_ options: IngestBenchmarkOptions, into folder: String) throws -> DemoGenerator.Summary {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let generateStart = monotonicSeconds()
    let summary = try DemoGenerator(.init(start: CivilDate("2023-01-02")!, days: options.days, format: options.format, seed: 1,
                                          manualExportDays: options.manualExportDays)).generate { body in
        try Data(body.bytes).write(to: URL(fileURLWithPath: folder + "/" + body.fileName))
    }
    say("backlog: \(summary.bodies) \(options.format.rawValue) files, \(summary.samples) samples, \(summary.bytes / 1_000_000) MB, generated in \(String(format: "%.1f", monotonicSeconds() - generateStart)) s")
    return summary
}

/// The timed loads of every run and the best of each side.
///
/// Autovacuum runs, as on every server: a new person's tables are analyzed while they load.
/// Each database is vacuumed and analyzed (untimed) right after its timed phase, so that
/// autovacuum finds nothing of it left to do while the other side is timed; and a checkpoint
/// before each timed phase, so neither pays for the other's dirty pages.
private struct IngestRuns {
    let cluster: TestCluster
    let folder: String
    let functionTimes: Bool
    let admin: PostgresConnection
    let schema: String
    var dumps: [(table: String, columns: String, file: String)] = []
    var ingestDB: TestDatabase!
    var result = IngestSummary()
    var rows = 0, copied = 0
    var bestIngest = Double.infinity, bestCopy = Double.infinity, bestBare = Double.infinity
    var bestIngestServerCPU = Double.infinity, bestIngestOwnCPU = Double.infinity
    var bestCopyServerCPU = Double.infinity, bestBareServerCPU = Double.infinity
    var ingestTimes: [String] = [], copyTimes: [String] = [], bareTimes: [String] = []
    /// The database of the run's ingest, until its COPY has run.
    private var lastIngested: TestDatabase?

    init(cluster: TestCluster, folder: String, functionTimes: Bool) throws {
        self.cluster = cluster
        self.folder = folder
        self.functionTimes = functionTimes
        admin = try PostgresConnection(connectionString: cluster.connectionString(database: "postgres"))
        if functionTimes {
            try admin.query("ALTER SYSTEM SET track_functions = 'all'")
            try admin.query("SELECT pg_reload_conf()")
        }
        schema = Migrator().migrations.map(\.fileName).joined(separator: ", ")
    }

    func removeDumps() {
        for dump in dumps { try? FileManager.default.removeItem(atPath: dump.file) }
        admin.close()
    }

    /// The backlog through `Ingester` into `database`: the summary and the server's CPU seconds.
    private func timedIngest(into database: TestDatabase) throws -> (IngestSummary, serverCPU: Double, ownCPU: Double) {
        let pool = commandPool(database.connectionString)
        try admin.query("CHECKPOINT")
        let serverBefore = serverCPUSeconds(cluster), ownBefore = ownCPUSeconds()
        let summary = Ingester(pool: pool, options: IngestOptions()).run([folder])
        pool.close()
        usleep(200_000)  // let the backend exit so the postmaster has reaped its CPU time
        let serverCPU = serverCPUSeconds(cluster) - serverBefore, ownCPU = ownCPUSeconds() - ownBefore
        guard summary.failures.isEmpty else { throw BenchmarkError.usage("ingest failed: \(summary.failures.prefix(3))") }
        try database.query("VACUUM (ANALYZE)")
        return (summary, serverCPU, ownCPU)
    }

    /// The same ingest into a database where the refresh store_batch calls does nothing.
    mutating func ingestWithoutRefresh(_ run: Int) throws {
        let bare = try cluster.freshDatabase(label: "bench_bare_\(run)")
        try bare.query("""
            CREATE OR REPLACE FUNCTION health_store.refresh_batch_rollups(p_person text, p_keys health_store.rollup_key[],
              p_added health_store.added_samples[]) RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$
            """)
        let (summary, serverCPU, _) = try timedIngest(into: bare)
        bestBareServerCPU = min(bestBareServerCPU, serverCPU)
        bestBare = min(bestBare, summary.seconds)
        bareTimes.append(String(format: "%.1f", summary.seconds))
        say("run \(run): ingest without the rollup refresh \(String(format: "%.1f", summary.seconds)) s")
    }

    /// The ingest of run `run`; its seconds.
    mutating func ingest(_ run: Int) throws -> Double {
        let db = try cluster.freshDatabase(label: "bench_ingest_\(run)")
        let (summary, serverCPU, ownCPU) = try timedIngest(into: db)
        bestIngestServerCPU = min(bestIngestServerCPU, serverCPU)
        bestIngestOwnCPU = min(bestIngestOwnCPU, ownCPU)
        ingestTimes.append(String(format: "%.1f", summary.seconds))
        if summary.seconds < bestIngest {
            bestIngest = summary.seconds
            result = summary
        }
        lastIngested = db
        return summary.seconds
    }

    /// COPY of the ingested rows into a fresh database (the dumps made from the first run's
    /// ingest); its seconds.
    mutating func copy(_ run: Int) throws -> Double {
        let copyDB = try cluster.freshDatabase(label: "bench_copy_\(run)")
        if run == 1, let db = lastIngested {
            ingestDB = db
            rows = try db.scalar("SELECT count(*) FROM health_store.samples") ?? 0
            dumps = try copyPlan(from: db, into: copyDB, folder: cluster.root.path)
            // Server-side files: no client transfer on either side; the server writes and reads them.
            for dump in dumps { try db.query("COPY health_store.\(dump.table) (\(dump.columns)) TO '\(dump.file)'") }
            say("COPY loads: " + dumps.map(\.table).joined(separator: ", "))
        }
        let connection = try copyDB.connect()
        try admin.query("CHECKPOINT")
        let copyServerBefore = serverCPUSeconds(cluster)
        let copyStart = monotonicSeconds()
        try connection.withTransaction { c in
            for dump in dumps { try c.query("COPY health_store.\(dump.table) (\(dump.columns)) FROM '\(dump.file)'") }
        }
        let copySeconds = monotonicSeconds() - copyStart
        try connection.query("VACUUM (ANALYZE)")
        connection.close()
        usleep(200_000)
        bestCopyServerCPU = min(bestCopyServerCPU, serverCPUSeconds(cluster) - copyServerBefore)
        copyTimes.append(String(format: "%.1f", copySeconds))
        bestCopy = min(bestCopy, copySeconds)
        copied = try copyDB.scalar("SELECT count(*) FROM health_store.samples") ?? 0
        return copySeconds
    }

    /// With `--function-times`, the last ingest's server time per SQL function.
    func sayFunctionTimes() throws {
        guard functionTimes, let db = lastIngested else { return }
        usleep(500_000)  // the backends' statistics reach the shared ones when they exit
        for row in try db.query("""
            SELECT funcname, calls, round(total_time::numeric), round(self_time::numeric) FROM pg_stat_user_functions
            ORDER BY total_time DESC LIMIT 8
            """) {
            say("  \(row[0] ?? ""): \(row[1] ?? "") calls, \(row[2] ?? "") ms (\(row[3] ?? "") ms in itself)")
        }
    }

    /// The figures, as the benchmark prints them.
    func report(_ options: IngestBenchmarkOptions, durability: ClusterDurability, bodies: Int, loadAtStart: String,
                afterwards: IngestAfterwards) -> String {
        let ingestRows = Double(rows) / bestIngest
        let ingestSamples = Double(result.samples) / bestIngest
        let copyRows = Double(copied) / bestCopy
        // What the rollup refresh adds to ingest: the same backlog into a database without it.
        let rollupLine = !options.withoutRefresh ? "" : String(
            format: "\n  rollups: %.1f s without the rollup refresh (best of %@ s): the refresh adds %+.1f%% wall clock; server CPU %.1f s vs %.1f s: %+.1f%%",
            bestBare, bareTimes.joined(separator: ", "), (bestIngest - bestBare) / bestBare * 100,
            bestIngestServerCPU, bestBareServerCPU, (bestIngestServerCPU - bestBareServerCPU) / bestBareServerCPU * 100)
        return """
            ingest benchmark, \(durability.benchmarkLabel); load average \(loadAtStart) at the start, \(loadAverage()) at the end
            (\(options.days) days, \(options.format.rawValue), \(options.manualExportDays > 0 ? "manual 30-day exports" : "scheduled exports"), \(bodies) files, \(result.samples) samples, \(rows) distinct rows)
              ingest:  \(String(format: "%.1f", bestIngest)) s, \(Int(ingestSamples)) samples/s (\(Int(ingestRows)) rows stored/s), \(result.batches) batches in groups of up to \(BatchGroup.maxSamples) samples a transaction (best of \(ingestTimes.joined(separator: ", ")) s; \(String(format: "%.1f", result.databaseSeconds)) s of it storing)
              COPY:    \(String(format: "%.1f", bestCopy)) s, \(Int(copyRows)) rows/s into the same tables and indexes, \(copied) samples + \(dumps.filter { $0.table != "sample_rows" }.map(\.table).joined(separator: " + ")) (best of \(copyTimes.joined(separator: ", ")) s)
              ratio:   \(String(format: "%.2f", ingestRows / copyRows))× COPY's rate (rows stored/s, wall clock; goal ≥ 0.8×)\(rollupLine)
              CPU:     server \(String(format: "%.1f", bestIngestServerCPU)) s for ingest (+ \(String(format: "%.1f", bestIngestOwnCPU)) s in this process reading and decoding) vs \(String(format: "%.1f", bestCopyServerCPU)) s for COPY: \(String(format: "%.2f", bestCopyServerCPU / bestIngestServerCPU))× COPY's rows per server CPU second
              re-run:  \(afterwards.rerunLines)
              checks:  verify_rollups after ingest and the re-runs: \(afterwards.differences) differences
              schema:  \(schema)
            """
    }
}

/// 5. Re-running over unchanged files, and the check that the rollups the ingested database
/// holds equal a recompute from its samples.
private struct IngestAfterwards {
    let rerunLines: String
    let differences: Int

    init(_ ingestDB: TestDatabase, folder: String) throws {
        let pool = commandPool(ingestDB.connectionString)
        defer { pool.close() }
        let ingester = Ingester(pool: pool, options: IngestOptions())
        let rerun = ingester.run([folder])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().prefix(1000).map { folder + "/" + $0 }
        let rerun1000 = ingester.run(Array(files))
        var binaryLine = "release binary not built: run `swift build -c release --product health-warehouse` for the CLI figure"
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("health-warehouse").path
        if FileManager.default.isExecutableFile(atPath: binary) {
            let start = monotonicSeconds()
            let status = try ProcessRunner.run(binary, ["ingest", "--database-url", ingestDB.connectionString] + files)
            binaryLine = String(format: "%.3f s for `health-warehouse ingest` over the same \(files.count) files, process start and migration check included (exit %d)",
                                monotonicSeconds() - start, status.status)
        }
        rerunLines = """
            \(String(format: "%.3f", rerun.seconds)) s over \(rerun.filesSeen) unchanged files (\(rerun.filesSkipped) skipped, \(rerun.batches) batches)
                       \(String(format: "%.3f", rerun1000.seconds)) s over \(files.count) unchanged files in-process (goal < 1 s for 1000)
                       \(binaryLine)
            """
        differences = try ingestDB.scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [PersonName.defaultPerson], as: Int.self) ?? -1
    }
}

/// A writer pool as `health-warehouse ingest` makes one: two connections, the command's
/// default lock and statement timeouts.
private func commandPool(_ connectionString: String) -> PostgresPool {
    PostgresPool(connectionString: connectionString, maxConnections: 2,
                 sessionSettings: [("lock_timeout", "10000ms"), ("statement_timeout", "30000ms")])
}

/// The tables `ingest` filled (rows in the ingested database, none in a fresh one; the ledger
/// left out: it is ingest's own bookkeeping), parents before the tables that reference them,
/// with every column that can be written (COPY writes identity columns as given).
private func copyPlan(from ingested: TestDatabase, into fresh: TestDatabase, folder: String) throws -> [(table: String, columns: String, file: String)] {
    let tables = try ingested.query("""
        SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'health_store' AND c.relkind = 'r' AND c.relname NOT IN ('schema_migrations', 'ingested_files')
        ORDER BY c.relname
        """).map { $0[0] ?? "" }
    var filled: [String] = []
    for table in tables {
        // Names come from pg_class, not from input.
        let inIngested: Int = try ingested.scalar("SELECT count(*) FROM health_store.\(table)") ?? 0
        let inFresh: Int = try fresh.scalar("SELECT count(*) FROM health_store.\(table)") ?? 0
        if inIngested > 0 && inFresh == 0 { filled.append(table) }
    }
    let references = try ingested.query("""
        SELECT c.relname, p.relname FROM pg_constraint k
        JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.contype = 'f' AND n.nspname = 'health_store'
        """).map { ($0[0] ?? "", $0[1] ?? "") }
    var ordered: [String] = []
    while ordered.count < filled.count {
        let before = ordered.count
        for table in filled where !ordered.contains(table) {
            let parents = references.filter { $0.0 == table && $0.1 != table && filled.contains($0.1) }.map(\.1)
            if parents.allSatisfy(ordered.contains) { ordered.append(table) }
        }
        if ordered.count == before { ordered += filled.filter { !ordered.contains($0) } }
    }
    return try ordered.map { table in
        let columns = try ingested.query("""
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = 'health_store' AND table_name = $1 AND is_generated = 'NEVER'
            ORDER BY ordinal_position
            """, [table]).map { "\"" + ($0[0] ?? "") + "\"" }
        return (table, columns.joined(separator: ", "), folder + "/\(table).copy")
    }
}

/// CPU seconds the cluster's server processes have used: the postmaster's own and its reaped
/// children's (backends that exited), plus every live child's. A shared machine stretches wall
/// time; CPU time per row is what the two loads cost the server whatever else runs.
private func serverCPUSeconds(_ cluster: TestCluster) -> Double {
    guard let postmaster = cluster.cluster.runningServer()?.pid else { return 0 }
    func fields(_ pid: String) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var total = 0.0
    if let own = fields(String(postmaster)), own.count > 14 {
        total += (Double(own[11]) ?? 0) + (Double(own[12]) ?? 0) + (Double(own[13]) ?? 0) + (Double(own[14]) ?? 0)
    }
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where entry.allSatisfy(\.isNumber) {
        guard let f = fields(entry), f.count > 12, Int32(f[1]) == postmaster else { continue }
        total += (Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)
    }
    return total / ticks
}

/// CPU seconds this process has used.
private func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

