import Foundation
import Harness
import Postgres

/// The reconcile step of the apple-export section (docs/benchmarks.md, "Apple Health export",
/// whose goal it measures): the database that imported the export is reconciled with the same export,
/// unpacked, with every 100th one-line `<Record>` removed —
/// 1 % of the samples, deleted in Health before the export was made. Exactly those must be
/// marked; the time is printed next to the import's own.
struct ReconcileStep {
    let binary: String
    let folder: String
    let archive: String

    struct Figures {
        let seconds: Double
        let rssMiB: Double
        let removed: Int
        let marked: Int
    }

    /// Unpacks the archive into `folder/reconcile` and removes every 100th one-line Record as it
    /// streams (Python's zipfile: the bench's own tool, not the product's reader). Returns how many.
    func writeExportWithoutOnePercent() throws -> Int {
        let target = folder + "/reconcile"
        try? FileManager.default.removeItem(atPath: target)
        let script = """
            import sys, zipfile, os
            archive, target = sys.argv[1], sys.argv[2]
            removed = seen = 0
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    if info.is_dir(): continue
                    path = os.path.join(target, info.filename)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with z.open(info) as src, open(path, 'wb') as dst:
                        if not info.filename.endswith('/export.xml'):
                            dst.write(src.read()); continue
                        for line in src:
                            if line.startswith(b' <Record ') and line.rstrip().endswith(b'/>'):
                                seen += 1
                                if seen % 100 == 0:
                                    removed += 1; continue
                            dst.write(line)
            print(removed)
            """
        let out = try CLIProcess.runProgram("/usr/bin/env", ["python3", "-c", script, archive, target])
        guard out.status == 0, let removed = Int(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError.usage("writing the export without 1 % failed: \(out.stderr.suffix(2000))")
        }
        return removed
    }

    /// `import-apple-health --reconcile` of that export into the database given.
    func run(database: TestDatabase, removed: Int) throws -> Figures {
        let export = folder + "/reconcile/apple_health_export"
        // --force: a type with a handful of records a year can lose one of five to the every-100th
        // cut, which the 20 % rule refuses; what is measured here is the marking itself.
        let run = try timedRun(binary, ["import-apple-health", "--reconcile", "--force", "--json",
                                        "--database-url", database.connectionString, export])
        guard run.status == 0 else { throw BenchmarkError.usage("reconcile failed (\(run.status)): \(run.stderr.suffix(2000))") }
        let marked = try database.scalar("SELECT count(*) FROM health_store.samples WHERE deleted_at IS NOT NULL", as: Int.self) ?? 0
        return Figures(seconds: run.seconds, rssMiB: run.rssMiB, removed: removed, marked: marked)
    }
}
