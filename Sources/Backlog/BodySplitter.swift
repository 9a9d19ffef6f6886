import Foundation
import HealthPayload

/// A position in a file's byte stream: the 1-based line there, and the CSV records before it.
struct StreamPosition: Sendable, Equatable {
    /// Byte offset in the (decompressed) stream.
    var offset: Int64
    /// 1-based line number of the byte at `offset`.
    var line: Int64
    /// CSV records that end before `offset`.
    var records: Int64

    static let start = StreamPosition(offset: 0, line: 1, records: 0)
}

/// One body (or, in CSV, one body as appended) inside a unit.
struct BodySegment: Sendable {
    /// Bytes of the unit that make up the segment, terminators included; segments of a unit tile it.
    var range: Range<Int>
    /// The bytes to decode (a JSON line without its line end).
    var body: Range<Int>
    /// Where the segment starts and where the next one starts.
    var start: StreamPosition
    var end: StreamPosition
    /// Nothing to decode: an empty or all-blank line.
    var isBlank: Bool
    /// An unterminated last CSV record in a file that may still grow: not decoded (a row cut
    /// short can still parse, with a value cut short), named, and read again next time.
    var unfinished: UnfinishedRecord?
    var isUnfinished: Bool { unfinished != nil }
}

/// The last record of a CSV file that has no line end.
struct UnfinishedRecord: Sendable {
    var record: Int64
    var line: Int64
    /// The file ends inside a quoted field.
    var inQuotes: Bool

    var message: String {
        "record \(record) (line \(line)): " + (inQuotes ? "unterminated quoted field at the end of the file" : "the last record has no line end")
            + " (if the file is still being written, the next run reads it again)"
    }
}

/// Bytes cut out of a file's stream at body boundaries, decoded together or segment by segment.
struct BodyUnit: Sendable {
    var bytes: [UInt8]
    var segments: [BodySegment]
    /// CSV: decode the whole unit at once (rows grouped into the batches they state across the
    /// bodies in it), falling back to one segment at a time if that fails.
    var decodeWhole: Bool
}

/// Cuts a byte stream into units; `feed` chunks in order, then `finish`. A stream that cannot
/// be healthd bodies (one too large) sets `failure` and emits nothing more.
protocol BodySplitter {
    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (BodyUnit) throws -> Void) rethrows
    mutating func finish(_ emit: (BodyUnit) throws -> Void) rethrows
    /// Why the stream cannot be cut into bodies, once known.
    var failure: String? { get }
}

/// What a backlog body may be: healthd bodies stay under 1 MB; these only stop a wrong or
/// hostile file from eating memory (the decoder bounds what a body expands to).
enum BodyLimits {
    /// The largest body: a `.json` file, or one CSV body (a header row and the rows up to the next).
    static let maxBodyBytes = 256 << 20
    /// The longest CSV record (a healthd row is well under 1 KB).
    static let maxRecordBytes = 16 << 20
}

/// `.json`: the whole stream is one body.
struct WholeBodySplitter: BodySplitter {
    private var bytes: [UInt8] = []
    private(set) var failure: String?

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil else { return }
        if bytes.count + chunk.count > BodyLimits.maxBodyBytes {
            failure = "larger than \(BodyLimits.maxBodyBytes >> 20) MiB: not one healthd body (a .json file holds one body; use .jsonl for one a line)"
            bytes = []
            return
        }
        bytes.append(contentsOf: chunk)
    }

    mutating func finish(_ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil, !bytes.isEmpty else { return }
        let lines = Int64(bytes.lazy.filter { $0 == 0x0A }.count)
        let end = StreamPosition(offset: Int64(bytes.count), line: 1 + lines, records: 0)
        let blank = bytes.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let segment = BodySegment(range: 0..<bytes.count, body: 0..<bytes.count, start: .start, end: end, isBlank: blank && !bytes.isEmpty)
        try emit(BodyUnit(bytes: bytes, segments: [segment], decodeWhole: true))
        bytes = []
    }
}

/// `.jsonl`/`.ndjson`: one body a line; every chunk's complete lines leave as one unit.
struct JSONLinesSplitter: BodySplitter {
    private var buffer: [UInt8] = []
    private var position: StreamPosition
    private(set) var failure: String?

