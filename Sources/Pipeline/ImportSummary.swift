import Foundation
import HealthPayload

/// What one run of `import-apple-health` did. The first ten are the `--json` keys
/// (docs/apple-export.md).
public struct ImportSummary: Sendable, Equatable {
    /// `Record` elements read (inside a `Correlation` too; skipped ones included).
    public var recordsRead = 0
    /// Samples (records and workouts) new to the person.
    public var new = 0
    /// Samples already held: the same record imported before (or twice in the file), its
    /// content refreshed when its metadata changed.
    public var duplicates = 0
    /// Records not stored because a pushed sample (healthd, Stridee) equal to them is held.
    public var matched = 0
    /// Elements skipped because they could not be read, each named on stderr.
    public var skipped = 0
    /// Records and workouts read but outside a bound (a text over 1,024 bytes, an implausible
    /// value or date): kept in `health.quarantine` with their reason, counted nowhere, named on
    /// stderr. Not a failure.
    public var quarantined = 0
    /// Workouts read.
    public var workouts = 0
    /// Routes stored.
    public var routes = 0
    /// Activity summaries read.
    public var activitySummaries = 0
    /// Wall time of the run.
    public var seconds = 0.0

    /// Batches stored, each with its delivery row (several to a transaction, each in a savepoint).
    public var batches = 0
    /// Elements of the document an earlier run had stored, passed over by this one.
    public var resumedAfter = 0
    /// The export was imported to its end before and has not changed: nothing was read.
    public var unchanged = false
    /// The run stopped before the end (a signal, or the database gone): the next run resumes.
    public var interrupted = false
    /// Control characters XML forbids, read as spaces.
    public var controlCharacters = 0

    public init() {}

    /// One object with exactly the keys docs/apple-export.md names.
    public var jsonText: String {
        "{\"records_read\":\(recordsRead),\"new\":\(new),\"duplicates\":\(duplicates),\"matched\":\(matched),"
            + "\"skipped\":\(skipped),\"quarantined\":\(quarantined),\"workouts\":\(workouts),\"routes\":\(routes),"
            + "\"activity_summaries\":\(activitySummaries),\"seconds\":\(String(format: "%.3f", seconds))}"
    }

    /// The one-line summary for people.
    public func line(path: String) -> String {
        if unchanged { return "import-apple-health: \(path) is unchanged since it was imported: nothing to do" }
        var text = "import-apple-health: \(recordsRead) records read (\(new) new, \(duplicates) duplicates, \(matched) matched), "
            + "\(workouts) workouts, \(routes) routes, \(activitySummaries) activity summaries, \(skipped) skipped, \(quarantined) quarantined, "
            + "\(batches) batches in \(String(format: "%.1f", seconds)) s"
        if resumedAfter > 0 { text += "; resumed after \(resumedAfter) elements stored by an earlier run" }
        if controlCharacters > 0 { text += "; \(controlCharacters) control characters read as spaces" }
        if interrupted { text += "; stopped before the end" }
        return text
    }
}

/// How far an import is, for a progress bar.
public struct ImportProgress: Sendable {
    /// Bytes of the export document read, and its size when known.
    public var bytesRead: Int64
    public var bytesTotal: Int64?
    /// Records read so far by this run.
    public var records: Int
    public var seconds: Double

    /// Records per second so far.
    public var recordsPerSecond: Double { seconds > 0 ? Double(records) / seconds : 0 }

    /// Seconds left at the rate so far, when the size is known.
    public var secondsLeft: Double? {
        guard let bytesTotal, bytesTotal > 0, bytesRead > 0, seconds > 1 else { return nil }
        return seconds * Double(bytesTotal - bytesRead) / Double(bytesRead)
    }
}
