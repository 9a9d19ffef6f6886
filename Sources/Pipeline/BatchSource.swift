import Postgres
import Warehouse

/// What a source hands the pipeline, in order: batches, and the end of each segment (a file)
/// they belong to.
public enum SourceItem<Batch: Sendable, End: Sendable>: Sendable {
    /// A batch to store.
    case batch(Batch)
    /// The segment of the batches before it has ended (a file read to its end, or given up).
    case end(End)
}

/// What storing one batch did.
public struct StoredBatch: Sendable, Equatable {
    /// Deliveries written (batches through `store_batch`): 1, or 0 for a batch that had none.
    public var deliveries: Int
    /// The counts `store_batch` answered.
    public var counts: StoreCounts

    /// A result of `deliveries` and `counts`.
    public init(deliveries: Int, counts: StoreCounts) {
        self.deliveries = deliveries
        self.counts = counts
    }
}

/// A way in that reads its own durable input — backlog files, the Health app's export — as the
/// pipeline sees it: how it reads (on the pipeline's reading thread) and what storing one of
/// its batches is (on the storing thread). Everything else — the thread, the bounded queue, the
/// groups of batches per transaction, commits, failures and the ledger rows — is `Pipeline`'s.
public protocol BatchSource: AnyObject, Sendable {
    /// What the source reads into: one transaction's worth of data (at most a batch of 1000).
    associatedtype Batch: Sendable
    /// The end of a segment (a file): how reading it went, and its ledger row.
    associatedtype End: Sendable

    /// Whose data it is.
    var person: String { get }
    /// True when a batch that cannot be stored stops the run (an export: one document, resumed
    /// from its last stored batch); false when it only fails its segment, whose later batches
    /// and ledger row are then left out and the run goes on (a backlog file among others).
    var stopsOnFailure: Bool { get }

    /// Reads everything, in order, handing each item to `send`; returns early when `send`
    /// answers false (the storing side has stopped) or `shouldStop()` is true. True when it
    /// read to the end.
    func read(_ send: @escaping (SourceItem<Batch, End>) -> Bool, shouldStop: @escaping () -> Bool) -> Bool
    /// The samples in `batch` (a group commits after `BatchGroup.maxSamples`).
    func sampleCount(of batch: Batch) -> Int
    /// The ledger row a batch carries itself (where an export stands after it), if any.
    func ledger(of batch: Batch) -> FileLedger.Update?
    /// The ledger row a segment's end carries (where a file stands once read), if any.
    func ledger(of end: End) -> FileLedger.Update?
    /// Stores `batch` on `connection`, inside the open group's transaction.
    func store(_ batch: Batch, on connection: PostgresConnection) throws -> StoredBatch

    /// A batch's step is done (its savepoint released; the group may commit later).
    func didStore(_ batch: Batch, _ stored: StoredBatch)
    /// A segment's end was taken: `stored` when its batches and ledger row all were.
    func didEnd(_ end: End, stored: Bool)
    /// Something could not be stored: a batch (with its segment's end when it was the last), a
    /// ledger row alone (`batch` nil), or a commit (both nil). `databaseFailed`: the database
    /// itself failed, and the run stops.
    func didFail(_ error: any Error, batch: Batch?, end: End?, databaseFailed: Bool)
}

extension BatchSource {
    public func didStore(_ batch: Batch, _ stored: StoredBatch) {}
    public func didEnd(_ end: End, stored: Bool) {}
}

/// What a pipeline run did.
public struct PipelineResult: Sendable {
    /// Deliveries committed, and the counts of their batches.
    public var batches = 0
    public var counts = StoreCounts()
    /// Time spent in the database's transactions (storing and committing).
    public var databaseSeconds = 0.0
    /// The run stopped before the end: `shouldStop`, or the reader gave up early.
    public var interrupted = false
    /// The database failed under the run, which stopped; the open group was rolled back.
    public var databaseFailed = false
    /// The error that stopped the run: the database's, or a batch's of a source that stops on failure.
    public var failure: (any Error)?

    /// An empty result.
    public init() {}
}
