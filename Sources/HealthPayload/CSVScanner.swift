/// Where one field's text is: a byte range of the input, or of the scanner's side buffer when
/// the field had doubled quotes to undo.
struct CSVFieldRef: Sendable {
    var start: Int
    var end: Int
    /// True when the range is in `CSVScanner.side`, not in the input.
    var inSide: Bool
}

/// One record as the scanner found it: where it is, and (when fields are kept) its fields as
/// `refs[fields]` of the array passed to the scanner.
public struct CSVRawRecord: Sendable {
    /// 1-based record number in the document, counting every record, blank lines included.
    public var number: Int
    /// 1-based line on which the record starts.
    public var line: Int
    /// Byte offsets of the record's content in the scanned input, without its terminator.
    public var byteRange: Range<Int>
    /// Offset just past the record's terminator (`byteRange.upperBound` when it has none).
    public var end: Int
    /// The input ended inside a quoted field of this record (only when not validating).
    public var endsInsideQuotes: Bool
    var fields: Range<Int>

    /// True for an empty line (one empty field, no bytes).
    public var isBlank: Bool { byteRange.isEmpty }
    /// False for a last record with no line end.
    public var isTerminated: Bool { end > byteRange.upperBound }
    /// Where the record starts, for error messages: `record N (line L)`.
    public var location: PayloadLocation { PayloadLocation(record: number, line: line, byteOffset: byteRange.lowerBound) }
}

/// What one step of scanning found.
public enum CSVScanStep: Sendable {
    /// A whole record.
    case record(CSVRawRecord)
    /// The input so far ends inside a record: feed more, or scan again with `isFinal`.
    case needsMoreInput
    /// Nothing left.
    case end
}

/// The one RFC 4180 record scanner, in the reference's dialect: behind `CSVReader` and the CSV
/// decoder (fields kept and checked), and behind the backlog's CSV splitter (record boundaries
/// only, over a stream that arrives in chunks).
///
/// Quoted fields may hold commas, doubled quotes, CR and LF. A record ends at LF, CRLF or a lone
/// CR; the last record may lack a terminator. Lines are counted as a text editor does: LF, CRLF
/// and a lone CR each end one, inside quoted fields too, so that `record N (line L)` means the
/// same to the decoder and to the splitter. Validating, these make the document invalid
/// (`PayloadError` naming record and line): an unterminated quoted field, a character other than
/// a comma or line end after a closing quote, a NUL byte, invalid UTF-8. Not validating, a
/// field malformed after its closing quote runs on to the next comma or line end, as the
/// decoder will say when it reads the record. Allocates nothing per field.
public struct CSVScanner: Sendable {
    /// Unquoted text of fields that held doubled quotes (validating only).
    var side: [UInt8] = []
    /// Offset in the input of the next record.
    public private(set) var offset: Int
    /// Records scanned so far (the next one is `recordNumber + 1`).
    public private(set) var recordNumber: Int
    /// The 1-based line the next record starts on.
    public private(set) var line: Int
    /// Keep and check fields (the decoder), or only find where records end (the splitter).
    public let validating: Bool

    /// A scanner starting at `start` of its input, after `records` records and on `line`.
    public init(start: Int = 0, line: Int = 1, records: Int = 0, validating: Bool = true) {
        offset = start
        self.line = line
        recordNumber = records
        self.validating = validating
    }

    /// The caller dropped the first `count` bytes of its input (all before `offset`): offsets
    /// count from the new start.
    public mutating func discard(_ count: Int) {
        precondition(count <= offset, "cannot discard bytes the scanner has not passed")
        offset -= count
    }

    /// The next record of `b`. With `isFinal` false, `b` may be only the start of the input: a
    /// record that reaches its end (or whose end could still change with more input: a
    /// closing quote or a CR as the last byte) is not returned yet.
    public mutating func scan(_ b: UnsafeBufferPointer<UInt8>, isFinal: Bool) throws(PayloadError) -> CSVScanStep {
        var refs: [CSVFieldRef] = []
        return try scan(b, into: &refs, isFinal: isFinal)
    }

    /// The next record of the whole input `b`, its fields appended to `refs`; nil at the end.
    mutating func next(_ b: UnsafeBufferPointer<UInt8>, into refs: inout [CSVFieldRef]) throws(PayloadError) -> CSVRawRecord? {
        switch try scan(b, into: &refs, isFinal: true) {
        case .record(let record): return record
        case .needsMoreInput, .end: return nil
        }
    }

