import Backlog
import Foundation
import Hashing
import HealthPayload
import Postgres
import Synchronization
import Warehouse

/// Imports the Health app's export through the same pipeline as everything else: records
/// and workouts become healthd-shaped samples in batches of 1000 for `store_batch` (origin
/// export, one transaction and delivery row per batch, rollups kept), with each batch's routes,
/// activity summaries and ledger row in the same transaction.
///
/// One thread reads (inflating, parsing, mapping, reading route files); the calling thread
/// stores, so the two overlap. Memory is bounded by a few batches, whatever the export's size.
/// The ledger row written with every batch says how many elements of the document are stored:
/// a re-run of an unchanged export is a no-op, an interrupted one resumes after its last
/// committed batch, and a changed one is read again (its records' uuids are name-based, so
/// what was stored before counts as duplicates).
public final class AppleExportImporter: Sendable {
    let pool: PostgresPool
    let person: String

    /// An importer storing `person`'s data through `pool` (one connection is used).
    public init(pool: PostgresPool, person: String) {
        self.pool = pool
        self.person = person
    }

    /// Imports the export at `path` (an `export.zip`, its folder, or an `export.xml`).
    ///
    /// - Parameters:
    ///   - shouldStop: checked between batches; true stops the run cleanly (`interrupted`).
    ///   - onSkipped: called for each element that cannot be read, from the reading thread.
    ///   - onProgress: called as the document is read, from the reading thread.
    /// - Throws: `AppleExportError` when the path holds no readable export, `PostgresError`
    ///   when storing fails (what was committed stays, and the next run goes on from there).
    public func run(_ path: String, shouldStop: @escaping @Sendable () -> Bool = { false },
                    onSkipped: @escaping @Sendable (SkippedElement) -> Void = { _ in },
                    onProgress: @escaping @Sendable (ImportProgress) -> Void = { _ in }) throws -> ImportSummary {
        let started = DispatchTime.now().uptimeNanoseconds
        @Sendable func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        var summary = ImportSummary()
        let source = try ExportSource(path: path)
        let file = try FileIdentity(source.identityPath)

        let (previous, catalog) = try pool.withConnection { c in
            (try ExportLedger.load(person: person, path: source.path, on: c), try ExportCatalog.load(on: c))
        }
        if let previous, previous.complete, previous.size == file.size, previous.modifiedNanoseconds == file.modifiedNanoseconds {
            summary.unchanged = true
            summary.seconds = elapsed()
            return summary
        }
        let sha256 = try file.sha256()
        var resumeAfter = 0
        if let previous, previous.sha256 == sha256 {
            if previous.complete {
                try pool.withConnection { try ExportLedger.touch(person: person, path: source.path, modifiedNanoseconds: file.modifiedNanoseconds, on: $0) }
                summary.unchanged = true
                summary.seconds = elapsed()
                return summary
            }
            resumeAfter = previous.items
        }
        summary.resumedAfter = resumeAfter
        let resumeFrom = resumeAfter

        // Every batch of the file's import shares one exportId; a resumed run goes on numbering.
        let exportId = UUIDv5.make(namespace: ExportMapper.namespace, name: Array("export file \(sha256)".utf8))
        var sequence: Int = try pool.withConnection { c in
            try c.query("SELECT coalesce(max(batch_sequence), 0) FROM health_store.deliveries WHERE person = $1 AND export_id = $2::uuid",
                        [person, exportId]).first!.decode(0)
        }

        // Reading: its own thread, batches handed over through a small queue.
        let queue = WorkQueue<ExportBatch>(capacity: 4)
        let skipped = Atomic<Int>(0)
        let recordsStored = Atomic<Int>(0)
        let controls = Atomic<Int>(0)
        let failure = Mutex<AppleExportError?>(nil)
        let readerDone = DispatchSemaphore(value: 0)
        let mapper = ExportMapper(catalog: catalog)
        let total = source.documentSize
        let thread = Thread {
            defer {
                queue.finish()
                readerDone.signal()
            }
            do {
                let stream = try source.openDocument()
                let batcher = ExportBatcher(mapper: mapper, source: source, resumeAfter: resumeFrom,
                                            skipped: { element in
                                                skipped.add(1, ordering: .relaxed)
                                                onSkipped(element)
                                            },
                                            send: { queue.put($0) })
                let reader = ExportDocumentReader(onExportDate: batcher.noteExportDate, emit: batcher.take)
                let parser = XMLStreamParser(handler: reader, name: source.documentName, restartRoot: "HealthData")
                var filter = ExportInputFilter()
                var read: Int64 = 0
                try stream.forEachChunk { chunk in
                    parser.feed(filter.filter(chunk))
                    read += Int64(chunk.count)
                    onProgress(ImportProgress(bytesRead: read, bytesTotal: total, records: recordsStored.load(ordering: .relaxed),
                                              seconds: elapsed()))
                    return batcher.open
                }
                guard batcher.open else { return }
                parser.feed(filter.flush())
                parser.finish()
                reader.documentEnded(atLine: Int(filter.lines))
                controls.store(filter.replacedControls, ordering: .relaxed)
                batcher.finish()
            } catch let error as AppleExportError {
                failure.withLock { $0 = error }
            } catch {
                failure.withLock { $0 = AppleExportError("\(source.documentName): \(error)") }
            }
        }
        thread.name = "import-reader"
        thread.stackSize = 8 << 20
        thread.start()

        // Storing, in order, in groups of batches (ExportStorer); the last batch is held back
        // until the reader says it is the last (isFinalBatch).
        let store = ExportStorer(pool: pool, person: person, source: source, file: file, sha256: sha256, exportId: exportId)
        var held: ExportBatch?
        var firstOfRun = true
        func put(_ batch: ExportBatch, final: Bool) throws {
            sequence += 1
            let stored = try store.store(batch, sequence: sequence, final: final, newRun: firstOfRun)
            try store.commit(force: final)
            firstOfRun = false
            summary.batches += stored.delivered ? 1 : 0
            summary.recordsRead += batch.recordsRead
            summary.new += stored.counts.inserted
            summary.duplicates += stored.counts.duplicates + stored.counts.replaced
            summary.matched += stored.counts.matched
            summary.workouts += batch.workouts
            summary.routes += stored.routes
            summary.activitySummaries += batch.summaryCount
            recordsStored.add(batch.recordsRead, ordering: .relaxed)
            if !stored.delivered { sequence -= 1 }
        }
        do {
            while let batch = queue.take() {
                if shouldStop() {
                    summary.interrupted = true
                    break
                }
                if let previous = held { try put(previous, final: false) }
                held = batch
            }
            if let last = held, !summary.interrupted {
                // The reader ended: at the document's end, unless it failed (then the batch is
                // stored, but the import is not complete).
                readerDone.wait()
                readerDone.signal()
                try put(last, final: failure.withLock { $0 } == nil)
            }
            // Whole batches, with the ledger rows saying so: an interrupted import or a broken
            // document keeps what was read.
            try store.commit(force: true)
        } catch {
            store.rollback()
            queue.close()
            readerDone.wait()
            throw error
        }
        queue.close()
        readerDone.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        summary.skipped = skipped.load(ordering: .relaxed)
        summary.controlCharacters = controls.load(ordering: .relaxed)
        summary.seconds = elapsed()
        return summary
    }
}

