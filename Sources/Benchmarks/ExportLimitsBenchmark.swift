import AppleExport
import DemoData
import Foundation
import Harness

/// The export-limits section; see docs/benchmarks.md ("## Export reader bounds").
///
/// The second audit's files, made at run time (`HostileExport`, a few hundred KB each as
/// export.zip): one huge attribute, one huge comment, one huge GPX `<ele>`, at each size of
/// `--sizes` (MiB), and one route file a workout names a hundred ways; and the third audit's:
/// `--records` (800) Records each with an attribute of `--record-bytes` (1,000,000), whose peak
/// RSS must stay within the contract's 256 MB however many there are. Each is imported by the
/// release binary into a fresh database under GNU time — wall seconds, peak RSS, records read
/// and elements skipped — and, with `--baseline PATH`, by another build too (the one before the
/// bounds), side by side, up to `--baseline-max` MiB (beyond, the old reader takes minutes and
/// gigabytes).
func runExportLimitsBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = OptionReader(arguments, usage: "usage: health-warehouse-bench export-limits [--sizes 8,16,32,64,256] [--records 800] [--record-bytes 1000000] [--baseline PATH] [--baseline-max MIB (64)]")
    var sizes = [8, 16, 32, 64, 256]
    var records = 800
    var recordBytes = 1_000_000
    var baseline: String?
    var baselineMax = 64
    while let option = options.next() {
        switch option {
        case "--sizes":
            sizes = try options.value().split(separator: ",").map { text in
                guard let n = Int(text), n > 0, n <= 4096 else { throw options.failure("--sizes takes MiB from 1 to 4096, comma-separated") }
                return n
            }
        case "--records": records = try options.number()
        case "--record-bytes": recordBytes = try options.number()
        case "--baseline": baseline = try options.value()
        case "--baseline-max": baselineMax = try options.number()
        default: throw options.failure("unknown option \(option)")
        }
    }
    let binary = CLIProcess.binaryPath
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        throw BenchmarkError.usage("build the release binary first: swift build -c release --product health-warehouse")
    }
    FileHandle.standardError.write(Data("load average at the start: \(loadAverage())\n".utf8))
    let folder = NSTemporaryDirectory() + "hw-bench-limits-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let cluster = try TestCluster(durability: durability)
    defer { cluster.destroy() }

    var rows: [String] = []
    let cases = [HostileExport.Kind.attribute, .comment, .elevation].flatMap { kind in sizes.map { (kind, $0) } } + [(.routeSpellings, 0)]
    /// Imports one archive by the binary (and the baseline when `withBaseline`); its table row.
    func measure(_ name: String, _ part: String, _ entries: [(name: String, next: () -> [UInt8]?)], withBaseline: Bool) throws -> String {
        let archive = folder + "/\(name).zip"
        try writeArchive(entries, to: archive)
        defer { try? FileManager.default.removeItem(atPath: archive) }
        let archiveSize = (try FileManager.default.attributesOfItem(atPath: archive)[.size] as? NSNumber)?.intValue ?? 0
        var row = "| \(name) | \(part) | \(archiveSize / 1024) KiB | \(try importUnderTime(binary, archive, cluster: cluster))"
        if let baseline, withBaseline {
            row += " \(try importUnderTime(baseline, archive, cluster: cluster))"
        } else if baseline != nil {
            row += " not run | | |"
        }
        FileHandle.standardError.write(Data((row + "\n").utf8))
        return row
    }
    for (kind, mib) in cases {
        rows.append(try measure(kind.rawValue, kind == .routeSpellings ? "\(HostileExport.spellings) names" : "\(mib) MiB",
                                HostileExport.entries(kind, hugeBytes: mib << 20), withBaseline: mib <= baselineMax))
    }
    // The third audit's: memory must not grow with the records read (800 of 1 MB took 711 MB).
    rows.append(try measure("large attributes", "\(records) × \(recordBytes) B",
                            HostileExport.largeAttributes(records: records, bytes: recordBytes), withBaseline: true))
    let columns = "s | peak RSS | read, new, skipped, route points |"
    print("""

        Export reader bounds (the second and third audits' files), each imported into a fresh database;
        peak RSS by GNU time, the contract's bound 256 MB (244 MiB) whatever the file

        | file | huge part | export.zip | \(columns)\(baseline == nil ? "" : " before: \(columns)")
        |---|---:|---:|---:|---:|---|\(baseline == nil ? "" : "---:|---:|---|")
        \(rows.joined(separator: "\n"))

        load average at the end: \(loadAverage())
        """)
}

/// Writes `HostileExport` entries as export.zip, their huge parts streamed in.
private func writeArchive(_ entries: [(name: String, next: () -> [UInt8]?)], to path: String) throws {
    let zip = try ZipWriter(path: path, modified: 1_710_230_400)
    for entry in entries {
        try zip.add(entry.name, entry.next)
    }
    try zip.close()
}

/// Imports `archive` with `binary` into a fresh database (migrated by that binary, whose
/// migrations may differ) under GNU time: `s | RSS | counts |`.
private func importUnderTime(_ binary: String, _ archive: String, cluster: TestCluster) throws -> String {
    let db = try cluster.freshDatabase(label: "limits", migrated: false)
    let migrated = try CLIProcess.runProgram(binary, ["migrate", "--database-url", db.connectionString])
    guard migrated.status == 0 else { throw BenchmarkError.usage("\(binary) migrate failed: \(migrated.stderr.suffix(2000))") }
    let run = try timedRun(binary, ["import-apple-health", "--json", "--database-url", db.connectionString, archive])
    let summary = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
    let points = try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self) ?? 0
    let counts = "\(summary["records_read"] ?? "?"), \(summary["new"] ?? "?"), \(summary["skipped"] ?? "?"), \(points)"
    return String(format: "%.1f | %.0f MiB | %@ |", run.seconds, run.rssMiB, counts)
}