    /// The next record of `b`, its fields appended to `refs` (when validating). A record is
    /// scanned field by field (`scanQuotedField`, `scanUnquotedField`); after each field comes a
    /// separator, a line end or the end of the input.
    mutating func scan(_ b: UnsafeBufferPointer<UInt8>, into refs: inout [CSVFieldRef], isFinal: Bool) throws(PayloadError) -> CSVScanStep {
        let n = b.count
        guard offset < n else { return .end }
        var record = PendingRecord(number: recordNumber + 1, line: line, start: offset, firstField: refs.count, sideCount: side.count)
        var i = offset
        while true {
            if i < n && b[i] == UInt8(ascii: "\"") {
                switch try scanQuotedField(b, &i, &record, into: &refs, isFinal: isFinal) {
                case .closed: break
                case .cut: return needsMoreInput(record, &refs)
                case .unterminated: return finish(record, fieldsEnd: refs.count, end: n, contentEnd: n, terminated: false, insideQuotes: true)
                }
            } else {
                try scanUnquotedField(b, &i, record, into: &refs)
            }
            // After a field: a separator, a line end, or the end of the input.
            if i >= n {
                if !isFinal { return needsMoreInput(record, &refs) }
                return finish(record, fieldsEnd: refs.count, end: i, contentEnd: i, terminated: false)
            }
            let c = b[i]
            if c == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if c == 0x0D && i + 1 == n && !isFinal { return needsMoreInput(record, &refs) }  // CRLF may be cut in two
            let contentEnd = i
            i += (c == 0x0D && i + 1 < n && b[i + 1] == 0x0A) ? 2 : 1
            return finish(record, fieldsEnd: refs.count, end: i, contentEnd: contentEnd, terminated: true)
        }
    }

    /// The record being scanned: where it starts (for its errors), what to drop when it is not
    /// complete yet, and the line ends inside its quoted fields, committed with it.
    private struct PendingRecord {
        let number: Int
        /// The line it starts on.
        let line: Int
        let start: Int
        /// Its first field in `refs`.
        let firstField: Int
        /// The length of `side` before it.
        let sideCount: Int
        /// Line ends inside its quoted fields.
        var lines = 0

        /// The document is invalid at this record.
        func fail(_ what: String) -> PayloadError {
            PayloadError(what, problem: .invalidCSV, at: PayloadLocation(record: number, line: line, byteOffset: start))
        }
    }

    /// How a quoted field ended.
    private enum QuotedFieldEnd {
        /// At its closing quote (and anything malformed after it, when not validating).
        case closed
        /// The input so far ends where more input could change the field.
        case cut
        /// The final input ends inside it (only when not validating).
        case unterminated
    }

    /// Drops the fields and side text of a record that reaches the end of the input so far.
    @inline(__always)
    private mutating func needsMoreInput(_ record: PendingRecord, _ refs: inout [CSVFieldRef]) -> CSVScanStep {
        refs.removeSubrange(record.firstField...)
        side.removeSubrange(record.sideCount...)
        return .needsMoreInput
    }

    /// Commits a whole record, its fields in `refs` up to `fieldsEnd`: the scanner moves past it.
    @inline(__always)
    private mutating func finish(_ record: PendingRecord, fieldsEnd: Int, end: Int, contentEnd: Int, terminated: Bool,
                                 insideQuotes: Bool = false) -> CSVScanStep {
        recordNumber = record.number
        line = record.line + record.lines + (terminated ? 1 : 0)
        offset = end
        return .record(CSVRawRecord(number: record.number, line: record.line, byteRange: record.start..<contentEnd, end: end,
                                    endsInsideQuotes: insideQuotes, fields: record.firstField..<fieldsEnd))
    }