    init(from position: StreamPosition) {
        self.position = position
    }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil else { return }
        let scanFrom = buffer.count
        buffer.append(contentsOf: chunk)
        var segments: [BodySegment] = []
        var lineStart = 0
        buffer.withUnsafeBufferPointer { b in
            var i = scanFrom
            while i < b.count {
                guard let hit = memchr(b.baseAddress! + i, 0x0A, b.count - i) else { break }
                let lf = b.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                segments.append(segment(b, lineStart..<(lf + 1)))
                lineStart = lf + 1
                i = lf + 1
            }
        }
        guard !segments.isEmpty else {
            if buffer.count > BodyLimits.maxBodyBytes {
                failure = "line \(position.line) is longer than \(BodyLimits.maxBodyBytes >> 20) MiB: not one healthd body"
                buffer = []
            }
            return
        }
        let bytes = Array(buffer[0..<lineStart])
        buffer.removeFirst(lineStart)
        try emit(BodyUnit(bytes: bytes, segments: segments, decodeWhole: false))
    }

    mutating func finish(_ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil, !buffer.isEmpty else { return }
        let bytes = buffer
        buffer = []
        let last = bytes.withUnsafeBufferPointer { segment($0, 0..<$0.count) }
        try emit(BodyUnit(bytes: bytes, segments: [last], decodeWhole: false))
    }

    private mutating func segment(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> BodySegment {
        var bodyEnd = range.upperBound
        if bodyEnd > range.lowerBound && b[bodyEnd - 1] == 0x0A { bodyEnd -= 1 }
        if bodyEnd > range.lowerBound && b[bodyEnd - 1] == 0x0D { bodyEnd -= 1 }
        var blank = true
        for i in range.lowerBound..<bodyEnd where !(b[i] == 0x20 || b[i] == 0x09) {
            blank = false
            break
        }
        let start = position
        let terminated = range.upperBound > range.lowerBound && b[range.upperBound - 1] == 0x0A
        position = StreamPosition(offset: start.offset + Int64(range.count), line: start.line + (terminated ? 1 : 0), records: 0)
        return BodySegment(range: range, body: range.lowerBound..<bodyEnd, start: start, end: position, isBlank: blank)
    }
}

/// `.csv`: bodies appended one after another, each led by its header row.
///
/// Finds record boundaries with `HealthPayload`'s own RFC 4180 scanner (`CSVScanner`, not
/// validating: a malformed record is left for the decoder to name), so records and lines are
/// counted as the decoder counts them and its `record N (line L)` can be turned into the file's
/// own numbers. A record whose first field is `schemaVersion` starts a new segment (a data row
/// starts with `1`). Consecutive segments with the same header leave together as one unit, up
/// to `unitBudget` bytes, so rows are grouped into the batches they state across appended bodies;
/// but a segment whose bytes are those of one waiting is a batch the app sent again (a retry is
/// the identical bytes) and starts a unit of its own: a delivery of its own, as over HTTP.
struct CSVBodySplitter: BodySplitter {
    static let unitBudget = 4 << 20

    private var buffer: [UInt8] = []
    /// Stream offset of `buffer[0]`.
    private var bufferStart: Int64
    /// Record boundaries, its offsets into `buffer`; it counts the stream's records and lines.
    private var scanner: CSVScanner
    /// Open segment: start position and header bytes.
    private var segmentStart: StreamPosition
    private var segmentHeader: [UInt8]?
    /// Closed segments waiting to leave as one unit (all share `pendingHeader`).
    private var pending: [BodySegment] = []
    private var pendingHeader: [UInt8]?
    private let mayGrow: Bool
    /// The unterminated last record, when the file may still grow.
    private var unfinished: UnfinishedRecord?
    private(set) var failure: String?

    /// - Parameter mayGrow: an uncompressed file that may still be written to: an unterminated
    ///   last record is left for the next run instead of decoded.
    init(from position: StreamPosition, mayGrow: Bool) {
        bufferStart = position.offset
        scanner = CSVScanner(line: Int(position.line), records: Int(position.records), validating: false)
        segmentStart = position
        self.mayGrow = mayGrow
    }

