import HealthPayload

/// A route of an imported workout, waiting to be stored with the workout's batch.
struct PendingRoute: Sendable {
    var workout: String
    var start: ExportTimestamp
    var end: ExportTimestamp
    var route: WorkoutRoute
}

/// One transaction's worth of an export: up to `ExportBatcher.maxUnits` samples and activity
/// summaries, the routes of its workouts, and where in the document it ends.
struct ExportBatch: Sendable {
    /// The samples as one JSON array, for `store_batch`.
    var samples = JSONWriter(capacity: 1 << 20)
    var sampleCount = 0
    /// Earliest start and latest end of its samples: the delivery's window.
    var windowStart: ExportTimestamp?
    var windowEnd: ExportTimestamp?
    var routes: [PendingRoute] = []
    var routePoints = 0
    /// `[{day, …}]` for `store_activity_summaries`.
    var summaries = JSONWriter(capacity: 4096)
    var summaryCount = 0
    /// Record elements and workouts it read.
    var recordsRead = 0
    var workouts = 0
    /// The position after its last element (elements of the document, in order, from 1) and that element's line.
    var itemsEnd = 0
    var lineEnd = 0
    /// The export's own `ExportDate`, once read.
    var exportDate: ExportTimestamp?

    init() {
        samples.beginArray()
        summaries.beginArray()
    }

    var units: Int { sampleCount + summaryCount }

    mutating func add(_ sample: MappedSample) {
        samples.raw(sample.json)
        sampleCount += 1
        if windowStart.map({ sample.start.milliseconds < $0.milliseconds }) ?? true { windowStart = sample.start }
        if windowEnd.map({ sample.end.milliseconds > $0.milliseconds }) ?? true { windowEnd = sample.end }
    }

    /// The samples array, closed.
    var samplesJSON: [UInt8] { samples.bytes + [UInt8(ascii: "]")] }
    /// The summaries array, closed.
    var summariesJSON: [UInt8] { summaries.bytes + [UInt8(ascii: "]")] }
}

/// The reading side of an import: takes the document's items in order, maps them, reads the
/// route files their workouts name, and cuts batches. Items up to `resumeAfter` were stored by
/// an earlier run and are passed over (what could not be read among them is still reported).
final class ExportBatcher {
    /// Samples and summaries per batch (the reference's batch size).
    static let maxUnits = 1000
    /// Route points per batch before it is cut early (a batch of long rides stays small).
    static let maxRoutePoints = 200_000

    private let mapper: ExportMapper
    private let source: ExportSource
    private let resumeAfter: Int
    private let skipped: (SkippedElement) -> Void
    private let send: (ExportBatch) -> Bool
    private var batch = ExportBatch()
    private var position = 0
    private var exportDate: ExportTimestamp?
    /// False once `send` refused a batch (the import stops).
    private(set) var open = true

    init(mapper: ExportMapper, source: ExportSource, resumeAfter: Int, skipped: @escaping (SkippedElement) -> Void,
         send: @escaping (ExportBatch) -> Bool) {
        self.mapper = mapper
        self.source = source
        self.resumeAfter = resumeAfter
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
            case .failure(let f): skip("Record", r.line, f.reason)
            }
            batch.lineEnd = r.line
        case .workout(let w):
            switch mapper.workout(w) {
            case .success(let sample):
                batch.add(sample)
                batch.workouts += 1
                if let route = route(of: w, uuid: sample.uuid) {
                    batch.routes.append(PendingRoute(workout: sample.uuid, start: sample.start, end: sample.end, route: route))
                    batch.routePoints += route.count
                }
            case .failure(let f):
                skip("Workout", w.line, f.reason)
            }
            batch.lineEnd = w.line
        case .activitySummary(let s):
            switch mapper.activitySummary(s) {
            case .success(let json):
                batch.summaries.raw(json)
                batch.summaryCount += 1
            case .failure(let f):
                skip("ActivitySummary", s.line, f.reason)
            }
            batch.lineEnd = s.line
        case .skipped(let s):
            if s.name == "Record" { batch.recordsRead += 1 }
            skipped(s)
            batch.lineEnd = s.line
        }
        batch.itemsEnd = position
        if batch.units >= Self.maxUnits || batch.routePoints >= Self.maxRoutePoints { cut() }
    }

    /// The end of the document: the last batch goes (also when empty, so the end is recorded).
    func finish() {
        guard open else { return }
        cut()
    }

    private func cut() {
        batch.exportDate = exportDate
        if batch.itemsEnd == 0 { batch.itemsEnd = max(position, resumeAfter) }
        let ready = batch
        batch = ExportBatch()
        if !send(ready) { open = false }
    }

    private func skip(_ name: String, _ line: Int, _ reason: String) {
        skipped(SkippedElement(name: name, line: line, reason: reason))
    }

    /// The workout's route: its inline points and the points of every route file it names, in
    /// time order. A file the export lacks or that cannot be read is skipped and named; the
    /// workout is kept.
    private func route(of w: ExportWorkout, uuid: String) -> WorkoutRoute? {
        var route = w.inlineRoute
        for file in w.routeFiles {
            do {
                guard let stream = try source.openReferenced(file) else {
                    skip("route \(file)", w.line, "the export holds no such file; the workout is kept without it")
                    continue
                }
                switch try GPXReader.read(stream, name: file) {
                case .success(let points):
                    route.times += points.times
                    route.latitudes += points.latitudes
                    route.longitudes += points.longitudes
                    route.altitudes += points.altitudes
                    route.speeds += points.speeds
                    route.courses += points.courses
                    route.horizontalAccuracies += points.horizontalAccuracies
                    route.verticalAccuracies += points.verticalAccuracies
                case .failure(let f):
                    skip("route \(file)", w.line, f.reason + "; the workout is kept without it")
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