    /// Scans the quoted field whose opening quote is at `i`, which it leaves past the closing
    /// quote: to the quote that is not doubled, counting line ends into `record`.
    @inline(__always)
    private mutating func scanQuotedField(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ record: inout PendingRecord,
                                          into refs: inout [CSVFieldRef], isFinal: Bool) throws(PayloadError) -> QuotedFieldEnd {
        let n = b.count
        i += 1
        var pieceStart = i
        var sideStart = -1
        var hasHigh = false
        while true {
            guard i < n else {
                if !isFinal { return .cut }
                if validating { throw record.fail("unterminated quoted field") }
                return .unterminated
            }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                if i + 1 < n && b[i + 1] == UInt8(ascii: "\"") {
                    if validating {
                        if sideStart < 0 { sideStart = side.count }
                        side.append(contentsOf: UnsafeBufferPointer(rebasing: b[pieceStart...i]))
                    }
                    i += 2
                    pieceStart = i
                    continue
                }
                if i + 1 == n && !isFinal { return .cut }  // a doubled quote may be cut in two
                break
            }
            if c == 0x0A {
                record.lines += 1
            } else if c == 0x0D {
                if !(i + 1 < n && b[i + 1] == 0x0A) {
                    if i + 1 == n && !isFinal { return .cut }  // CRLF may be cut in two
                    record.lines += 1
                }
            } else if c >= 0x80 {
                hasHigh = true
            } else if c == 0 && validating {
                throw record.fail("NUL byte at byte \(i)")
            }
            i += 1
        }
        if validating { try keepQuotedField(b, pieceStart..<i, sideStart: sideStart, hasHigh: hasHigh, record, into: &refs) }
        i += 1  // the closing quote
        try skipAfterClosingQuote(b, &i, record)
        return .closed
    }

    /// Checks and keeps a quoted field whose last piece (after any doubled quote) is `last`: in
    /// the input as it is, or in `side` from `sideStart` when doubled quotes were undone.
    @inline(__always)
    private mutating func keepQuotedField(_ b: UnsafeBufferPointer<UInt8>, _ last: Range<Int>, sideStart: Int, hasHigh: Bool,
                                          _ record: PendingRecord, into refs: inout [CSVFieldRef]) throws(PayloadError) {
        if sideStart >= 0 {
            side.append(contentsOf: UnsafeBufferPointer(rebasing: b[last]))
            // Validate the pieces joined, so a sequence split by a doubled quote cannot slip through.
            if hasHigh {
                let bad = side.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0, in: sideStart..<$0.count) }
                if bad != nil { throw record.fail("invalid UTF-8 in the quoted field starting at byte \(record.start)") }
            }
            refs.append(CSVFieldRef(start: sideStart, end: side.count, inSide: true))
        } else {
            if hasHigh, let bad = UTF8Validation.firstInvalidOffset(b, in: last) {
                throw record.fail("invalid UTF-8 at byte \(bad)")
            }
            refs.append(CSVFieldRef(start: last.lowerBound, end: last.upperBound, inSide: false))
        }
    }

    /// After a closing quote only a comma or a line end may follow. Validating, anything else is
    /// an error; not validating, it runs on as unquoted text to the next comma or line end.
    @inline(__always)
    private func skipAfterClosingQuote(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ record: PendingRecord) throws(PayloadError) {
        let n = b.count
        guard i < n else { return }
        let c = b[i]
        guard c != UInt8(ascii: ",") && c != 0x0A && c != 0x0D else { return }
        if validating {
            throw record.fail("unexpected \(PayloadDecoder.describeByte(c)) after a closing quote at byte \(i)")
        }
        while i < n && b[i] != UInt8(ascii: ",") && b[i] != 0x0A && b[i] != 0x0D { i += 1 }
    }

    /// Scans the unquoted field starting at `i` to the next comma, line end or end of input.
    @inline(__always)
    private mutating func scanUnquotedField(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ record: PendingRecord,
                                           into refs: inout [CSVFieldRef]) throws(PayloadError) {
        // Mutating though it only reads `self`: with `self` in place the per-byte NUL test stays one
        // branch (on a copy the compiler tests `validating` at every byte, a third slower).
        let n = b.count
        let fieldStart = i
        var hasHigh = false
        while i < n {
            let c = b[i]
            if c == UInt8(ascii: ",") || c == 0x0A || c == 0x0D { break }
            if c >= 0x80 {
                hasHigh = true
            } else if c == 0 && validating {
                throw record.fail("NUL byte at byte \(i)")
            }
            i += 1
        }
        if validating {
            if hasHigh, let bad = UTF8Validation.firstInvalidOffset(b, in: fieldStart..<i) {
                throw record.fail("invalid UTF-8 at byte \(bad)")
            }
            refs.append(CSVFieldRef(start: fieldStart, end: i, inSide: false))
        }
    }
}

/// Resolves field references to bytes, for one input and its scanner's side buffer.
struct CSVFieldBytes {
    let input: UnsafeBufferPointer<UInt8>
    let side: UnsafeBufferPointer<UInt8>

    @inline(__always)
    subscript(_ ref: CSVFieldRef) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: (ref.inSide ? side : input)[ref.start..<ref.end])
    }

    func string(_ ref: CSVFieldRef) -> String {
        String(decoding: self[ref], as: UTF8.self)
    }

    @inline(__always)
    func equal(_ a: CSVFieldRef, _ b: CSVFieldRef) -> Bool {
        let x = self[a]
        let y = self[b]
        return x.count == y.count && memoryEquals(x, 0, y, 0, x.count)
    }
}
