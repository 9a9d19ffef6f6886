import Hashing
import HealthPayload

/// A route of an imported workout, stored with the workout's batch: the workout's uuid, its
/// span (the reference's timestamp shape, the offset written) and its points in time order.
public struct ExportRoute: Sendable {
    public var workout: String
    public var start: String
    public var end: String
    public var points: WorkoutRoute
}

/// One transaction's worth of an export: up to `ExportBatcher.maxUnits` samples and activity
/// summaries, the routes of its workouts, and where in the document it ends.
public struct ExportBatch: Sendable {
    /// The samples as a healthd-shaped batch for `store_batch` (exportId, sequence and window
    /// filled in), or nil when it has none to deliver.
    public internal(set) var delivery: Batch?
    /// SHA-256 of the delivery's samples array (its `body_sha256`).
    public internal(set) var bodySHA256: [UInt8] = []
    public internal(set) var routes: [ExportRoute] = []
    /// `[{day, …}]` for `store_activity_summaries`, or nil when it holds none.
    public internal(set) var summariesJSON: [UInt8]?
    public internal(set) var summaryCount = 0
    /// Record elements and workouts it read.
    public internal(set) var recordsRead = 0
    public internal(set) var workouts = 0
    /// The position after its last element (elements of the document, in order, from 1) and that element's line.
    public internal(set) var itemsEnd = 0
    public internal(set) var lineEnd = 0
    /// True for the batch cut at the document's end: the import is complete once it is stored.
    public internal(set) var isFinal = false
    /// The export's `ExportDate` (ISO 8601 with the offset written), once the document gave
    /// it: the moment the export holds the whole of Health at.
    public internal(set) var exportDate: String?

    var samples = JSONWriter(capacity: 1 << 20)
    var sampleCount = 0
    /// Records, workouts and summaries read but refused by the mapping, positioned among the samples.
    var quarantined: [QuarantinedSample] = []
    var quarantinedBytes = 0
    /// Earliest start and latest end of its samples: the delivery's window.
    var windowStart: ExportTimestamp?
    var windowEnd: ExportTimestamp?
    var routePoints = 0
    var summaries = JSONWriter(capacity: 4096)

    init() {
        samples.beginArray()
        summaries.beginArray()
    }

    var units: Int { sampleCount + quarantined.count + summaryCount }

    /// What a route point takes in memory: a time, two coordinates and five optional numbers.
    static let routePointBytes = 3 * 8 + 5 * MemoryLayout<Double?>.stride

    /// The memory its samples, summaries and routes take, roughly.
    var bytes: Int { samples.bytes.count + quarantinedBytes + summaries.bytes.count + routePoints * Self.routePointBytes }

    mutating func add(_ sample: MappedSample) {
        samples.raw(sample.json)
        sampleCount += 1
        if windowStart.map({ sample.start.milliseconds < $0.milliseconds }) ?? true { windowStart = sample.start }
        if windowEnd.map({ sample.end.milliseconds > $0.milliseconds }) ?? true { windowEnd = sample.end }
    }

    /// Keeps an element that breaks a bound as the delivery's quarantined sample: its reason
    /// led by its line, `raw` its attributes as a JSON object.
    mutating func quarantine(_ name: String, line: Int, reason: String, attributes: ElementAttributes) {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        for (key, text) in attributes.pairs { w.member(key, text) }
        w.endObject()
        let raw = String(decoding: w.bytes, as: UTF8.self)
        quarantined.append(QuarantinedSample(position: sampleCount + quarantined.count + 1,
                                             reason: "line \(line), \(name): \(reason)", raw: raw))
        quarantinedBytes += raw.utf8.count
    }

