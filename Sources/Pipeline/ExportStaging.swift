import AppleExport
import Foundation
import Postgres
import Synchronization
import Warehouse

/// What reading an export to stage its records found.
public struct StagedExport: Sendable, Equatable {
    /// The export's `ExportDate` as written (ISO 8601 with its offset); nil when it has none.
    public var exportDate: String?
    /// Records and workouts staged.
    public var records = 0
    /// `Record` elements read (the import's `records_read`).
    public var recordElements = 0
    /// Elements that could not be read, or whose reading could not (a record quarantined for a
    /// value, unit or date missing or not one): a record among them is one no sample can be
    /// matched to. (A record quarantined by a bound was read; no held sample is its twin, since
    /// the same bound keeps such a sample out.)
    public var skipped = 0
    /// The run stopped before the end.
    public var interrupted = false

    public init() {}
}

extension AppleExportImporter {
    /// Reads the whole export at `path` and stages its records under `run` for a
    /// reconciliation (`Reconciliation`), storing nothing else: the first pass of
    /// `import-apple-health --reconcile`, through the same pipeline as the import itself.
    public func stage(_ path: String, run: UUID, shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> StagedExport {
        let source = try ExportSource(path: path)
        let catalog = try pool.withConnection { try CatalogType.all(on: $0) }
        let reader = ExportReader(source: source, catalog: ExportCatalog(catalog), resumeAfter: 0,
                                  numbering: ExportNumbering(exportId: UUID().uuidString, lastSequence: 0, fallbackGenerated: ""))
        let staging = ExportStagingSource(person: person, run: run, reader: reader)
        let result = Pipeline(source: staging, pool: pool, queueCapacity: 2).run(shouldStop: shouldStop)
        if let failure = result.failure { throw failure }
        if let failure = staging.readFailure.withLock({ $0 }) { throw failure }
        var staged = staging.staged.withLock { $0 }
        staged.interrupted = result.interrupted
        return staged
    }
}

/// An export as a `BatchSource` whose storing is staging its records: no delivery, no route,
/// no ledger row.
final class ExportStagingSource: BatchSource {
    typealias End = Void

    let person: String
    let stopsOnFailure = true
    let run: UUID
    let reader: ExportReader
    let staged = Mutex(StagedExport())
    let readFailure = Mutex<AppleExportError?>(nil)

    init(person: String, run: UUID, reader: ExportReader) {
        self.person = person
        self.run = run
        self.reader = reader
    }

    func read(_ send: @escaping (SourceItem<ExportBatch, Void>) -> Bool, shouldStop: @escaping () -> Bool) -> Bool {
        do {
            return try reader.read(send: { batch in !shouldStop() && send(.batch(batch)) },
                                   onSkipped: { element in
                                       if !element.isQuarantined || !element.isBound { self.staged.withLock { $0.skipped += 1 } }
                                   },
                                   onProgress: { _ in })
        } catch {
            readFailure.withLock { $0 = error }
            return true
        }
    }

    func sampleCount(of batch: ExportBatch) -> Int { batch.delivery?.sampleCount ?? 0 }
    func ledger(of batch: ExportBatch) -> FileLedger.Update? { nil }
    func ledger(of end: Void) -> FileLedger.Update? { nil }

    func store(_ batch: ExportBatch, on connection: PostgresConnection) throws -> StoredBatch {
        if let delivery = batch.delivery {
            try Reconciliation.stage(delivery.samplesJSON, person: person, run: run, on: connection)
        }
        return StoredBatch(deliveries: 0, counts: StoreCounts())
    }

    func didStore(_ batch: ExportBatch, _ stored: StoredBatch) {
        staged.withLock {
            $0.records += batch.delivery?.sampleCount ?? 0
            $0.recordElements += batch.recordsRead
            if let date = batch.exportDate { $0.exportDate = date }
        }
    }

    func didFail(_ error: any Error, batch: ExportBatch?, end: Void?, databaseFailed: Bool) {}
}
