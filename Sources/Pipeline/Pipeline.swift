import Dispatch
import Foundation
import Postgres
import Synchronization
import Warehouse

/// The one pipeline of every way in that reads its own durable input (`ingest`,
/// `import-apple-health`, and any source later): a `BatchSource` is read on a thread of its
/// own into a bounded queue, and its batches are stored on the calling thread, so reading
/// overlaps the database's work and memory stays bounded by a few batches.
///
/// Batches are stored in groups (`BatchGroup`): several per transaction, committed
/// asynchronously once due, the rollups refreshed once per commit, each batch in a savepoint
/// of its own. One batch is held back until the next item comes, so a segment's ledger row
/// (`FileLedger`) is written in the same step as its last batch; a batch that carries a ledger
/// row of its own (an export's position) has it written with it. A row never claims what is
/// not stored: a crash loses the last groups and their ledger rows together, and the next run
/// resumes from what the ledger says.
///
/// Failures: the database failing (or a commit) stops the run, the open group rolled back; a
/// batch that fails otherwise fails its segment (its later batches and ledger row left out),
/// or stops the run when the source says so (`stopsOnFailure`); a stop request stops between
/// batches, the open group committed (it holds whole batches).
public final class Pipeline<Source: BatchSource> {
    let source: Source
    let pool: PostgresPool
    let queueCapacity: Int
    private let groups: PooledBatchGroups
    private var held: Source.Batch?
    /// A batch of the current segment failed: the rest of it is passed over.
    private var segmentFailed = false
    /// What the current segment stored since its ledger row was last written.
    private var sinceLedger = FileLedger.Totals()
    /// Paths whose row already counted this run.
    private var counted = Set<String>()
    /// Stored in the open group, not yet committed.
    private var uncommitted = (batches: 0, counts: StoreCounts())
    private var result = PipelineResult()

    /// A pipeline storing `source`'s batches through `pool` (one connection at a time), with at
    /// most `queueCapacity` items read ahead.
    public init(source: Source, pool: PostgresPool, queueCapacity: Int = 8) {
        self.source = source
        self.pool = pool
        self.queueCapacity = queueCapacity
        groups = PooledBatchGroups(pool: pool, person: source.person)
    }

    /// Reads and stores everything; `shouldStop` is checked between batches.
    public func run(shouldStop: @escaping @Sendable () -> Bool = { false }) -> PipelineResult {
        let queue = WorkQueue<SourceItem<Source.Batch, Source.End>>(capacity: queueCapacity)
        let stopReading = Atomic<Bool>(false)
        let readToEnd = Atomic<Bool>(false)
        let readerDone = DispatchSemaphore(value: 0)
        let source = self.source
        let thread = Thread {
            let whole = source.read({ queue.put($0) }, shouldStop: { stopReading.load(ordering: .relaxed) || shouldStop() })
            readToEnd.store(whole, ordering: .relaxed)
            queue.finish()
            readerDone.signal()
        }
        thread.name = "pipeline-reader"
        thread.stackSize = 8 << 20
        thread.start()

        consume(queue, shouldStop: shouldStop)
        if result.databaseFailed {
            groups.rollback()
        } else {
            // What the open group holds is whole batches (and the ledger rows vouching for them).
            _ = commit(force: true)
        }
        let stoppedEarly = result.databaseFailed || result.failure != nil || result.interrupted
        if stoppedEarly {
            stopReading.store(true, ordering: .relaxed)
            queue.close()
        }
        readerDone.wait()
        if !readToEnd.load(ordering: .relaxed) && result.failure == nil { result.interrupted = true }
        return result
    }

    /// Takes items until the queue ends or the run must stop.
    private func consume(_ queue: WorkQueue<SourceItem<Source.Batch, Source.End>>, shouldStop: () -> Bool) {
        while let item = queue.take() {
            if shouldStop() {
                result.interrupted = true
                return
            }
            switch item {
            case .batch(let batch):
                if segmentFailed { continue }
                if let previous = held {
                    held = nil
                    guard store(previous, closing: nil) else { return }
                    if segmentFailed { continue }
                }
                held = batch
            case .end(let end):
                guard close(end) else { return }
            }
        }
        // A source without segment ends (an export) ends with its last batch, unless stopped.
        if let last = held {
            held = nil
            if shouldStop() {
                result.interrupted = true
            } else {
                _ = store(last, closing: nil)
            }
        }
    }