    /// Closes the arrays; the samples become a delivery numbered `sequence` of `exportId`
    /// (`generated`: the export's date, or the file's time without one).
    mutating func seal(exportId: String, sequence: Int, generated: String) {
        if summaryCount > 0 { summariesJSON = summaries.bytes + [UInt8(ascii: "]")] }
        summaries = JSONWriter(capacity: 0)
        let json = samples.bytes + [UInt8(ascii: "]")]
        samples = JSONWriter(capacity: 0)
        let envelope = Envelope(exportId: exportId, generatedAt: generated, batchSequence: sequence, isFinalBatch: isFinal,
                                basis: "export", windowStart: windowStart?.text ?? generated, windowEnd: windowEnd?.text ?? generated,
                                occasionStart: generated, occasionEnd: generated)
        delivery = Batch(format: .json, envelope: envelope, samplesJSON: json, validSampleCount: sampleCount, quarantined: quarantined)
        quarantined = []
        bodySHA256 = SHA256.hash(json)
    }
}

/// How the batches of one import are numbered: every batch of a file's import shares one
/// exportId, and a resumed run goes on after the last sequence stored.
public struct ExportNumbering: Sendable {
    /// The exportId of the file's import (a UUID).
    public var exportId: String
    /// The highest batch sequence already stored under it (0 when none).
    public var lastSequence: Int
    /// The generatedAt of an export without an `ExportDate`: the file's time.
    public var fallbackGenerated: String

    /// The numbering of an import.
    public init(exportId: String, lastSequence: Int, fallbackGenerated: String) {
        self.exportId = exportId
        self.lastSequence = lastSequence
        self.fallbackGenerated = fallbackGenerated
    }

    /// The exportId of every import of the file whose SHA-256 is `fileSHA256`: a name-based
    /// UUID, so an interrupted import resumed goes on under the same one.
    public static func exportId(fileSHA256: [UInt8]) -> String {
        UUIDv5.make(namespace: ExportMapper.namespace, name: Array("export file \(SHA256.hexString(fileSHA256))".utf8))
    }
}

/// The reading side of an import: takes the document's items in order, maps them, reads the
/// route files their workouts name, and cuts batches. Items up to `resumeAfter` were stored by
/// an earlier run and are passed over (what could not be read among them is still reported).
final class ExportBatcher {
    /// Samples and summaries per batch (the reference's batch size).
    static let maxUnits = 1000
    /// Memory a batch's samples, summaries and routes may take before it is cut early (a batch
    /// of long rides or of records full of metadata stays small).
    static let maxBytes = 8 << 20
    /// Route points one workout may have, its inline points and route files together (55 hours
    /// at one a second): a route file that would take it beyond is skipped and named.
    static let maxRoutePoints = 200_000

    private let mapper: ExportMapper
    private let source: ExportSource
    private let resumeAfter: Int
    private var numbering: ExportNumbering
    private let skipped: (SkippedElement) -> Void
    private let send: (ExportBatch) -> Bool
    private var batch = ExportBatch()
    private var position = 0
    private var exportDate: ExportTimestamp?
    /// False once `send` refused a batch (the import stops).
    private(set) var open = true

    init(mapper: ExportMapper, source: ExportSource, resumeAfter: Int, numbering: ExportNumbering,
         skipped: @escaping (SkippedElement) -> Void, send: @escaping (ExportBatch) -> Bool) {
        self.mapper = mapper
        self.source = source
        self.resumeAfter = resumeAfter
        self.numbering = numbering
        self.skipped = skipped
        self.send = send
    }

    /// The export's `ExportDate`, as soon as the document has given it.
    func noteExportDate(_ written: String?) {
        guard exportDate == nil, let written else { return }
        exportDate = ExportTimestamp(written)
    }

