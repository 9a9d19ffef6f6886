import Foundation
import HealthPayload
import Postgres
import Synchronization
import Warehouse

/// Loads backlog files into the warehouse through the receiver's pipeline: the same decoder,
/// the same `BatchStore` call, delivery rows with origin `file`.
///
/// One thread reads and decodes (files in order, bodies in order); the calling thread stores,
/// so reading overlaps the database's work. Batches are stored in groups (`BatchGroup`): a
/// few of them per transaction, committed asynchronously, the rollups refreshed once per
/// commit, each batch in a savepoint of its own. A file's ledger row is written in the same
/// transaction as its last batch: a crash (of this process or of the server) can leave
/// batches stored that the ledger does not claim (a re-run stores them again as duplicates),
/// never the reverse.
public final class Ingester: Sendable {
    let pool: PostgresPool
    let options: IngestOptions

    /// An ingester storing through `pool` (one connection is used).
    public init(pool: PostgresPool, options: IngestOptions) {
        self.pool = pool
        self.options = options
    }

    /// Ingests `paths` (files, folders, `-`) and returns what happened.
    ///
    /// - Parameters:
    ///   - shouldStop: checked between batches; true stops the run cleanly (`interrupted`).
    ///   - onFailure: called as each failure is found, from either thread.
    ///   - onProgress: called after each batch and file, from the storing thread.
    public func run(_ paths: [String], shouldStop: @escaping @Sendable () -> Bool = { false },
                    onFailure: @escaping @Sendable (IngestFailure) -> Void = { _ in },
                    onProgress: @escaping @Sendable (IngestProgress) -> Void = { _ in }) -> IngestSummary {
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        var summary = IngestSummary()
        let failures = Mutex<[IngestFailure]>([])
        let report: @Sendable (IngestFailure) -> Void = { failure in
            failures.withLock { $0.append(failure) }
            onFailure(failure)
        }
        let (files, walkFailures) = BacklogWalker.walk(paths, format: options.format)
        for failure in walkFailures { report(IngestFailure(path: failure.path, message: failure.error.message)) }
        summary.filesSeen = files.count + walkFailures.count
        summary.filesFailed = walkFailures.count

        // The ledger, read once: unchanged files are decided here without opening them.
        let ledger: [String: LedgerEntry]
        do {
            ledger = files.contains(where: { !$0.isStandardInput })
                ? try pool.withConnection { try IngestLedger.load(person: options.person, on: $0) } : [:]
        } catch {
            report(IngestFailure(path: "", message: "database: \(error)"))
            summary.aborted = true
            summary.failures = failures.withLock { $0 }
            summary.seconds = elapsed()
            return summary
        }
        var plans: [FilePlan] = []
        var bytesTotal: Int64 = 0
        for file in files {
            let previous = ledger[file.absolutePath]
            if file.isStandardInput {
                plans.append(.read(previous: nil))
            } else if file.size == 0 && !options.force {
                plans.append(.empty)
            } else if !options.force, let previous, previous.isUnchanged(size: file.size, modified: file.modifiedNanoseconds) {
                plans.append(.skip)
            } else {
                plans.append(.read(previous: options.force ? nil : previous))
                bytesTotal += file.size
            }
        }

        let queue = WorkQueue<WorkItem>(capacity: 8)
        let bytesDone = Atomic<Int64>(0)
        let probes = Atomic<Int>(0)
        let stopReading = Atomic<Bool>(false)
        let readerStopped = Atomic<Bool>(false)
        let person = options.person
        let readerDone = DispatchSemaphore(value: 0)
        let unknownFormat = options.format == nil
        let readPlans = plans
        let thread = Thread {
            let reader = FileReader(
                person: person, send: { queue.put($0) }, report: report,
                addBytes: { bytesDone.add(Int64($0), ordering: .relaxed) },
                addProbe: { probes.add(1, ordering: .relaxed) },
                shouldStop: { stopReading.load(ordering: .relaxed) || shouldStop() })
            for (index, file) in files.enumerated() {
                if stopReading.load(ordering: .relaxed) || shouldStop() {
                    readerStopped.store(true, ordering: .relaxed)
                    break
                }
                if file.format == nil && !file.isStandardInput {
                    report(IngestFailure(path: file.displayPath, message: "cannot tell the format from the name: name it .json, .jsonl, .ndjson or .csv (optionally .gz)"
                                         + (unknownFormat ? ", or pass --format" : "")))
                    guard queue.put(.fileEnd(file: index, outcome: .failed, ledger: nil)) else { break }
                    continue
                }
                guard reader.read(file, index: index, plan: readPlans[index]) else {
                    readerStopped.store(true, ordering: .relaxed)
                    break
                }
            }
            queue.finish()
            readerDone.signal()
        }
        thread.name = "ingest-reader"
        thread.stackSize = 4 << 20
        thread.start()

        // Store in order; the last batch of a file carries the file's ledger row.
        let store = Storer(pool: pool, person: person)
        defer { store.rollback() }
        var held: (file: Int, batch: Batch, sha: [UInt8])?
        var fileBatches = 0
        var fileCounts = StoreCounts()
        var fileBroken = false  // a batch of the current file failed to store
        var filesDone = 0
        func progress() {
            onProgress(IngestProgress(filesDone: filesDone, filesTotal: files.count, samples: summary.samples + store.uncommitted.counts.samples,
                                      bytesDone: bytesDone.load(ordering: .relaxed), bytesTotal: bytesTotal, seconds: elapsed()))
        }
        /// Commits the open group when it is due (or `force`), and only then counts its
        /// batches as stored; false when the commit failed and the run must stop.
        func commit(force: Bool) -> Bool {
            let storeStarted = DispatchTime.now().uptimeNanoseconds
            defer { summary.databaseSeconds += Double(DispatchTime.now().uptimeNanoseconds - storeStarted) / 1e9 }
            do {
                if let committed = try store.commit(force: force) {
                    summary.batches += committed.batches
                    summary.add(committed.counts)
                }
                return true
            } catch {
                report(IngestFailure(path: "", message: "database: \(error); stopped, run again to go on"))
                summary.aborted = true
                return false
            }
        }
        /// Stores one batch (with the ledger row when given); false when the run must stop.
        func storeBatch(_ item: (file: Int, batch: Batch, sha: [UInt8]), ledger: LedgerUpdate?) -> Bool {
            let file = files[item.file]
            let storeStarted = DispatchTime.now().uptimeNanoseconds
            defer { summary.databaseSeconds += Double(DispatchTime.now().uptimeNanoseconds - storeStarted) / 1e9 }
            do {
                let counts = try store.store(item.batch, file: file.absolutePath, sha: item.sha, ledger: ledger,
                                             fileBatches: fileBatches, fileCounts: fileCounts)
                fileBatches += 1
                fileCounts = fileCounts.adding(counts)
                progress()
                return commit(force: false)
            } catch let error as PostgresError where error.isTransient {
                report(IngestFailure(path: file.displayPath, message: "database: \(error); stopped, run again to go on"))
                summary.aborted = true
                fileBroken = true
                return false
            } catch {
                report(IngestFailure(path: file.displayPath, message: "could not store batch \(item.batch.envelope.batchSequence) of export \(item.batch.envelope.exportId): \(error)"))
                fileBroken = true
                return true
            }
        }

        consuming: while let item = queue.take() {
            if shouldStop() {
                summary.interrupted = true
                break consuming
            }
            switch item {
            case .batch(let file, let batch, let sha):
                if fileBroken { continue }
                if let previous = held {
                    held = nil
                    if !storeBatch(previous, ledger: nil) { break consuming }
                    if fileBroken { continue }
                }
                held = (file, batch, sha)
            case .fileEnd(let file, let outcome, let ledger):
                var outcome = outcome
                if let last = held {
                    held = nil
                    if !storeBatch(last, ledger: fileBroken ? nil : ledger) { break consuming }
                } else if let ledger, !fileBroken {
                    do {
                        try store.writeLedger(ledger, fileBatches: fileBatches, fileCounts: fileCounts)
                        if !commit(force: false) { break consuming }
                    } catch let error as PostgresError where error.isTransient {
                        report(IngestFailure(path: files[file].displayPath, message: "database: \(error); stopped, run again to go on"))
                        summary.aborted = true
                        break consuming
                    } catch {
                        report(IngestFailure(path: files[file].displayPath, message: "could not record the file in the ledger: \(error)"))
                        fileBroken = true
                    }
                }
                if fileBroken { outcome = .failed }
                switch outcome {
                case .ingested: summary.filesIngested += 1
                case .skipped: summary.filesSkipped += 1
                case .failed: summary.filesFailed += 1
                }
                filesDone += 1
                fileBatches = 0
                fileCounts = StoreCounts()
                fileBroken = false
                progress()
            }
        }
        // What the open group holds is whole batches (and the ledger rows of whole files):
        // commit it, unless the database failed under it.
        if summary.aborted {
            store.rollback()
        } else {
            _ = commit(force: true)
        }
        if summary.aborted || summary.interrupted {
            stopReading.store(true, ordering: .relaxed)
            queue.close()
        }
        readerDone.wait()
        if readerStopped.load(ordering: .relaxed) && !summary.aborted { summary.interrupted = true }
        if summary.aborted && !failures.withLock({ $0.isEmpty }) {
            summary.filesFailed += 1  // the file the database failed under
        }
        summary.probes = probes.load(ordering: .relaxed)
        summary.failures = failures.withLock { $0 }
        summary.seconds = elapsed()
        return summary
    }
}

