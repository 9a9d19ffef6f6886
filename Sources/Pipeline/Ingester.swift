import Backlog
import Dispatch
import HealthPayload
import Postgres
import Synchronization
import Warehouse

/// `ingest`: backlog files through the one pipeline. A batch is a healthd body's batch, stored
/// by the receiver's own call (`BatchStore`, delivery origin `file` with the file's path); a
/// segment is a file, its ledger row written with its last batch. A crash (of this process or
/// of the server) can leave batches stored that the ledger does not claim (a re-run stores them
/// again as duplicates), never the reverse.
public final class Ingester: Sendable {
    let pool: PostgresPool
    let options: IngestOptions

    /// An ingester storing through `pool` (one connection at a time).
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
        let failures = Mutex<[IngestFailure]>([])
        let report: @Sendable (IngestFailure) -> Void = { failure in
            failures.withLock { $0.append(failure) }
            onFailure(failure)
        }
        var summary = IngestSummary()
        func done() -> IngestSummary {
            summary.probes = source?.probes.load(ordering: .relaxed) ?? 0
            summary.failures = failures.withLock { $0 }
            summary.seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            return summary
        }
        var source: BacklogSource?
        let (files, walkFailures) = BacklogWalker.walk(paths, format: options.format)
        for failure in walkFailures { report(IngestFailure(path: failure.path, message: failure.error.message)) }
        summary.filesSeen = files.count + walkFailures.count
        summary.filesFailed = walkFailures.count

        // The ledger, read once: unchanged files are decided here without opening them.
        let ledger: [String: FileLedger.Position]
        do {
            ledger = files.contains(where: { !$0.isStandardInput })
                ? try pool.withConnection { try FileLedger.rows(person: options.person, on: $0) } : [:]
        } catch {
            report(IngestFailure(path: "", message: "database: \(error)"))
            summary.aborted = true
            return done()
        }
        let plans = files.map { FilePlan.of($0, previous: ledger[$0.absolutePath], force: options.force) }
        let backlog = BacklogSource(options: options, files: files, plans: plans, report: report, onProgress: onProgress, started: started)
        source = backlog
        let result = Pipeline(source: backlog, pool: pool).run(shouldStop: shouldStop)
        summary.take(result, backlog.tally.withLock { $0 })
        // The file the database failed under.
        if result.databaseFailed && !failures.withLock({ $0.isEmpty }) { summary.filesFailed += 1 }
        return done()
    }
}

/// Backlog files as a `BatchSource`: read by `FileReader`, each batch stored with `BatchStore`.
final class BacklogSource: BatchSource {
    let person: String
    let stopsOnFailure = false
    let options: IngestOptions
    let files: [BacklogFile]
    let plans: [FilePlan]
    let report: @Sendable (IngestFailure) -> Void
    let onProgress: @Sendable (IngestProgress) -> Void
    let started: UInt64
    let bytesTotal: Int64
    let bytesDone = Atomic<Int64>(0)
    let probes = Atomic<Int>(0)
    /// Files by outcome, and samples stored so far (committed or not): the storing thread's.
    let tally = Mutex(FileTally())

    init(options: IngestOptions, files: [BacklogFile], plans: [FilePlan], report: @escaping @Sendable (IngestFailure) -> Void,
         onProgress: @escaping @Sendable (IngestProgress) -> Void, started: UInt64) {
        person = options.person
        self.options = options
        self.files = files
        self.plans = plans
        self.report = report
        self.onProgress = onProgress
        self.started = started
        bytesTotal = zip(files, plans).reduce(0) { total, pair in
            if case .read = pair.1, !pair.0.isStandardInput { return total + pair.0.size }
            return total
        }
    }

