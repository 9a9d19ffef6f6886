import AppleExport
import Foundation
import HealthPayload
import Pipeline
import Postgres
import Warehouse

/// `import-apple-health PATH --reconcile [--dry-run] [--force]` (docs/apple-export.md, "Deletions"): the export
/// read once to stage its records and decide what would be marked (refusing — nothing imported
/// or marked — when a rule says so), then imported, then the samples no record matches marked
/// deleted. With `--dry-run` it stops after deciding and changes nothing.
struct ExportReconcile {
    let command: ImportAppleHealthCommand
    let pool: PostgresPool
    let shouldStop: @Sendable () -> Bool

    func run() throws -> Int32 {
        let person = command.person
        let run = UUID()
        let started = Date()
        // What a stopped reconciliation of this person left staged.
        try Reconciliation.discard(person: person, run: nil, pool: pool)
        defer { try? Reconciliation.discard(person: person, run: run, pool: pool) }
        let staged = try stage(run: run)
        guard !staged.interrupted else {
            printError("error: stopped before the export was read to its end; nothing was imported or marked")
            return 1
        }
        guard let exportDate = staged.exportDate else {
            throw CommandFailure(message: "\(command.path) has no ExportDate: what it holds cannot be told from what Health deleted; nothing was imported or marked",
                                 hint: "reconcile with an export the Health app made (Export All Health Data), or import it without --reconcile")
        }
        if let reason = Reconciliation.exportDateReason(exportDate) {
            throw CommandFailure(message: "\(command.path): its ExportDate \(exportDate) \(reason): reconciling with it would mark what started before it and refuse every real export after it; refused, nothing was imported or marked",
                                 hint: "export again from the Health app (Export All Health Data) on a phone whose clock is right")
        }
        if staged.skipped > 0 && !command.force {
            throw CommandFailure(message: "\(staged.skipped) elements of \(command.path) could not be read: their samples would be marked deleted; refused, nothing was imported or marked",
                                 hint: "import it without --reconcile to see them named, or pass --force to mark anyway")
        }
        if command.dryRun {
            return try dryRun(run: run, exportDate: exportDate, startedAt: started, recordElements: staged.recordElements)
        }
        _ = try reconcile(run: run, exportDate: exportDate, startedAt: started, apply: false)
        let summary = try command.importExport(pool: pool, shouldStop: shouldStop)
        if summary.interrupted {
            printError(summary.line(path: command.path))
            return ImportAppleHealthCommand.exitCode(summary)
        }
        let marks = try reconcile(run: run, exportDate: exportDate, startedAt: started, apply: true)
        report(marks, exportDate: exportDate, summary: summary, wouldBe: false)
        return ImportAppleHealthCommand.exitCode(summary)
    }

    /// The first pass: the whole export read and its records staged under `run`.
    private func stage(run: UUID) throws -> StagedExport {
        do {
            return try AppleExportImporter(pool: pool, person: command.person).stage(command.path, run: run, shouldStop: shouldStop)
        } catch let error as AppleExportError {
            throw ImportAppleHealthCommand.notAnExport(error)
        }
    }

    /// The person reconciled with the export staged under `run` (`Reconciliation.reconcile`);
    /// throws its `Refusal` as it is.
    private func marks(run: UUID, exportDate: String, startedAt: Date, force: Bool, apply: Bool) throws -> [Reconciliation.Marks] {
        try Reconciliation.reconcile(person: command.person, run: run, exportDate: exportDate, path: command.path,
                                     startedAt: startedAt, force: force, apply: apply, pool: pool)
    }

    private func reconcile(run: UUID, exportDate: String, startedAt: Date, apply: Bool) throws -> [Reconciliation.Marks] {
        do {
            return try marks(run: run, exportDate: exportDate, startedAt: startedAt, force: command.force, apply: apply)
        } catch let refusal as Reconciliation.Refusal {
            throw CommandFailure(message: refusal.message, hint: refusal.hint)
        }
    }

    /// `--dry-run`: what would be marked, nothing changed. When the reconciliation would be
    /// refused, what `--force` would mark is printed too (what the refusal's hint sends the user
    /// here to see), and then the refusal, with exit 1 as the real run's.
    private func dryRun(run: UUID, exportDate: String, startedAt: Date, recordElements: Int) throws -> Int32 {
        var summary = ImportSummary()
        // Nothing imported: the counts of what was read alone (records_read counts Record elements, as the import does).
        summary.recordsRead = recordElements
        do {
            let plan = try marks(run: run, exportDate: exportDate, startedAt: startedAt, force: command.force, apply: false)
            report(plan, exportDate: exportDate, summary: summary, wouldBe: true)
            return 0
        } catch let refusal as Reconciliation.Refusal {
            let forced = try marks(run: run, exportDate: exportDate, startedAt: startedAt, force: true, apply: false)
            report(forced, exportDate: exportDate, summary: summary, wouldBe: true, refusal: refusal)
            throw CommandFailure(message: refusal.message, hint: refusal.hint)
        }
    }

    /// The import's line and the marks per type and month on stderr; with `--json`, the
    /// import's object with `deleted` and `deleted_by_type` added, on stdout.
    /// A dry run's refused reconciliation gives what `--force` would mark, said so, and `refused`
    /// (the refusal's message) in the JSON object.
    private func report(_ marks: [Reconciliation.Marks], exportDate: String, summary: ImportSummary, wouldBe: Bool,
                        refusal: Reconciliation.Refusal? = nil) {
        let total = marks.reduce(0) { $0 + $1.samples }
        if !wouldBe { printError(summary.line(path: command.path)) }
        let verb = !wouldBe ? "were" : refusal == nil ? "would be" : "would be, with --force,"
        printError("reconcile: \(total) samples \(verb) marked deleted (started before the export's date \(exportDate), matched by no record of it)"
                   + (wouldBe ? "; nothing was changed (--dry-run)" : ""))
        for mark in marks {
            printError("  \(mark.type)  \(mark.month)  \(mark.samples)")
        }
        guard command.json else { return }
        var byType: [String: Int] = [:]
        for mark in marks { byType[mark.type, default: 0] += mark.samples }
        var json = String(summary.jsonText.dropLast()) + ",\"deleted\":\(total),\"deleted_by_type\":{"
        for (i, type) in byType.keys.sorted().enumerated() {
            if i > 0 { json += "," }
            JSONString.append(quoting: type, to: &json)
            json += ":\(byType[type]!)"
        }
        json += "}"
        if let refusal {
            json += ",\"refused\":"
            JSONString.append(quoting: refusal.message, to: &json)
        }
        printOutput(json + "}")
    }
}
