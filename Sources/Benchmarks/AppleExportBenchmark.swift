import AppleExport
import Civil
import DemoData
import Foundation
import Harness
import HealthPayload
import Pipeline
import Postgres
import Warehouse

/// The apple-export section of the benchmark; see docs/benchmarks.md ("## Apple Health export").
///
/// One simulated person over `--days` days (3650 by default: ≥ 5M records, export.xml over
/// 2 GB) written twice: as the Health app's export.zip (`generate --format apple-export`) and
/// as healthd JSON bodies of the very same samples, cut the same way (blocks of 30 days, type
/// by type, 1000 to a batch). Both are loaded by the release binary into fresh databases of
/// one throwaway cluster — `ingest` (the baseline) and `import-apple-health` — each under
/// `/usr/bin/time -v` for wall time and peak RSS; then, when given, `healthkit-to-sqlite`
/// over the same export.zip. Last, the imported side is reconciled with the export less 1 % of its
/// records (ReconcileStep).
func runAppleExportBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    let options = try AppleExportBenchOptions(arguments)
    let binary = CLIProcess.binaryPath
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        throw BenchmarkError.usage("build the release binary first: swift build -c release --product health-warehouse")
    }
    say("load average at the start: \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?")")
    let folder = options.keep ?? NSTemporaryDirectory() + "hw-bench-export-\(getpid())"
    defer { if options.keep == nil { try? FileManager.default.removeItem(atPath: folder) } }
    // 1. The export, by the command users run; 2. the same samples as healthd JSON bodies.
    let inputs = try ExportInputs(options, folder: folder, binary: binary)

    // 3. One cluster, a fresh database per side, a checkpoint before each. Autovacuum stays on,
    // as deployed: without its ANALYZE the planner keeps an empty table's statistics while
    // millions of rows arrive, and every batch gets slower (measured: 1.3k samples/s at 3.2M
    // samples, 13k/s right after one ANALYZE).
    let cluster = try TestCluster(durability: durability)
    say(durability.benchmarkLabel)
    defer { cluster.destroy() }
    let admin = try PostgresConnection(connectionString: cluster.connectionString(database: "postgres"))
    defer { admin.close() }

    let ingestDB = try cluster.freshDatabase(label: "bench_ingest")
    try admin.query("CHECKPOINT")
    let ingest = try timedRun(binary, ["ingest", "--json", "--database-url", ingestDB.connectionString, folder + "/backlog"])
    let ingested = try ingestDB.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) ?? 0
    say(String(format: "ingest: %d samples in %.1f s, peak RSS %.0f MiB", ingested, ingest.seconds, ingest.rssMiB))

    let importDB = try cluster.freshDatabase(label: "bench_import")
    try admin.query("CHECKPOINT")
    let imported = try ImportFigures(binary: binary, archive: inputs.archive, into: importDB)

    // 4. The imported side reconciled with a later export of the same phone less 1 %. (Not the
    // ingest side: its bodies carry types healthd never sends — category types but sleep,
    // written there as healthd would write sleep — whose values no export record twins.)
    let step = ReconcileStep(binary: binary, folder: folder, archive: inputs.archive)
    let removed = try step.writeExportWithoutOnePercent()
    try admin.query("CHECKPOINT")
    let reconciled = try step.run(database: importDB, removed: removed)
    say(String(format: "import-apple-health --reconcile: %d of %d removed records marked in %.1f s, peak RSS %.0f MiB",
               reconciled.marked, reconciled.removed, reconciled.seconds, reconciled.rssMiB))

    let other = try options.healthkitToSQLite.map { try healthkitToSQLiteLine($0, folder: folder, inputs: inputs, imported: imported) } ?? ""
    let ingestRate = Double(ingested) / ingest.seconds, importRate = Double(imported.held) / imported.seconds
    print("""

        Apple Health export: \(options.days) days, export.xml \(inputs.documentSize / 1_000_000) MB (export.zip \(inputs.archiveSize / 1_000_000) MB), \(imported.held) samples, \(imported.routes) routes

        | | wall | samples/s | peak RSS |
        |---|---:|---:|---:|
        | ingest of the same samples as healthd JSON (\(inputs.bodies) files, \(inputs.bytes / 1_000_000) MB) | \(String(format: "%.1f s", ingest.seconds)) | \(Int(ingestRate)) | \(String(format: "%.0f MiB", ingest.rssMiB)) |
        | **import-apple-health** of export.zip | \(String(format: "%.1f s", imported.seconds)) | **\(Int(importRate)) (\(String(format: "%.2f", importRate / ingestRate))×)** | **\(String(format: "%.0f MiB", imported.rssMiB))** |
        | **import-apple-health --reconcile** of it less 1 % (\(removed) records) into the imported side | \(String(format: "%.1f s", reconciled.seconds)) (**\(String(format: "%.2f", reconciled.seconds / imported.seconds))× the import**) | | **\(String(format: "%.0f MiB", reconciled.rssMiB))** |
        \(other)

        \(imported.storage)
        rows equal: \(imported.held == ingested ? "yes" : "no (\(imported.held) vs \(ingested))"); marked deleted: \(reconciled.marked) of the \(reconciled.removed) removed (\(reconciled.marked == reconciled.removed ? "exactly" : "NOT exactly")); load average at the end: \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?")
        """)
}

