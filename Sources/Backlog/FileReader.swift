import Foundation
import Hashing
import HealthPayload
import Warehouse

/// A decoded batch of a backlog file, to store in its own savepoint.
public struct FileBatch: Sendable {
    /// The file's index in the files read.
    public var file: Int
    public var content: FileContent
    /// SHA-256 of the body it came from (the delivery's `body_sha256`).
    public var bodySHA256: [UInt8]
}

/// What a body of a backlog file is.
public enum FileContent: Sendable {
    /// A batch of a healthd body.
    case healthd(Batch)
    /// A whole Health Auto Export body (`{"data": …}`: docs/health-auto-export.md), stored in
    /// one step.
    case hae(HAEBody)

    /// Samples it carries, quarantined ones included (a group commits after `BatchGroup.maxSamples`).
    public var sampleCount: Int {
        switch self {
        case .healthd(let batch): return batch.sampleCount
        case .hae(let body): return body.sampleCount
        }
    }
}

/// A file is done: how reading it went, and its ledger row, written with its last batch.
public struct FileEnd: Sendable {
    /// The file's index in the files read.
    public var file: Int
    public var outcome: FileOutcome
    /// Where the file now stands; nil when nothing of it may be claimed (standard input, a
    /// file that failed before anything decoded).
    public var ledger: FileLedger.Update?
}

/// What the reading side hands the storing one, in file order.
public enum BacklogItem: Sendable {
    case batch(FileBatch)
    case end(FileEnd)
}

/// How reading one file went.
public enum FileOutcome: Sendable {
    case ingested, skipped, failed
}

/// What to do with one file, decided from its ledger row before anything is read.
public enum FilePlan: Sendable {
    /// Unchanged since it was read to its end: not opened.
    case skip
    /// Nothing in it yet (an empty file): not opened, not recorded.
    case empty
    /// Read it, from the start or, for an uncompressed JSON-lines or CSV file whose old part
    /// still hashes the same, from where the ledger says it was stored up to.
    case read(previous: FileLedger.Position?)

    /// The plan for `file` given its ledger row (`force`: read it again whatever the row says).
    public static func of(_ file: BacklogFile, previous: FileLedger.Position?, force: Bool) -> FilePlan {
        if file.isStandardInput { return .read(previous: nil) }
        if file.size == 0 && !force { return .empty }
        if !force, let previous, previous.isUnchanged(size: file.size, modified: file.modifiedNanoseconds) { return .skip }
        return .read(previous: force ? nil : previous)
    }
}

extension FileLedger.Position {
    /// True when the file was read to its end and its size and modification time are unchanged.
    func isUnchanged(size: Int64, modified: Int64) -> Bool {
        self.size == size && modifiedNanoseconds == modified && storedBytes == size
    }
}

/// Reads backlog files one after another (on the pipeline's reading thread): bytes →
/// (gunzip) → bodies → decoder, handing batches and each file's end to `send`. Never touches
/// the database.
public struct FileReader {
    static let chunkSize = 1 << 20

    let send: (BacklogItem) -> Bool
    let report: (IngestFailure) -> Void
    let addBytes: (Int) -> Void
    let addProbe: () -> Void
    let shouldStop: () -> Bool
    /// What each point of a Health Auto Export file stands for (a file carries no
    /// `automation-aggregation` header): nil, points in time.
    let haeAggregation: HAEAggregation?

    /// A reader handing items to `send`, failures to `report`, and counting bytes read and probes found.
    public init(send: @escaping (BacklogItem) -> Bool, report: @escaping (IngestFailure) -> Void,
                addBytes: @escaping (Int) -> Void, addProbe: @escaping () -> Void, shouldStop: @escaping () -> Bool,
                haeAggregation: HAEAggregation? = nil) {
        self.send = send
        self.report = report
        self.addBytes = addBytes
        self.addProbe = addProbe
        self.shouldStop = shouldStop
        self.haeAggregation = haeAggregation
    }

    /// Reads `files` in order, each as `plans` says; false when stopped or the storing side
    /// has gone away. `formatOption`: whether `--format` could have named a file's format.
    public func read(_ files: [BacklogFile], plans: [FilePlan], formatOption: Bool) -> Bool {
        for (index, file) in files.enumerated() {
            if shouldStop() { return false }
            if file.format == nil && !file.isStandardInput {
                report(IngestFailure(path: file.displayPath, message: "cannot tell the format from the name: name it .json, .jsonl, .ndjson or .csv (optionally .gz)"
                                     + (formatOption ? ", or pass --format" : "")))
                guard send(.end(FileEnd(file: index, outcome: .failed, ledger: nil))) else { return false }
                continue
            }
            guard read(file, index: index, plan: plans[index]) else { return false }
        }
        return true
    }