    func read(_ send: @escaping (SourceItem<FileBatch, FileEnd>) -> Bool, shouldStop: @escaping () -> Bool) -> Bool {
        let reader = FileReader(
            send: { item in
                switch item {
                case .batch(let batch): return send(.batch(batch))
                case .end(let end): return send(.end(end))
                }
            },
            report: report, addBytes: { self.bytesDone.add(Int64($0), ordering: .relaxed) },
            addProbe: { self.probes.add(1, ordering: .relaxed) }, shouldStop: shouldStop, haeAggregation: options.haeAggregation)
        return reader.read(files, plans: plans, formatOption: options.format == nil)
    }

    func sampleCount(of batch: FileBatch) -> Int { batch.content.sampleCount }
    func ledger(of batch: FileBatch) -> FileLedger.Update? { nil }
    func ledger(of end: FileEnd) -> FileLedger.Update? { end.ledger }

    func store(_ batch: FileBatch, on connection: PostgresConnection) throws -> StoredBatch {
        let path = files[batch.file].absolutePath
        switch batch.content {
        case .healthd(let healthd):
            let counts = try BatchStore.store(healthd, person: person, origin: .file(path: path), bodySHA256: batch.bodySHA256,
                                              deferRollups: true, on: connection)
            return StoredBatch(deliveries: 1, counts: counts)
        case .hae(let body):
            var counts = try HAEStore.store(body, person: person, file: path, bodySHA256: batch.bodySHA256, deferRollups: true,
                                            on: connection).samples
            // A twin held of a way in that wins is held already: a duplicate, as POST /hae answers it.
            counts.duplicates += counts.matched
            counts.matched = 0
            return StoredBatch(deliveries: 1, counts: counts)
        }
    }

    func didStore(_ batch: FileBatch, _ stored: StoredBatch) {
        tally.withLock { $0.samples += stored.counts.samples }
        progress()
    }

    func didEnd(_ end: FileEnd, stored: Bool) {
        tally.withLock { $0.count(stored ? end.outcome : .failed) }
        progress()
    }

    func didFail(_ error: any Error, batch: FileBatch?, end: FileEnd?, databaseFailed: Bool) {
        let file = (batch?.file ?? end?.file).map { files[$0].displayPath } ?? ""
        if databaseFailed {
            report(IngestFailure(path: file, message: "database: \(error); stopped, run again to go on"))
        } else if let batch {
            switch batch.content {
            case .healthd(let healthd):
                let envelope = healthd.envelope
                report(IngestFailure(path: file, message: "could not store batch \(envelope.batchSequence) of export \(envelope.exportId): \(error)"))
            case .hae:
                report(IngestFailure(path: file, message: "could not store the Health Auto Export body: \(error)"))
            }
        } else {
            report(IngestFailure(path: file, message: "could not record the file in the ledger: \(error)"))
        }
    }

    private func progress() {
        let (done, samples) = tally.withLock { ($0.done, $0.samples) }
        onProgress(IngestProgress(filesDone: done, filesTotal: files.count, samples: samples, bytesDone: bytesDone.load(ordering: .relaxed),
                                  bytesTotal: bytesTotal, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9))
    }
}

/// Files by outcome, and the samples stored so far.
struct FileTally: Sendable {
    var ingested = 0
    var skipped = 0
    var failed = 0
    var samples = 0
    var done: Int { ingested + skipped + failed }

    mutating func count(_ outcome: FileOutcome) {
        switch outcome {
        case .ingested: ingested += 1
        case .skipped: skipped += 1
        case .failed: failed += 1
        }
    }
}

extension IngestSummary {
    /// Takes the pipeline's totals and the files' outcomes.
    mutating func take(_ result: PipelineResult, _ tally: FileTally) {
        batches = result.batches
        samples = result.counts.samples
        inserted = result.counts.inserted
        duplicates = result.counts.duplicates
        replaced = result.counts.replaced
        quarantined = result.counts.quarantined
        databaseSeconds = result.databaseSeconds
        interrupted = result.interrupted
        aborted = result.databaseFailed
        filesIngested = tally.ingested
        filesSkipped = tally.skipped
        filesFailed += tally.failed
    }
}