/// The storing side of an import: batches stored in groups (`BatchGroup`, as `ingest` does:
/// several a transaction, committed asynchronously, the rollups refreshed once per commit),
/// each batch with the ledger row saying how far the document is stored. The export is its
/// own durable source: a crash loses the last groups and their ledger rows together, and the
/// next run resumes after the last batch committed.
final class ExportStorer {
    let person: String
    let source: ExportSource
    let file: FileIdentity
    let sha256: String
    let exportId: String
    private let groups: PooledBatchGroups

    init(pool: PostgresPool, person: String, source: ExportSource, file: FileIdentity, sha256: String, exportId: String) {
        self.person = person
        self.source = source
        self.file = file
        self.sha256 = sha256
        self.exportId = exportId
        groups = PooledBatchGroups(pool: pool, person: person)
    }

    /// Commits the open group when it is due, or whenever one is open with `force`.
    func commit(force: Bool) throws {
        try groups.commit(force: force)
    }

    /// Drops the open group: its batches and their ledger rows go together.
    func rollback() {
        groups.rollback()
    }

    /// What storing one batch did.
    struct Stored {
        var counts = StoreCounts()
        var routes = 0
        /// False when the batch had no samples and needed no delivery row.
        var delivered = false
    }

    /// Stores `batch` as batch `sequence` of the import: its samples through `store_batch`
    /// (skipped when it has none and is not the final one), its routes and summaries, and the
    /// ledger row saying the document is stored up to the batch's end.
    /// A batch that fails drops the whole open group (the ledger must not move past it) and
    /// the error is rethrown.
    func store(_ batch: ExportBatch, sequence: Int, final: Bool, newRun: Bool) throws -> Stored {
        do {
            return try groups.step(samples: batch.sampleCount) { c in try store(batch, sequence: sequence, final: final, newRun: newRun, on: c) }
        } catch {
            rollback()
            throw error
        }
    }