/// `apple-export`'s options.
private struct AppleExportBenchOptions {
    var days = 3650
    var keep: String?
    var healthkitToSQLite: String?
    /// With --keep: the export and the bodies an earlier run left there.
    var reuse = false

    init(_ arguments: [String]) throws {
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
                guard let n = Int(try value()), n > 0, n <= 3650 else { throw BenchmarkError.usage("--days must be 1 to 3650") }
                days = n
            case "--keep": keep = try value()
            case "--healthkit-to-sqlite": healthkitToSQLite = try value()
            case "--reuse": reuse = true
            default:
                throw BenchmarkError.usage("usage: health-warehouse-bench apple-export [--days N (3650)] [--keep DIR [--reuse]] [--healthkit-to-sqlite PATH]")
            }
        }
    }
}


/// The export.zip (made by `generate`, or reused) and the same samples as healthd JSON bodies
/// in `backlog/`.
private struct ExportInputs {
    static let start = CivilDate("2015-01-05")!
    let archive: String
    let documentSize: Int64
    let archiveSize: Int
    var bodies = 0, samples = 0, bytes = 0
    /// Blocks of 30 days written so far.
    private var blocks = 0

    init(_ options: AppleExportBenchOptions, folder: String, binary: String) throws {
        try FileManager.default.createDirectory(atPath: folder + "/backlog", withIntermediateDirectories: true)
        let started = monotonicSeconds()
        archive = folder + "/export.zip"
        let reused = options.reuse && FileManager.default.fileExists(atPath: archive)
        var generatedText = "reusing \(archive)"
        if !reused {
            let generated = try CLIProcess.runProgram(binary, ["generate", "--format", "apple-export", "--days", String(options.days),
                                                               "--start", Self.start.description, "--seed", "1", "--out", folder])
            guard generated.status == 0 else { throw BenchmarkError.usage("generate failed: \(generated.stderr)") }
            generatedText = generated.stderr
        }
        documentSize = try ExportSource(path: archive).documentSize ?? 0
        archiveSize = (try FileManager.default.attributesOfItem(atPath: archive)[.size] as? NSNumber)?.intValue ?? 0
        say(generatedText.trimmingCharacters(in: .whitespacesAndNewlines) + String(format: " (%.0f s)", monotonicSeconds() - started))
        if reused { try countBodies(folder) } else { try writeBodies(folder, days: options.days) }
    }

