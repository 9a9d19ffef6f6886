import AppleExport
import Dispatch
import HealthPayload
import Postgres
import Synchronization
import Warehouse

/// `import-apple-health`: the Health app's export through the one pipeline. A batch is what
/// `ExportReader` cuts — its samples a healthd-shaped delivery through `store_batch` (origin
/// export), its workouts' routes and its activity summaries (`ExportStore`) — with the ledger
/// row saying how many elements of the document are stored.
///
/// A re-run of an unchanged export is a no-op; an interrupted one resumes after its last
/// committed batch, under the same exportId; a changed one is read again (its records' uuids
/// are name-based, so what was stored before counts as duplicates).
public final class AppleExportImporter: Sendable {
    let pool: PostgresPool
    let person: String

    /// An importer storing `person`'s data through `pool` (one connection at a time).
    public init(pool: PostgresPool, person: String) {
        self.pool = pool
        self.person = person
    }

    /// Imports the export at `path` (an `export.zip`, its folder, or an `export.xml`).
    ///
    /// - Parameters:
    ///   - shouldStop: checked between batches; true stops the run cleanly (`interrupted`).
    ///   - onSkipped: called for each element that cannot be read, and each record or workout
    ///     quarantined (`SkippedElement.isQuarantined`), from the reading thread.
    ///   - onProgress: called as the document is read, from the reading thread.
    /// - Throws: `AppleExportError` when the path holds no readable export, `PostgresError`
    ///   when storing fails (what was committed stays, and the next run goes on from there).
    public func run(_ path: String, shouldStop: @escaping @Sendable () -> Bool = { false },
                    onSkipped: @escaping @Sendable (SkippedElement) -> Void = { _ in },
                    onProgress: @escaping @Sendable (ImportProgress) -> Void = { _ in }) throws -> ImportSummary {
        let started = DispatchTime.now().uptimeNanoseconds
        let source = try ExportSource(path: path)
        let file = try FileIdentity(source.identityPath)
        let (previous, catalog, reconciled) = try pool.withConnection { c in
            (try FileLedger.row(person: person, path: source.path, on: c), try CatalogType.all(on: c),
             try FileLedger.reconciledSince(person: person, path: source.path, on: c))
        }
        var summary = ImportSummary()
        func done() -> ImportSummary {
            summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            return summary
        }
        let earlier = previous?.format == .appleExport ? previous : nil
        // Unchanged and read whole: nothing to do, unless a reconciliation marked samples deleted
        // since, which reading it again may bring back.
        if let earlier, earlier.isComplete, !reconciled, earlier.size == file.size,
           earlier.modifiedNanoseconds == file.modifiedNanoseconds {
            summary.unchanged = true
            return done()
        }
        let sha256 = try file.sha256()
        if let earlier, earlier.sha256 == sha256 {
            if !earlier.isComplete {
                summary.resumedAfter = Int(earlier.storedRecords)
            } else if !reconciled {
                try touch(earlier, path: source.path, modified: file.modifiedNanoseconds)
                summary.unchanged = true
                return done()
            }
        }
        let exportId = ExportNumbering.exportId(fileSHA256: sha256)
        let last = try pool.withConnection { try ExportStore.lastSequence(exportId: exportId, person: person, on: $0) }
        let reader = ExportReader(source: source, catalog: ExportCatalog(catalog), resumeAfter: summary.resumedAfter,
                                  numbering: ExportNumbering(exportId: exportId, lastSequence: last, fallbackGenerated: file.modifiedText))
        let batches = ExportBatchSource(person: person, reader: reader, source: source, file: file, sha256: sha256,
                                        onSkipped: onSkipped, onProgress: onProgress, started: started)
        // Two batches read ahead: an export's batch may hold up to ExportBatcher.maxBytes and one
        // more item, and the reader's memory must stay bounded whatever the export holds.
        let result = Pipeline(source: batches, pool: pool, queueCapacity: 2).run(shouldStop: shouldStop)
        if let failure = result.failure { throw failure }
        if let failure = batches.readFailure.withLock({ $0 }) { throw failure }
        summary.take(batches.tally.withLock { $0 }, interrupted: result.interrupted, controlCharacters: reader.controlCharacters)
        return done()
    }

    /// Records the new modification time of an export found unchanged by its hash.
    private func touch(_ position: FileLedger.Position, path: String, modified: Int64) throws {
        var touched = position
        touched.modifiedNanoseconds = modified
        try pool.withConnection { c in
            try FileLedger.write(FileLedger.Update(path: path, position: touched, countsAsRun: false), person: person,
                                 adding: FileLedger.Totals(), on: c)
        }
    }
}

/// An export as a `BatchSource`: read by `ExportReader`; each batch is its delivery, routes and
/// summaries, with the ledger row of where the document stands after it.
final class ExportBatchSource: BatchSource {
    typealias End = Void

    let person: String
    let stopsOnFailure = true
    let reader: ExportReader
    let source: ExportSource
    let file: FileIdentity
    let sha256: [UInt8]
    let onSkipped: @Sendable (SkippedElement) -> Void
    let onProgress: @Sendable (ImportProgress) -> Void
    let started: UInt64
    /// What the stored batches held, counted as they are stored (the storing thread's).
    let tally = Mutex(ImportTally())
    /// Routes stored by the batch being stored.
    private let routesOfStep = Atomic<Int>(0)
    let recordsStored = Atomic<Int>(0)
    /// Why the document could not be read on, if it could not.
    let readFailure = Mutex<AppleExportError?>(nil)