    private func store(_ batch: ExportBatch, sequence: Int, final: Bool, newRun: Bool, on c: PostgresConnection) throws -> Stored {
        var stored = Stored()
        if batch.sampleCount > 0 || (final && sequence > 1) {
            let generated = batch.exportDate?.text ?? file.modifiedText
            let envelope = Envelope(exportId: exportId, generatedAt: generated, batchSequence: sequence, isFinalBatch: final,
                                    basis: "export", windowStart: batch.windowStart?.text ?? generated,
                                    windowEnd: batch.windowEnd?.text ?? generated, occasionStart: generated, occasionEnd: generated)
            let samples = batch.samplesJSON
            let decoded = Batch(format: .json, envelope: envelope, samplesJSON: samples, validSampleCount: batch.sampleCount, quarantined: [])
            stored.counts = try BatchStore.store(decoded, person: person, origin: .export(path: source.path),
                                                 bodySHA256: SHA256.hash(samples), on: c)
            stored.delivered = true
        }
        for r in batch.routes {
            var parameters: [(any PostgresBindable)?] = [person, r.workout, r.start.text, r.end.text]
            let route = StrideeStore.routeRow(r.route, after: &parameters)
            let row = try c.query("SELECT health_store.store_export_route($1, $2::uuid, $3::timestamptz, $4::timestamptz, \(route))",
                                  parameters)
            if try row.first?.decode(0, as: Bool.self) == true { stored.routes += 1 }
        }
        if batch.summaryCount > 0 {
            try c.query("SELECT health_store.store_activity_summaries($1, $2::jsonb, $3::timestamptz)",
                        [person, PostgresBinaryText(batch.summariesJSON), Date()])
        }
        let entry = ExportLedger.Entry(size: file.size, modifiedNanoseconds: file.modifiedNanoseconds, items: batch.itemsEnd,
                                       complete: final, sha256: sha256)
        try ExportLedger.write(person: person, path: source.path, archive: source.isArchive, entry: entry, line: batch.lineEnd,
                               newRun: newRun, counts: stored.counts, on: c)
        return stored
    }
}

/// The file that identifies an export (the archive, or export.xml): size, modification time
/// and, when asked, its SHA-256.
struct FileIdentity: Sendable {
    let path: String
    let size: Int64
    let modifiedNanoseconds: Int64

    init(_ path: String) throws(AppleExportError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw AppleExportError("\(path): \(String(cString: strerror(errno)))") }
        self.path = path
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    /// The whole file's SHA-256 as 64 lowercase hex digits.
    func sha256() throws(AppleExportError) -> String {
        var hash = SHA256()
        try FileStream(path: path).forEachChunk(size: 1 << 20) { chunk in
            hash.update(chunk)
            return true
        }
        return SHA256.hexString(hash.finalize())
    }

    /// The modification time in ISO 8601 (UTC): the generatedAt of an export without an ExportDate.
    var modifiedText: String {
        ISO8601Timestamp(microsecondsSinceEpoch: modifiedNanoseconds / 1000, offsetSeconds: 0).description
    }
}
