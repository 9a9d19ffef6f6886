import Backlog
import Foundation
import HealthPayload
import Pipeline
import Postgres
import Synchronization
import Warehouse

/// `health-warehouse ingest [--person P] [--format json|jsonl|csv] [--force] [--every DURATION] [--json] PATH…`
struct IngestCommand: Command {
    static let name = "ingest"
    static let summary = "load saved bodies from files and folders, same pipeline as HTTP"
    static let help = """
        usage: health-warehouse ingest [options] [database options] PATH...

        Loads saved healthd bodies through the receiver's own pipeline: the same decoder, the
        same store call, a delivery row per batch with origin `file` and the file's path;
        batches are committed in groups (docs/ingest.md), and a batch the database refuses
        is undone alone. A PATH is a file, a folder (walked recursively in name
        order; hidden names and other extensions skipped) or `-` for standard input.

        Formats, by name (each also as .gz):
          .json             one body
          .jsonl, .ndjson   one body a line
          .csv              one or many bodies appended, each with its header row

        A JSON body whose top level is {"data": …} (and no schemaVersion) is Health Auto
        Export's, as its iCloud Drive and Dropbox automations write it: stored as POST /hae
        stores it, delivery origin `hae` with the file's path (docs/health-auto-export.md).

        A ledger in the database remembers each file: an unchanged file is skipped without
        being read; a file that grew is read from where it ended (its old part verified by
        SHA-256); a .gz file is read again whole when it changed. A file that failed is
        retried on the next run. Probes are skipped.

          --person NAME      whose data it is (default: default)
          --format F         json, jsonl or csv: for standard input and for named files
                             whose names do not say (standard input is sniffed otherwise)
          --force            read every file again (duplicates are free: upsert on uuid)
          --hae-aggregation G
                             the grouping of the Health Auto Export automation that wrote
                             the files (minutes, hours, days, weeks, months, years), as its
                             automation-aggregation header would say; without it each point
                             is a reading at one instant (the app's "summarize data" off)
          --every DURATION   run again every DURATION (e.g. 15m, 1h) until SIGTERM or SIGINT
          --json             print the summary as JSON on stdout (one line a run)
        \(WriterTimeouts.help(column: 21))

        Exit codes: 0 every file ingested or skipped; 1 some file failed (each named on
        stderr with its line or record), or the database failed; 64 usage.
        With --every, SIGTERM or SIGINT stops between batches and exits 0.

        \(DatabaseOptions.help)
        """

    var paths: [String]
    var options: IngestOptions
    var every: Double?
    var json: Bool
    var writerTimeouts: WriterTimeouts
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["force", "json"],
                                         options: DatabaseOptions.optionNames.union(WriterTimeouts.optionNames).union(["person", "format", "every", "hae-aggregation"]))
        guard !parsed.positionals.isEmpty else {
            throw UsageError(message: "ingest needs at least one file, folder or - (standard input)", command: Self.name)
        }
        paths = parsed.positionals
        guard paths.filter({ $0 == "-" }).count <= 1 else {
            throw UsageError(message: "standard input (-) can be given once", command: Self.name)
        }
        let person = parsed.value("person") ?? PersonName.defaultPerson
        do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
        var format: BacklogFormat?
        if let text = parsed.value("format") {
            guard let known = BacklogFormat(option: text) else {
                throw UsageError(message: "--format must be json, jsonl or csv, got \"\(text)\"", command: Self.name)
            }
            format = known
        }
        if let text = parsed.value("every") {
            guard let seconds = Duration.seconds(text), seconds >= 1 else {
                throw UsageError(message: "--every must be a duration of at least 1s such as 30s, 15m or 1h, got \"\(text)\"", command: Self.name)
            }
            every = seconds
            if paths.contains("-") {
                throw UsageError(message: "--every cannot read standard input (-) again", command: Self.name)
            }
        }
        let aggregation: HAEAggregation?
        do {
            aggregation = try HAEAggregation.parse(header: parsed.value("hae-aggregation"))
        } catch {
            throw UsageError(message: "--hae-aggregation: \(error.problem)", command: Self.name)
        }
        options = IngestOptions(person: person, format: format, force: parsed.has("force"), haeAggregation: aggregation)
        json = parsed.has("json")
        writerTimeouts = try WriterTimeouts(parsed, command: Self.name)
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        // Stop between batches on SIGTERM/SIGINT instead of dying mid-run (Shutdown sets the flag).
        Shutdown.shared.takeOver { _ in }
        let stop: @Sendable () -> Bool = { Shutdown.shared.isRequested }
        return try database.withWriterPool(writerTimeouts) { pool in
            let ingester = Ingester(pool: pool, options: options)
            let display = ProgressDisplay(enabled: isatty(STDERR_FILENO) == 1)
            var status: Int32 = 0
            var interrupted = false
            while true {
                let summary = ingester.run(paths, shouldStop: stop,
                                           onFailure: { display.clearThen("error: \($0)") },
                                           onProgress: { display.show($0) })
                display.clear()
                printError(summary.line)
                if json { printOutput(summary.jsonText) }
                status = summary.filesFailed > 0 || summary.aborted ? 1 : 0
                interrupted = summary.interrupted
                guard let every, !stop() else { break }
                // Sleep in small steps so a signal stops the loop promptly.
                let wake = Date().addingTimeInterval(every)
                while Date() < wake && !stop() { usleep(100_000) }
                if stop() { break }
            }
            // A signal: --every stops as a service should; a one-shot run cut short says so.
            if every != nil && stop() { return 0 }
            if interrupted {
                printError("error: interrupted; what was not reached is ingested by the next run")
                return 1
            }
            return status
        }
    }
}

/// The progress line on a terminal (ingest: files, samples, samples/s, time left; an import
/// its own line), redrawn in place at most ten times a second. Off the terminal it prints nothing.
final class ProgressDisplay: Sendable {
    private let enabled: Bool
    private let state = Mutex<(drawn: Bool, last: UInt64)>((false, 0))

    init(enabled: Bool) {
        self.enabled = enabled
    }

    func show(_ progress: IngestProgress) {
        var line = "ingest: \(progress.filesDone)/\(progress.filesTotal) files, \(progress.samples) samples, "
            + "\(Int(progress.samplesPerSecond.rounded())) samples/s"
        if let left = progress.secondsLeft { line += ", " + Self.duration(left) + " left" }
        show(line: line, force: progress.filesDone == progress.filesTotal)
    }

    /// Redraws the line (at most ten times a second unless `force`).
    func show(line: String, force: Bool = false) {
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        state.withLock { state in
            guard now - state.last > 100_000_000 || force else { return }
            state.last = now
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
            state.drawn = true
        }
    }

    /// Clears the progress line, then prints `text` on a line of its own (its control
    /// characters escaped, as `printError` does).
    func clearThen(_ text: String) {
        state.withLock { state in
            var out = ""
            if enabled && state.drawn { out += "\r\u{1B}[K" }
            state.drawn = false
            out += Log.escapingControls(text) + "\n"
            FileHandle.standardError.write(Data(out.utf8))
        }
    }

    func clear() {
        guard enabled else { return }
        state.withLock { state in
            if state.drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            state.drawn = false
        }
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(String(format: "%02d", s / 60 % 60))m" : "\(s / 60):\(String(format: "%02d", s % 60))"
    }
}