    /// Reads one file completely (or until stopped); sends its batches and its end.
    /// Returns false when the storing side has gone away.
    func read(_ file: BacklogFile, index: Int, plan: FilePlan) -> Bool {
        switch plan {
        case .skip, .empty:
            return send(.end(FileEnd(file: index, outcome: .skipped, ledger: nil)))
        case .read(let previous):
            var job = FileJob(reader: self, file: file, index: index)
            return job.run(previous: previous)
        }
    }
}

/// The reading of one file: open it (`openFile`), decide from the ledger where to start (`resumePlan`),
/// then `readLoop` from there.
private struct FileJob: ~Copyable {
    let reader: FileReader
    let file: BacklogFile
    let index: Int
    var fd: Int32 = -1
    var format: BacklogFormat = .json
    /// Bytes [0, frontier.offset) are decoded fine (and sent); the ledger may claim them.
    var frontier = StreamPosition.start
    /// SHA-256 of the file bytes before the frontier (uncompressed JSON lines and CSV), or of
    /// every byte read (whole-file formats).
    var hash = SHA256()
    var failed = false
    var cancelled = false
    var heldFailure = false

    init(reader: FileReader, file: BacklogFile, index: Int) {
        self.reader = reader
        self.file = file
        self.index = index
    }

    /// What `open` learnt about the file.
    struct Opened {
        /// Size and modification time (ns); `Int64.max` and 0 for standard input.
        var size: Int64
        var modified: Int64
        /// Bytes already read from standard input to tell its format.
        var firstChunk: [UInt8]?
    }

    /// Where reading starts, decided from the ledger.
    enum Resume {
        /// From this position (the start, or the end of the part the ledger vouches for).
        case from(StreamPosition)
        /// Nothing new: the ledger row to write, nothing to read.
        case unchanged(FileLedger.Update)
    }

    /// A whole-file format: stored all or nothing as far as the ledger goes.
    var isWhole: Bool { file.compressed || format == .json || file.isStandardInput }

    /// Reads the file (or finds it unchanged) and sends its end; false when the storing side has gone away.
    mutating func run(previous: FileLedger.Position?) -> Bool {
        defer { if fd > 0 { close(fd) } }
        guard let opened = openFile(), let resume = resumePlan(previous, opened) else { return sendEnd(.failed) }
        switch resume {
        case .unchanged(let ledger):
            return sendEnd(.skipped, ledger: ledger)
        case .from(let start):
            return readLoop(from: start, opened)
        }
    }

    /// Sends the file's end.
    private func sendEnd(_ outcome: FileOutcome, ledger: FileLedger.Update? = nil) -> Bool {
        reader.send(.end(FileEnd(file: index, outcome: outcome, ledger: ledger)))
    }

    /// Opens the file, reads its size and time, and settles its format (standard input without
    /// `--format` is sniffed from its first bytes); nil after reporting why not.
    private mutating func openFile() -> Opened? {
        var opened = Opened(size: .max, modified: 0)
        if file.isStandardInput {
            fd = 0
        } else {
            fd = open(file.absolutePath, O_RDONLY | O_CLOEXEC)
            var info = stat()
            guard fd >= 0, fstat(fd, &info) == 0 else {
                fail("cannot read: \(String(cString: strerror(errno)))")
                return nil
            }
            opened.size = Int64(info.st_size)
            opened.modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
        if let known = file.format {
            format = known
        }
        if file.isStandardInput && (file.format == nil || format == .json) {
            // Without --format: `{` starts JSON, anything else is CSV; JSON is one body a line
            // when its first line is a whole object.
            guard let chunk = readChunk(limit: Int64(FileReader.chunkSize)) else { return nil }
            format = FormatSniffer.sniff(chunk, jsonOnly: file.format == .json)
            opened.firstChunk = chunk
        }
        return opened
    }

    /// Where to start: the old part of a grown JSON-lines or CSV file is verified by its hash,
    /// not re-read; a whole file of the same size and hash is only touched. Nil after reporting a read error.
    private mutating func resumePlan(_ previous: FileLedger.Position?, _ opened: Opened) -> Resume? {
        guard let previous, !file.isStandardInput else { return .from(.start) }
        let size = opened.size
        if !isWhole {
            guard size >= previous.storedBytes, previous.storedBytes > 0 else { return .from(.start) }
            guard hashPrefix(previous.storedBytes) else { return nil }
            if hash.digest() == previous.sha256 && (format != .csv || size == previous.storedBytes || startsWithHeader(at: previous.storedBytes)) {
                let start = StreamPosition(offset: previous.storedBytes, line: previous.storedLines + 1, records: previous.storedRecords)
                // Touched, not changed: remember the new time so the next run skips it unread.
                if size == previous.storedBytes { return .unchanged(ledgerUpdate(opened, at: start, countsAsRun: false)) }
                return .from(start)
            }
            // Rewritten, or CSV rows appended without a header row of their own (they belong
            // to the body before them): read the file from the start.
        } else {
            guard size == previous.size, previous.storedBytes == previous.size else { return .from(.start) }
            // Same size, new time: the same bytes, or a rewrite? The hash decides before anything is stored.
            guard hashPrefix(size) else { return nil }
            if hash.digest() == previous.sha256 {
                return .unchanged(ledgerUpdate(opened, at: StreamPosition(offset: size, line: 1, records: 0), countsAsRun: false))
            }
        }
        hash = SHA256()
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            fail("cannot read: \(String(cString: strerror(errno)))")
            return nil
        }
        return .from(.start)
    }