/// The storing side: batches grouped into transactions, each group on a pooled connection
/// (`BatchGroup`).
final class Storer {
    let person: String
    private let groups: PooledBatchGroups
    /// Batches stored in the open group, not yet committed.
    private(set) var uncommitted = (batches: 0, counts: StoreCounts())

    init(pool: PostgresPool, person: String) {
        self.person = person
        groups = PooledBatchGroups(pool: pool, person: person)
    }

    /// Stores a batch with `BatchStore`'s own call (the receiver's), and the ledger row in the
    /// same transaction, in the open group.
    func store(_ batch: Batch, file: String, sha: [UInt8], ledger: LedgerUpdate?, fileBatches: Int, fileCounts: StoreCounts) throws -> StoreCounts {
        let counts = try groups.step(samples: batch.sampleCount) { connection in
            let counts = try BatchStore.store(batch, person: person, origin: .file(path: file), bodySHA256: sha, on: connection)
            if let ledger {
                try IngestLedger.write(ledger, person: person, batches: fileBatches + 1, counts: fileCounts.adding(counts), on: connection)
            }
            return counts
        }
        uncommitted.batches += 1
        uncommitted.counts = uncommitted.counts.adding(counts)
        return counts
    }

    /// Writes a ledger row alone (a file of probes or blank lines, or one only touched).
    func writeLedger(_ ledger: LedgerUpdate, fileBatches: Int, fileCounts: StoreCounts) throws {
        try groups.step { connection in
            try IngestLedger.write(ledger, person: person, batches: fileBatches, counts: fileCounts, on: connection)
        }
    }

    /// Commits the open group when it is due, or whenever one is open with `force`; returns
    /// what it committed, or nil when nothing was.
    func commit(force: Bool) throws -> (batches: Int, counts: StoreCounts)? {
        let committed = uncommitted
        guard try groups.commit(force: force) else { return nil }
        uncommitted = (0, StoreCounts())
        return committed
    }

    /// Drops the open group (after the database failed under it, or at the end of a run).
    func rollback() {
        groups.rollback()
        uncommitted = (0, StoreCounts())
    }
}

extension StoreCounts {
    func adding(_ other: StoreCounts) -> StoreCounts {
        StoreCounts(samples: samples + other.samples, inserted: inserted + other.inserted, duplicates: duplicates + other.duplicates,
                    replaced: replaced + other.replaced, quarantined: quarantined + other.quarantined)
    }
}

extension IngestSummary {
    mutating func add(_ counts: StoreCounts) {
        samples += counts.samples
        inserted += counts.inserted
        duplicates += counts.duplicates
        replaced += counts.replaced
        quarantined += counts.quarantined
    }
}