    /// Stores a batch with the ledger row of `end` (it is its segment's last), else its own;
    /// false when the run must stop.
    private func store(_ batch: Source.Batch, closing end: Source.End?) -> Bool {
        let ledger = end.flatMap(source.ledger(of:)) ?? source.ledger(of: batch)
        do {
            let stored = try step(samples: source.sampleCount(of: batch), ledger: ledger) { try self.source.store(batch, on: $0) }
            if let stored { source.didStore(batch, stored) }
            return commit(force: false)
        } catch {
            return fail(error, batch: batch, end: end)
        }
    }

    /// A segment's end: its held batch stored with its ledger row, or the row alone; false
    /// when the run must stop.
    private func close(_ end: Source.End) -> Bool {
        if let last = held {
            held = nil
            guard store(last, closing: end) else { return false }
        } else if !segmentFailed, let ledger = source.ledger(of: end) {
            do {
                _ = try step(samples: 0, ledger: ledger) { _ in nil }
                guard commit(force: false) else { return false }
            } catch {
                guard fail(error, batch: nil, end: end) else { return false }
            }
        }
        source.didEnd(end, stored: !segmentFailed)
        segmentFailed = false
        sinceLedger = FileLedger.Totals()
        return true
    }

    /// One step of the open group (opened if none is): `body`, then the ledger row with what
    /// the segment stored since its last one. Nothing of it stays when it throws.
    private func step(samples: Int, ledger: FileLedger.Update?, _ body: (PostgresConnection) throws -> StoredBatch?) throws -> StoredBatch? {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { result.databaseSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        let person = source.person
        let before = sinceLedger
        let firstOfRun = ledger.map { $0.countsAsRun && !counted.contains($0.path) } ?? false
        let stored = try groups.step(samples: samples) { connection -> StoredBatch? in
            let stored = try body(connection)
            if let ledger {
                let totals = FileLedger.Totals(runs: firstOfRun ? 1 : 0, batches: before.batches + (stored?.deliveries ?? 0),
                                               counts: before.counts + (stored?.counts ?? StoreCounts()))
                try FileLedger.write(ledger, person: person, adding: totals, on: connection)
            }
            return stored
        }
        if let stored {
            uncommitted.batches += stored.deliveries
            uncommitted.counts += stored.counts
            sinceLedger.batches += stored.deliveries
            sinceLedger.counts += stored.counts
        }
        if let ledger {
            sinceLedger = FileLedger.Totals()
            if firstOfRun { counted.insert(ledger.path) }
        }
        return stored
    }

    /// Commits the open group when it is due (or whenever one is open, with `force`), and only
    /// then counts its batches; false when the commit failed and the run must stop.
    private func commit(force: Bool) -> Bool {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { result.databaseSeconds += Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        do {
            if try groups.commit(force: force) {
                result.batches += uncommitted.batches
                result.counts += uncommitted.counts
                uncommitted = (0, StoreCounts())
            }
            return true
        } catch {
            uncommitted = (0, StoreCounts())
            source.didFail(error, batch: nil, end: nil, databaseFailed: true)
            result.databaseFailed = true
            result.failure = error
            return false
        }
    }

    /// A step failed: the run stops when the database failed or the source stops on failure;
    /// otherwise the segment fails and the run goes on. False when the run must stop.
    private func fail(_ error: any Error, batch: Source.Batch?, end: Source.End?) -> Bool {
        let databaseFailed = (error as? PostgresError)?.isTransient == true
        source.didFail(error, batch: batch, end: end, databaseFailed: databaseFailed)
        if databaseFailed {
            result.databaseFailed = true
            result.failure = error
            uncommitted = (0, StoreCounts())
            return false
        }
        if source.stopsOnFailure {
            result.failure = error
            return false
        }
        segmentFailed = true
        return true
    }
}
