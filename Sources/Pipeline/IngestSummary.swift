import Backlog
import HealthPayload
import Warehouse

/// What one ingest run did.
public struct IngestSummary: Sendable, Equatable {
    /// Files found (and paths that could not be read).
    public var filesSeen = 0
    /// Files read with nothing failing.
    public var filesIngested = 0
    /// Files not read because unchanged (or found with the same content), or empty.
    public var filesSkipped = 0
    /// Files with at least one failure; their ledger row did not advance past it.
    public var filesFailed = 0
    /// Batches stored, each with its delivery row (several to a transaction, each in a savepoint).
    public var batches = 0
    /// Connectivity probes found in files (nothing stored).
    public var probes = 0
    /// Counts summed over the batches, as the receiver reports them: samples in them, new,
    /// already held, replaced by a newer copy, kept apart in quarantine.
    public var samples = 0
    public var inserted = 0
    public var duplicates = 0
    public var replaced = 0
    public var quarantined = 0
    /// Wall time of the run.
    public var seconds = 0.0
    /// Of `seconds`, the time spent in the database's transactions (the rest is reading, walking and waiting).
    public var databaseSeconds = 0.0
    /// True when a signal stopped the run between batches.
    public var interrupted = false
    /// True when the database failed under the run and it stopped early.
    public var aborted = false
    /// Every failure, in the order found.
    public var failures: [IngestFailure] = []

    /// An empty summary.
    public init() {}

    /// Samples per second over the run.
    public var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }

    /// One line for people: `ingest: 4 files (3 ingested, 0 skipped, 1 failed), …`
    public var line: String {
        var text = "ingest: \(filesSeen) file\(filesSeen == 1 ? "" : "s") (\(filesIngested) ingested, \(filesSkipped) skipped, \(filesFailed) failed), "
            + "\(batches) batch\(batches == 1 ? "" : "es"), \(samples) samples (\(inserted) new, \(duplicates) duplicates, "
            + "\(replaced) replaced, \(quarantined) quarantined) in \(Self.format(seconds)) s"
        if samples > 0 { text += ", \(Int(samplesPerSecond.rounded())) samples/s" }
        if interrupted { text += "; interrupted" }
        if aborted { text += "; stopped early" }
        return text
    }

    /// The summary as one JSON object, for cron and monitoring.
    public var jsonText: String {
        var out = "{\"files_seen\":\(filesSeen),\"files_ingested\":\(filesIngested),\"files_skipped\":\(filesSkipped)"
            + ",\"files_failed\":\(filesFailed),\"batches\":\(batches),\"probes\":\(probes),\"samples\":\(samples)"
            + ",\"inserted\":\(inserted),\"duplicates\":\(duplicates),\"replaced\":\(replaced),\"quarantined\":\(quarantined)"
            + ",\"seconds\":\(Self.format(seconds)),\"interrupted\":\(interrupted),\"errors\":["
        for (i, failure) in failures.enumerated() {
            if i > 0 { out += "," }
            out += "{\"file\":"
            JSONString.append(quoting: failure.path, to: &out)
            out += ",\"error\":"
            JSONString.append(quoting: failure.message, to: &out)
            out += "}"
        }
        return out + "]}"
    }

    static func format(_ seconds: Double) -> String {
        let centis = Int((seconds * 1000).rounded())
        let whole = centis / 1000, fraction = centis % 1000
        return "\(whole)." + String(repeating: "0", count: 3 - String(fraction).count) + String(fraction)
    }
}

/// Where a run stands, for a progress line.
public struct IngestProgress: Sendable {
    /// Files finished (ingested, skipped or failed) and found.
    public var filesDone: Int
    public var filesTotal: Int
    /// Samples stored so far.
    public var samples: Int
    /// Bytes read so far, and the sizes of the files to read.
    public var bytesDone: Int64
    public var bytesTotal: Int64
    /// Since the run started.
    public var seconds: Double

    /// Samples stored per second so far.
    public var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }

    /// Seconds left, from the bytes still to read; nil before there is a rate to go by.
    public var secondsLeft: Double? {
        guard bytesDone > 0, bytesTotal > bytesDone, seconds > 0.5 else { return bytesTotal > 0 && bytesDone >= bytesTotal ? 0 : nil }
        return seconds * Double(bytesTotal - bytesDone) / Double(bytesDone)
    }
}
