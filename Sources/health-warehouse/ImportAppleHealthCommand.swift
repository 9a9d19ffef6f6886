import AppleExport
import Foundation
import Pipeline
import Postgres
import Warehouse

/// `health-warehouse import-apple-health PATH [--person P] [--reconcile [--dry-run] [--force]] [--json]`
struct ImportAppleHealthCommand: Command {
    static let name = "import-apple-health"
    static let summary = "the Health app's own export (export.zip, its folder, or export.xml)"
    static let help = """
        usage: health-warehouse import-apple-health [options] [database options] PATH

        Imports the archive the Health app makes with Export All Health Data: PATH is the
        export.zip, its unpacked apple_health_export folder, or an export.xml (any of its
        localized names). It is read as a stream, never unpacked, in bounded memory.

        Every Record becomes a sample (values in the warehouse's units, sleep stages by
        name, the rest of the element kept in its payload), every Workout a workout with its
        route (GPX file or inline points), every ActivitySummary a row of
        health.activity_summaries. Batches go through the receiver's own store call,
        committed in groups (docs/apple-export.md). A record equal to a sample healthd or Stridee sent (same type,
        start, end and value) is that sample: it is counted as matched, not stored twice.

        Importing the same export again adds nothing; a newer export adds what is new; an
        import that was stopped goes on after its last stored batch.

          --person NAME      whose data it is (default: default)
          --json             print the summary as one JSON object on stdout
          --reconcile        then mark as deleted every sample of the person, whatever way it
                             came in, that starts before the export's ExportDate, is of a type
                             the export carries, and that no record of it matches (same type,
                             start, end and value; a workout: same start and end). A marked
                             sample keeps its row, counts nowhere, and is listed in
                             health.deleted_samples; receiving it again brings it back.
                             Refused, nothing changed, when a type would lose more than 20 %
                             of its samples held before the ExportDate, when the export is
                             older than the last one reconciled, or when an element of it
                             could not be read
          --dry-run          with --reconcile: change nothing (the import neither), print what
                             would be marked, per type and month
          --force            with --reconcile: mark even what the refusals above would stop
        \(WriterTimeouts.help(column: 21))

        A progress bar shows on a terminal. Elements that cannot be read (malformed XML) are
        skipped, each named on stderr with its line, and the rest is imported. A record or
        workout outside the bounds every way in applies (a text over 1,024 bytes, an
        implausible value or date), or read but not a sample (a value or date that is not
        one, a unit with no conversion), is quarantined: kept in health.quarantine with its
        reason and line, named on stderr, counted nowhere; not a failure.
        Exit codes: 0 imported (or unchanged, or reconciled); 1 something was skipped, the
        import was stopped, a reconciliation was refused, or it failed (named on stderr); 64 usage.

        \(DatabaseOptions.help)
        """

    var path: String
    var person: String
    var json: Bool
    var reconcile: Bool
    var dryRun: Bool
    var force: Bool
    var writerTimeouts: WriterTimeouts
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["json", "reconcile", "dry-run", "force"],
                                         options: DatabaseOptions.optionNames.union(WriterTimeouts.optionNames).union(["person"]))
        guard parsed.positionals.count == 1 else {
            throw UsageError(message: parsed.positionals.isEmpty
                             ? "import-apple-health needs the export: export.zip, its folder, or export.xml"
                             : "import-apple-health takes one export, got \(parsed.positionals.count)", command: Self.name)
        }
        path = parsed.positionals[0]
        person = parsed.value("person") ?? PersonName.defaultPerson
        do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
        json = parsed.has("json")
        reconcile = parsed.has("reconcile")
        dryRun = parsed.has("dry-run")
        force = parsed.has("force")
        if (dryRun || force) && !reconcile {
            throw UsageError(message: "--\(dryRun ? "dry-run" : "force") goes with --reconcile", command: Self.name)
        }
        writerTimeouts = try WriterTimeouts(parsed, command: Self.name)
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        // Stop between batches on SIGTERM/SIGINT: what is stored stays, the next run goes on.
        Shutdown.shared.takeOver { _ in }
        let stop: @Sendable () -> Bool = { Shutdown.shared.isRequested }
        return try database.withWriterPool(writerTimeouts) { pool in
            if reconcile { return try ExportReconcile(command: self, pool: pool, shouldStop: stop).run() }
            let summary = try importExport(pool: pool, shouldStop: stop)
            printError(summary.line(path: path))
            if json { printOutput(summary.jsonText) }
            return Self.exitCode(summary)
        }
    }

    /// The import itself, with its progress bar and skipped elements named.
    func importExport(pool: PostgresPool, shouldStop: @escaping @Sendable () -> Bool) throws -> ImportSummary {
        let display = ProgressDisplay(enabled: isatty(STDERR_FILENO) == 1)
        let shown = path
        do {
            let summary = try AppleExportImporter(pool: pool, person: person).run(
                path, shouldStop: shouldStop,
                onSkipped: { display.clearThen("\($0.isQuarantined ? "warning" : "error"): \(shown): \($0)") },
                onProgress: { display.show(line: Self.progressLine($0)) })
            display.clear()
            return summary
        } catch let error as AppleExportError {
            display.clear()
            throw Self.notAnExport(error)
        }
    }

    static func notAnExport(_ error: AppleExportError) -> CommandFailure {
        CommandFailure(message: error.message, hint: "PATH is the Health app's export.zip, its apple_health_export folder, or export.xml")
    }

    /// 1 when the import was stopped or skipped something (named on stderr), else 0.
    static func exitCode(_ summary: ImportSummary) -> Int32 {
        if summary.interrupted {
            printError("error: stopped; the next run of the same command goes on after the last stored batch")
            return 1
        }
        return summary.skipped > 0 ? 1 : 0
    }

    /// `[########------------]  41%  862/2100 MB  52,310 records  27,844 records/s  1:12 left`
    static func progressLine(_ p: ImportProgress) -> String {
        let mb = { (bytes: Int64) in String(bytes / 1_000_000) }
        var line = "import-apple-health: "
        if let total = p.bytesTotal, total > 0 {
            let fraction = min(1, Double(p.bytesRead) / Double(total))
            let filled = Int((fraction * 20).rounded(.down))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled) + "] "
            line += String(format: "%3d%%  ", Int((fraction * 100).rounded(.down))) + "\(mb(p.bytesRead))/\(mb(total)) MB  "
        } else {
            line += "\(mb(p.bytesRead)) MB  "
        }
        line += "\(p.records) records  \(Int(p.recordsPerSecond.rounded())) records/s"
        if let left = p.secondsLeft { line += "  " + ProgressDisplay.duration(left) + " left" }
        return line
    }
}