    /// The bodies an earlier run left.
    private mutating func countBodies(_ folder: String) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/backlog")
        bodies = names.count
        bytes = try names.reduce(0) { total, name in
            total + ((try FileManager.default.attributesOfItem(atPath: folder + "/backlog/" + name)[.size] as? NSNumber)?.intValue ?? 0)
        }
        say("the same samples as healthd JSON: \(bodies) bodies, \(samples) samples, \(bytes / 1_000_000) MB (0 s)")
    }

    /// The same samples as healthd JSON bodies, cut the way the import cuts them: blocks of 30
    /// days, type by type, 1000 to a batch.
    private mutating func writeBodies(_ folder: String, days: Int) throws {
        let started = monotonicSeconds()
        try FileManager.default.removeItem(atPath: folder + "/backlog")
        try FileManager.default.createDirectory(atPath: folder + "/backlog", withIntermediateDirectories: true)
        var block: [DemoSample] = []
        var day = 0
        try DemoAppleExport.forEachDay(DemoGenerator.Options(start: Self.start, days: days, seed: 1)) { _, made in
            block += made
            day += 1
            if day % 30 == 0 { try writeBlock(&block, folder: folder) }
        }
        try writeBlock(&block, folder: folder)
        say("the same samples as healthd JSON: \(bodies) bodies, \(samples) samples, \(bytes / 1_000_000) MB (\(String(format: "%.0f", monotonicSeconds() - started)) s)")
    }

    private mutating func writeBlock(_ block: inout [DemoSample], folder: String) throws {
        guard !block.isEmpty else { return }
        blocks += 1
        let number = blocks
        block.sort { a, b in a.type.order != b.type.order ? a.type.order < b.type.order : a.start != b.start ? a.start < b.start : a.uuid < b.uuid }
        let exportId = String(format: "0B5E0000-0000-4000-8000-%012d", number)
        let chunks = stride(from: 0, to: block.count, by: 1000).map { Array(block[$0..<min($0 + 1000, block.count)]) }
        for (i, chunk) in chunks.enumerated() {
            let first = chunk.map(\.start).min()!, last = chunk.map(\.end).max()!
            let envelope = DemoEnvelope(exportId: exportId, generatedAt: last, batchSequence: i + 1, isFinalBatch: i == chunks.count - 1,
                                        windowStart: first, windowEnd: last, occasionStart: first, occasionEnd: last,
                                        offsetMinutes: CentralEuropeanTime.offsetMinutes(atMilliseconds: last))
            let body = DemoEncoder.json(envelope, chunk)
            try Data(body).write(to: URL(fileURLWithPath: folder + String(format: "/backlog/%05d-%04d.json", number, i + 1)))
            bodies += 1
            samples += chunk.count
            bytes += body.count
        }
        block.removeAll(keepingCapacity: true)
    }
}

/// `import-apple-health` of the archive into a fresh database: its time and peak RSS, what it
/// holds, and what it costs the disk.
private struct ImportFigures {
    let seconds: Double
    let rssMiB: Double
    let held: Int
    let routes: Int
    let databaseBytes: Int
    let storage: String

    init(binary: String, archive: String, into importDB: TestDatabase) throws {
        let run = try timedRun(binary, ["import-apple-health", "--json", "--database-url", importDB.connectionString, archive])
        seconds = run.seconds
        rssMiB = run.rssMiB
        held = try importDB.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) ?? 0
        routes = try importDB.scalar("SELECT count(*) FROM health_store.workout_routes", as: Int.self) ?? 0
        // What the import costs the disk: the samples with their indexes (and their series and export
        // contexts), and the whole database, measured before the reconcile adds its marks: right
        // after the import, and once VACUUM has run as autovacuum does within a minute of it (it
        // truncates the write path's queue of deferred rollups, whose rows live only inside each
        // group's transaction: ~50 MB for a year until then).
        let samplesBytes = try importDB.scalar("SELECT \(ViewsBenchmark.samplesBytesSQL)", as: Int.self) ?? 0
        let afterImportBytes = try importDB.scalar("SELECT pg_database_size(current_database())", as: Int.self) ?? 0
        try importDB.query("VACUUM")
        databaseBytes = try importDB.scalar("SELECT pg_database_size(current_database())", as: Int.self) ?? 0
        storage = String(format: "storage: the samples with their indexes %d MB, %.0f bytes a sample; the database %d MB (%d MB right after the import, before autovacuum)",
                         samplesBytes / 1_000_000, Double(samplesBytes) / Double(max(held, 1)), databaseBytes / 1_000_000,
                         afterImportBytes / 1_000_000)
        say(storage)
        say(String(format: "import-apple-health: %d samples in %.1f s, peak RSS %.0f MiB; %@", held, seconds, rssMiB,
                   run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}

/// healthkit-to-sqlite over the same export.zip: the table row comparing it with the import.
private func healthkitToSQLiteLine(_ program: String, folder: String, inputs: ExportInputs, imported: ImportFigures) throws -> String {
    let output = folder + "/healthkit.db"
    try? FileManager.default.removeItem(atPath: output)
    let run = try timedRun(program, [inputs.archive, output])
    let size = ((try? FileManager.default.attributesOfItem(atPath: output)[.size]) as? NSNumber)?.intValue ?? 0
    let line = String(format: "| healthkit-to-sqlite of the same export.zip (a SQLite file of %d MB; our database %.2f× it) | %.1f s (ours %.2f× as fast) | %d records/s | %.0f MiB |",
                      size / 1_000_000, Double(imported.databaseBytes) / Double(max(size, 1)), run.seconds, run.seconds / imported.seconds,
                      Int(Double(imported.held) / run.seconds), run.rssMiB)
    say(line)
    return line
}