    init(person: String, reader: ExportReader, source: ExportSource, file: FileIdentity, sha256: [UInt8],
         onSkipped: @escaping @Sendable (SkippedElement) -> Void, onProgress: @escaping @Sendable (ImportProgress) -> Void,
         started: UInt64) {
        self.person = person
        self.reader = reader
        self.source = source
        self.file = file
        self.sha256 = sha256
        self.onSkipped = onSkipped
        self.onProgress = onProgress
        self.started = started
    }

    func read(_ send: @escaping (SourceItem<ExportBatch, Void>) -> Bool, shouldStop: @escaping () -> Bool) -> Bool {
        let total = source.documentSize
        do {
            return try reader.read(
                send: { batch in !shouldStop() && send(.batch(batch)) },
                onSkipped: { element in
                    if !element.isQuarantined { self.tally.withLock { $0.skipped += 1 } }
                    self.onSkipped(element)
                },
                onProgress: { read in
                    self.onProgress(ImportProgress(bytesRead: read, bytesTotal: total, records: self.recordsStored.load(ordering: .relaxed),
                                                   seconds: Double(DispatchTime.now().uptimeNanoseconds - self.started) / 1e9))
                })
        } catch {
            readFailure.withLock { $0 = error }
            return true
        }
    }

    func sampleCount(of batch: ExportBatch) -> Int { batch.delivery?.sampleCount ?? 0 }
    func ledger(of end: Void) -> FileLedger.Update? { nil }

    func ledger(of batch: ExportBatch) -> FileLedger.Update? {
        FileLedger.Update(path: source.path, position: FileLedger.Position(
            format: .appleExport, compressed: source.isArchive, size: file.size, modifiedNanoseconds: file.modifiedNanoseconds,
            storedBytes: batch.isFinal ? file.size : 0, storedLines: Int64(batch.lineEnd), storedRecords: Int64(batch.itemsEnd),
            sha256: sha256))
    }

    func store(_ batch: ExportBatch, on connection: PostgresConnection) throws -> StoredBatch {
        var stored = StoredBatch(deliveries: 0, counts: StoreCounts())
        if let delivery = batch.delivery {
            stored.counts = try BatchStore.store(delivery, person: person, origin: .export(path: source.path),
                                                 bodySHA256: batch.bodySHA256, deferRollups: true, on: connection)
            stored.deliveries = 1
        }
        var routes = 0
        for route in batch.routes {
            let kept = try ExportStore.storeRoute(workout: route.workout, start: route.start, end: route.end, points: route.points,
                                                  person: person, on: connection)
            if kept { routes += 1 }
        }
        if let summaries = batch.summariesJSON {
            try ExportStore.storeActivitySummaries(summaries, person: person, on: connection)
        }
        routesOfStep.store(routes, ordering: .relaxed)
        return stored
    }

    func didStore(_ batch: ExportBatch, _ stored: StoredBatch) {
        let routes = routesOfStep.load(ordering: .relaxed)
        tally.withLock { $0.add(batch, stored, routes: routes) }
        recordsStored.add(batch.recordsRead, ordering: .relaxed)
    }

    func didFail(_ error: any Error, batch: ExportBatch?, end: Void?, databaseFailed: Bool) {}
}

/// What an import's stored batches held.
struct ImportTally: Sendable {
    var batches = 0
    var recordsRead = 0
    var new = 0
    var duplicates = 0
    var matched = 0
    var workouts = 0
    var routes = 0
    var activitySummaries = 0
    var skipped = 0
    var quarantined = 0

    mutating func add(_ batch: ExportBatch, _ stored: StoredBatch, routes: Int) {
        batches += stored.deliveries
        recordsRead += batch.recordsRead
        new += stored.counts.inserted
        quarantined += stored.counts.quarantined
        duplicates += stored.counts.duplicates + stored.counts.replaced
        matched += stored.counts.matched
        workouts += batch.workouts
        self.routes += routes
        activitySummaries += batch.summaryCount
    }
}

extension ImportSummary {
    /// Takes what the stored batches held.
    mutating func take(_ tally: ImportTally, interrupted: Bool, controlCharacters: Int) {
        batches = tally.batches
        recordsRead = tally.recordsRead
        new = tally.new
        duplicates = tally.duplicates
        matched = tally.matched
        workouts = tally.workouts
        routes = tally.routes
        activitySummaries = tally.activitySummaries
        skipped = tally.skipped
        quarantined = tally.quarantined
        self.interrupted = interrupted
        self.controlCharacters = controlCharacters
    }
}

extension ExportCatalog {
    /// The mapping's catalog of the warehouse's types.
    init(_ types: [CatalogType]) {
        self.init(entries: Dictionary(types.map { ($0.type, Entry(group: $0.group, kind: $0.kind, unit: $0.unit, rule: $0.rule)) },
                                      uniquingKeysWith: { first, _ in first }))
    }
}