    /// Reads from `start` to the end: chunks → (inflate) → split into bodies → decode → send;
    /// then the file's end with its ledger row. False when stopped or the storing side has gone away.
    private mutating func readLoop(from start: StreamPosition, _ opened: Opened) -> Bool {
        frontier = start
        var splitter: any BodySplitter
        switch format {
        case .json: splitter = WholeBodySplitter()
        case .jsonLines: splitter = JSONLinesSplitter(from: start)
        case .csv: splitter = CSVBodySplitter(from: start, mayGrow: !file.compressed && !file.isStandardInput)
        }
        let inflater: GzipInflater?
        do {
            inflater = file.compressed ? try GzipInflater() : nil
        } catch {
            fail(error.message)
            return sendEnd(.failed)
        }
        var remaining = opened.size == .max ? Int64.max : opened.size - start.offset
        var pendingChunk = opened.firstChunk
        do {
            while !cancelled && splitter.failure == nil {
                if reader.shouldStop() { return false }
                let chunk: [UInt8]
                if let first = pendingChunk {
                    chunk = first
                    pendingChunk = nil
                } else {
                    guard remaining > 0, let next = readChunk(limit: min(remaining, Int64(FileReader.chunkSize))) else { break }
                    chunk = next
                }
                if chunk.isEmpty { break }
                remaining -= Int64(chunk.count)
                if isWhole { hash.update(chunk) }
                try chunk.withUnsafeBytes { raw in
                    if let inflater {
                        try inflater.inflate(raw) { out in try splitter.feed(out) { try handle($0) } }
                    } else {
                        try splitter.feed(raw) { try handle($0) }
                    }
                }
            }
            if cancelled { return false }
            if heldFailure { throw HeldFailure() }
            if let failure = splitter.failure { throw BacklogError(failure) }
            try inflater?.finish()
            try splitter.finish { try handle($0) }
        } catch let error as BacklogError {
            fail(error.message)
        } catch is HeldFailure {
            // A read error was already reported.
        } catch is Cancelled {
            return false
        } catch {
            fail("\(error)")
        }
        if cancelled { return false }

        var ledger: FileLedger.Update?
        if !file.isStandardInput {
            if isWhole {
                if !failed { ledger = ledgerUpdate(opened, at: StreamPosition(offset: opened.size, line: 1, records: 0), countsAsRun: true) }
            } else if !failed || frontier.offset > start.offset {
                ledger = ledgerUpdate(opened, at: frontier, countsAsRun: true)
            }
        }
        return sendEnd(failed ? .failed : .ingested, ledger: ledger)
    }

    private struct HeldFailure: Error {}
    private struct Cancelled: Error {}

    private func ledgerUpdate(_ opened: Opened, at position: StreamPosition, countsAsRun: Bool) -> FileLedger.Update {
        FileLedger.Update(path: file.absolutePath,
                          position: FileLedger.Position(format: format.ledgerFormat, compressed: file.compressed, size: opened.size,
                                                        modifiedNanoseconds: opened.modified, storedBytes: position.offset,
                                                        storedLines: position.line - 1, storedRecords: position.records,
                                                        sha256: hash.digest()),
                          countsAsRun: countsAsRun)
    }