    /// Where the scanner stands, in the stream.
    private var position: StreamPosition {
        StreamPosition(offset: bufferStart + Int64(scanner.offset), line: Int64(scanner.line), records: Int64(scanner.recordNumber))
    }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil else { return }
        buffer.append(contentsOf: chunk)
        try scan(isFinal: false, emit)
        guard failure == nil else { return }
        let open = bufferStart + Int64(buffer.count)
        if open - position.offset > Int64(BodyLimits.maxRecordBytes) {
            fail("record \(scanner.recordNumber + 1) (line \(scanner.line)) is longer than \(BodyLimits.maxRecordBytes >> 20) MiB: "
                 + "not a healthd row (a quoted field that never closes?)")
        } else if open - segmentStart.offset > Int64(BodyLimits.maxBodyBytes) {
            fail("the body starting at record \(segmentStart.records + 1) (line \(segmentStart.line)) is larger than "
                 + "\(BodyLimits.maxBodyBytes >> 20) MiB: not one healthd body (each body starts with its header row)")
        }
    }

    mutating func finish(_ emit: (BodyUnit) throws -> Void) rethrows {
        guard failure == nil else { return }
        try scan(isFinal: true, emit)
        let end = position
        if end.offset > segmentStart.offset {
            var segment = closedSegment(until: end)
            segment.unfinished = unfinished
            try push(segment, header: segmentHeader, emit)
        }
        try flush(emit)
    }

    private mutating func fail(_ message: String) {
        failure = message
        buffer = []
        pending = []
    }

    /// Every whole record in the buffer (and, when final, an unterminated last one).
    private mutating func scan(isFinal: Bool, _ emit: (BodyUnit) throws -> Void) rethrows {
        while true {
            // Not validating, the scanner finds boundaries and never throws.
            let step = buffer.withUnsafeBufferPointer { b in (try? scanner.scan(b, isFinal: isFinal)) ?? .end }
            guard case .record(let record) = step else { return }
            try closeRecord(record, emit)
        }
    }

    /// A record just ended: if it is a header row, the open segment ends where it starts.
    private mutating func closeRecord(_ record: CSVRawRecord, _ emit: (BodyUnit) throws -> Void) rethrows {
        let recordStart = bufferStart + Int64(record.byteRange.lowerBound)
        if !record.isTerminated && mayGrow {
            // The unterminated last record of a file that may still grow: named, and read again next time.
            unfinished = UnfinishedRecord(record: Int64(record.number), line: Int64(record.line), inQuotes: record.endsInsideQuotes)
        }
        var from = record.byteRange.lowerBound
        let contentEnd = record.byteRange.upperBound
        if recordStart == 0, contentEnd - from >= 3, buffer[from] == 0xEF, buffer[from + 1] == 0xBB, buffer[from + 2] == 0xBF { from += 3 }
        let name = Self.schemaVersion
        let isHeader = contentEnd - from >= name.count
            && buffer[from..<(from + name.count)].elementsEqual(name)
            && (contentEnd - from == name.count || buffer[from + name.count] == UInt8(ascii: ","))
        guard isHeader else { return }
        let header = Array(buffer[from..<contentEnd])
        if recordStart > segmentStart.offset {
            let boundary = StreamPosition(offset: recordStart, line: Int64(record.line), records: Int64(record.number - 1))
            try push(closedSegment(until: boundary), header: segmentHeader, emit)
            segmentStart = boundary
        }
        segmentHeader = header
    }

    private func closedSegment(until end: StreamPosition) -> BodySegment {
        // Ranges are relative to the unit, which starts at the first pending segment (or this one).
        BodySegment(range: 0..<0, body: 0..<0, start: segmentStart, end: end, isBlank: false)
    }

    /// Adds a closed segment to the waiting unit, sending the unit first when it cannot join.
    private mutating func push(_ segment: BodySegment, header: [UInt8]?, _ emit: (BodyUnit) throws -> Void) rethrows {
        if let first = pending.first {
            let size = segment.end.offset - first.start.offset
            if header != pendingHeader || size > Int64(Self.unitBudget) || repeatsPending(segment) {
                try flush(emit)
            }
        }
        if pending.isEmpty { pendingHeader = header }
        pending.append(segment)
    }

    /// Whether `segment` (still in the buffer, after the waiting ones) repeats one waiting, byte
    /// for byte.
    private func repeatsPending(_ segment: BodySegment) -> Bool {
        let bytes = buffer[Int(segment.start.offset - bufferStart)..<Int(segment.end.offset - bufferStart)]
        return pending.contains { waiting in
            waiting.end.offset - waiting.start.offset == Int64(bytes.count)
                && buffer[Int(waiting.start.offset - bufferStart)..<Int(waiting.end.offset - bufferStart)].elementsEqual(bytes)
        }
    }

    /// Sends the waiting segments as one unit and drops their bytes from the buffer.
    private mutating func flush(_ emit: (BodyUnit) throws -> Void) rethrows {
        guard let first = pending.first, let last = pending.last else { return }
        let base = first.start.offset
        let count = Int(last.end.offset - base)
        let from = Int(base - bufferStart)
        let bytes = Array(buffer[from..<(from + count)])
        let segments = pending.map { s -> BodySegment in
            var s = s
            let lower = Int(s.start.offset - base), upper = Int(s.end.offset - base)
            s.range = lower..<upper
            s.body = lower..<upper
            s.isBlank = bytes[lower..<upper].allSatisfy { $0 == 0x0A || $0 == 0x0D }
            return s
        }
        pending = []
        pendingHeader = nil
        let drop = from + count
        buffer.removeFirst(drop)
        bufferStart += Int64(drop)
        scanner.discard(drop)
        try emit(BodyUnit(bytes: bytes, segments: segments, decodeWhole: true))
    }

    private static let schemaVersion = Array("schemaVersion".utf8)
}
