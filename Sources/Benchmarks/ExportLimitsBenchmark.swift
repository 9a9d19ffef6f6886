import AppleExport
import DemoData
import Foundation
import Harness

/// The export-limits section; see docs/benchmarks.md ("## Export reader bounds").
///
/// The second audit's files, made at run time (`HostileExport`, a few hundred KB each as
/// export.zip): one huge attribute, one huge comment, one huge GPX `<ele>`, at each size of
/// `--sizes` (MiB), and one route file a workout names a hundred ways. Each is imported by the
/// release binary into a fresh database under GNU time — wall seconds, peak RSS, records read
/// and elements skipped — and, with `--baseline PATH`, by another build too (the one before the
/// bounds), side by side, up to `--baseline-max` MiB (beyond, the old reader takes minutes and
/// gigabytes).
func runExportLimitsBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = OptionReader(arguments, usage: "usage: health-warehouse-bench export-limits [--sizes 8,16,32,64,256] [--baseline PATH] [--baseline-max MIB (64)]")
    var sizes = [8, 16, 32, 64, 256]
    var baseline: String?
    var baselineMax = 64
    while let option = options.next() {
        switch option {
        case "--sizes":
            sizes = try options.value().split(separator: ",").map { text in
                guard let n = Int(text), n > 0, n <= 4096 else { throw options.failure("--sizes takes MiB from 1 to 4096, comma-separated") }
                return n
            }
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
    for (kind, mib) in cases {
        let archive = folder + "/\(kind.rawValue)-\(mib).zip"
        try writeHostileExport(kind, hugeBytes: mib << 20, to: archive)
        let archiveSize = (try FileManager.default.attributesOfItem(atPath: archive)[.size] as? NSNumber)?.intValue ?? 0
        let after = try importUnderTime(binary, archive, cluster: cluster)
        var row = "| \(kind.rawValue) | \(kind == .routeSpellings ? "\(HostileExport.spellings) names" : "\(mib) MiB") | \(archiveSize / 1024) KiB | \(after)"
        if let baseline, mib <= baselineMax {
            row += " \(try importUnderTime(baseline, archive, cluster: cluster))"
        } else if baseline != nil {
            row += " not run | | |"
        }
        rows.append(row)
        FileHandle.standardError.write(Data((row + "\n").utf8))
        try FileManager.default.removeItem(atPath: archive)
    }
    let columns = "| s | peak RSS | read, new, skipped, route points |"
    print("""

        Export reader bounds (the second audit's files), each imported into a fresh database

        | file | huge part | export.zip | \(columns)\(baseline == nil ? "" : " before: \(columns)")
        |---|---:|---:|---:|---:|---|\(baseline == nil ? "" : "---:|---:|---|")
        \(rows.joined(separator: "\n"))

        load average at the end: \(loadAverage())
        """)
}

/// Writes a `HostileExport` as export.zip, its huge part streamed in.
private func writeHostileExport(_ kind: HostileExport.Kind, hugeBytes: Int, to path: String) throws {
    let zip = try ZipWriter(path: path, modified: 1_710_230_400)
    for entry in HostileExport.entries(kind, hugeBytes: hugeBytes) {
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