    /// Decodes a unit's bodies and sends their batches; moves the frontier over what decoded.
    private mutating func handle(_ unit: BodyUnit) throws {
        if unit.segments.allSatisfy(\.isBlank) {
            for segment in unit.segments { advance(over: segment, in: unit) }
            return
        }
        let unfinished = unit.segments.last?.isUnfinished == true
        if unit.decodeWhole && !unfinished {
            if let first = unit.segments.first, decode(unit.bytes[...], at: first, reportFailure: unit.segments.count == 1) {
                for segment in unit.segments { advance(over: segment, in: unit) }
                return
            }
            if unit.segments.count == 1 { return }
        }
        // One body at a time: every line of a JSON-lines file, or the appended CSV bodies of a
        // unit that failed as a whole, so the good ones are stored and the bad one is named.
        for segment in unit.segments {
            if cancelled { throw Cancelled() }
            if segment.isBlank {
                advance(over: segment, in: unit)
                continue
            }
            if let unfinished = segment.unfinished {
                fail(unfinished.message)
                continue
            }
            if decode(unit.bytes[segment.body], at: segment, reportFailure: true) {
                advance(over: segment, in: unit)
            }
        }
    }

    /// Decodes one body; sends its batches. False (and reported when asked) when it cannot be accepted.
    private mutating func decode(_ body: ArraySlice<UInt8>, at segment: BodySegment, reportFailure: Bool) -> Bool {
        let bytes = Array(body)
        if format != .csv && HAEDecoder.isHAEBody(bytes) { return decodeHAE(bytes, reportFailure: reportFailure) }
        do {
            switch try PayloadDecoder.decode(bytes, format: format.payloadFormat) {
            case .probe:
                reader.addProbe()
            case .batches(let batches):
                let sha = SHA256.hash(bytes)
                for batch in batches where !cancelled {
                    if !reader.send(.batch(FileBatch(file: index, content: .healthd(batch), bodySHA256: sha))) { cancelled = true }
                }
            }
            return true
        } catch {
            // The decoder counts from the body's start; a failure is named in the file's own numbers.
            if reportFailure { fail(format == .json ? error.message : error.shifted(by: segment.start.payloadStart, format: format.payloadFormat).message) }
            return false
        }
    }

    /// Decodes a Health Auto Export body (`{"data": …}`) and sends it whole. False (and
    /// reported when asked) when its frame is refused.
    private mutating func decodeHAE(_ bytes: [UInt8], reportFailure: Bool) -> Bool {
        do {
            let body = try HAEDecoder.decode(bytes, aggregation: reader.haeAggregation?.rawValue)
            if !reader.send(.batch(FileBatch(file: index, content: .hae(body), bodySHA256: SHA256.hash(bytes)))) { cancelled = true }
            return true
        } catch {
            if reportFailure { fail("not a Health Auto Export body: \(error)") }
            return false
        }
    }

    /// The frontier moves over a segment only while nothing before it failed.
    private mutating func advance(over segment: BodySegment, in unit: BodyUnit) {
        guard !failed, !isWhole else { return }
        hash.update(unit.bytes[segment.range])
        frontier = segment.end
    }

    private mutating func fail(_ message: String) {
        failed = true
        reader.report(IngestFailure(path: file.displayPath, message: message))
    }

    /// Reads up to `limit` bytes; nil after reporting a read error; empty at the end.
    private mutating func readChunk(limit: Int64) -> [UInt8]? {
        let want = Int(min(limit, Int64(FileReader.chunkSize)))
        var buffer = [UInt8](repeating: 0, count: want)
        var filled = 0
        while filled < want {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, want - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                fail("cannot read: \(String(cString: strerror(errno)))")
                heldFailure = true
                return nil
            }
            if n == 0 { break }
            filled += n
        }
        buffer.removeLast(want - filled)
        reader.addBytes(filled)
        return buffer
    }

    /// True when the file has a CSV header row (`schemaVersion,…`) at `offset`.
    private func startsWithHeader(at offset: Int64) -> Bool {
        let name = Array("schemaVersion".utf8)
        var bytes = [UInt8](repeating: 0, count: name.count + 1)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard n >= name.count, Array(bytes[0..<name.count]) == name else { return false }
        return n == name.count || bytes[name.count] == UInt8(ascii: ",") || bytes[name.count] == 0x0A || bytes[name.count] == 0x0D
    }

    /// Feeds the first `count` bytes of the file to the hash; false after a read error.
    private mutating func hashPrefix(_ count: Int64) -> Bool {
        var left = count
        while left > 0 {
            guard let chunk = readChunk(limit: left) else { return false }
            if chunk.isEmpty {
                fail("cannot read: the file shrank while it was read")
                return false
            }
            hash.update(chunk)
            left -= Int64(chunk.count)
        }
        return true
    }
}

extension StreamPosition {
    /// What comes before this position, as the decoder's locations count it.
    var payloadStart: PayloadLocation.Start {
        PayloadLocation.Start(records: Int(records), lines: Int(line - 1), bytes: Int(offset))
    }
}