    /// Takes the next item of the document.
    func take(_ item: ExportItem) {
        guard open else { return }
        position += 1
        if position <= resumeAfter {
            if case .skipped(let s) = item { skipped(s) }
            return
        }
        switch item {
        case .record(let r):
            batch.recordsRead += 1
            switch mapper.record(r) {
            case .success(let sample): batch.add(sample)
            case .failure(let f): refuse("Record", r.line, f, r.attributes)
            }
            batch.lineEnd = r.line
        case .workout(let w):
            switch mapper.workout(w) {
            case .success(let sample):
                batch.add(sample)
                batch.workouts += 1
                if let route = route(of: w, uuid: sample.uuid) {
                    batch.routes.append(ExportRoute(workout: sample.uuid, start: sample.start.text, end: sample.end.text, points: route))
                    batch.routePoints += route.count
                }
            case .failure(let f):
                refuse("Workout", w.line, f, w.attributes)
            }
            batch.lineEnd = w.line
        case .activitySummary(let s):
            switch mapper.activitySummary(s) {
            case .success(let json):
                batch.summaries.raw(json)
                batch.summaryCount += 1
            case .failure(let f):
                refuse("ActivitySummary", s.line, f, s.attributes)
            }
            batch.lineEnd = s.line
        case .skipped(let s):
            if s.name == "Record" { batch.recordsRead += 1 }
            skipped(s)
            batch.lineEnd = s.line
        }
        batch.itemsEnd = position
        if batch.units >= Self.maxUnits || batch.bytes >= Self.maxBytes { cut() }
    }

    /// The end of the document: the last batch goes (also when empty, so the end is recorded).
    func finish() {
        guard open else { return }
        batch.isFinal = true
        cut()
    }

    /// Sends the batch read so far. Its samples are a delivery when it has any, and an empty
    /// final batch is one too when earlier batches were delivered (it says the export is complete).
    private func cut() {
        if batch.itemsEnd == 0 { batch.itemsEnd = max(position, resumeAfter) }
        var ready = batch
        ready.exportDate = exportDate?.text
        batch = ExportBatch()
        if ready.sampleCount > 0 || !ready.quarantined.isEmpty || (ready.isFinal && numbering.lastSequence > 0) {
            numbering.lastSequence += 1
            ready.seal(exportId: numbering.exportId, sequence: numbering.lastSequence,
                       generated: exportDate?.text ?? numbering.fallbackGenerated)
        } else if ready.summaryCount > 0 {
            ready.summariesJSON = ready.summaries.bytes + [UInt8(ascii: "]")]
        }
        if !send(ready) { open = false }
    }

    private func skip(_ name: String, _ line: Int, _ reason: String) {
        skipped(SkippedElement(name: name, line: line, reason: reason))
    }

    /// A record, workout or activity summary the mapping refused: quarantined with the batch,
    /// and named.
    private func refuse(_ name: String, _ line: Int, _ failure: MappingFailure, _ attributes: ElementAttributes) {
        batch.quarantine(name, line: line, reason: failure.reason, attributes: attributes)
        skipped(SkippedElement(name: name, line: line, refused: failure))
    }

    /// The workout's route: its inline points and the points of every route file it names
    /// (each file once, however it is spelled), in time order. A file the export lacks, that
    /// lies outside it, that cannot be read or that would take the route past
    /// `maxRoutePoints` is skipped and named; the workout is kept.
    private func route(of w: ExportWorkout, uuid: String) -> WorkoutRoute? {
        var route = w.inlineRoute
        var read: Set<ExportSource.Referenced> = []
        for file in w.routeFiles {
            let located = source.locate(file)
            guard read.insert(located).inserted else { continue }
            do {
                switch located {
                case .missing:
                    skip("route \(file)", w.line, "the export holds no such file; the workout is kept without it")
                case .outside:
                    skip("route \(file)", w.line, "the path leads out of the export's folder; the workout is kept without it")
                case .entry, .file:
                    guard let stream = try source.open(located) else { continue }
                    switch try GPXReader.read(stream, name: file, maxPoints: Self.maxRoutePoints - route.count) {
                    case .success(let points): route.append(points)
                    case .failure(let f): skip("route \(file)", w.line, f.reason + "; the workout is kept without it")
                    }
                }
            } catch {
                skip("route \(file)", w.line, error.message + "; the workout is kept without it")
            }
        }
        guard !route.isEmpty else { return nil }
        route.sortByTime()
        return route
    }
}
