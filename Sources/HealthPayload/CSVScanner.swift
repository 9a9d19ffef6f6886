/// Where one field's text is: a byte range of the input, or of the scanner's side buffer when
/// the field had doubled quotes to undo.
struct CSVFieldRef: Sendable {
    var start: Int
    var end: Int
    /// True when the range is in `CSVScanner.side`, not in the input.
    var inSide: Bool
}

/// One record as ranges: its fields are `refs[fields]` of the array passed to `CSVScanner.next`.
struct CSVRawRecord {
    var number: Int
    var line: Int
    var byteRange: Range<Int>
    var fields: Range<Int>

    var isBlank: Bool { byteRange.isEmpty }
    var location: String { "record \(number) (line \(line))" }
}

/// The RFC 4180 state machine behind `CSVReader`, over bytes, allocating nothing per field.
struct CSVScanner: Sendable {
    /// Unquoted text of fields that held doubled quotes.
    var side: [UInt8] = []
    var offset: Int
    var recordNumber = 0
    var line = 1

    init(start: Int) {
        offset = start
    }

    /// Scans the next record of `b`, appending its fields to `refs`; nil at the end of the input.
    mutating func next(_ b: UnsafeBufferPointer<UInt8>, into refs: inout [CSVFieldRef]) throws(PayloadError) -> CSVRawRecord? {
        let n = b.count
        guard offset < n else { return nil }
        recordNumber += 1
        let number = recordNumber
        let startLine = line
        let start = offset
        let firstField = refs.count
        var i = offset
        func fail(_ what: String) -> PayloadError {
            PayloadError("record \(number) (line \(startLine)): \(what)")
        }
        while true {
            var hasHigh = false
            if i < n && b[i] == UInt8(ascii: "\"") {
                // Quoted field: runs to the quote that is not doubled.
                i += 1
                var pieceStart = i
                var sideStart = -1
                while true {
                    guard i < n else { throw fail("unterminated quoted field") }
                    let c = b[i]
                    if c == UInt8(ascii: "\"") {
                        if i + 1 < n && b[i + 1] == UInt8(ascii: "\"") {
                            if sideStart < 0 { sideStart = side.count }
                            side.append(contentsOf: UnsafeBufferPointer(rebasing: b[pieceStart...i]))
                            i += 2
                            pieceStart = i
                            continue
                        }
                        break
                    }
                    if c == 0 { throw fail("NUL byte at byte \(i)") }
                    if c == 0x0A {
                        line += 1
                    } else if c == 0x0D {
                        if !(i + 1 < n && b[i + 1] == 0x0A) { line += 1 }
                    } else if c >= 0x80 {
                        hasHigh = true
                    }
                    i += 1
                }
                if sideStart >= 0 {
                    side.append(contentsOf: UnsafeBufferPointer(rebasing: b[pieceStart..<i]))
                    // Validate the pieces joined, so a sequence split by a doubled quote cannot slip through.
                    if hasHigh {
                        let bad = side.withUnsafeBufferPointer { UTF8Validation.firstInvalidOffset($0, in: sideStart..<$0.count) }
                        if bad != nil { throw fail("invalid UTF-8 in the quoted field starting at byte \(start)") }
                    }
                    refs.append(CSVFieldRef(start: sideStart, end: side.count, inSide: true))
                } else {
                    if hasHigh, let bad = UTF8Validation.firstInvalidOffset(b, in: pieceStart..<i) {
                        throw fail("invalid UTF-8 at byte \(bad)")
                    }
                    refs.append(CSVFieldRef(start: pieceStart, end: i, inSide: false))
                }
                i += 1  // the closing quote
                if i < n {
                    let c = b[i]
                    if c != UInt8(ascii: ",") && c != 0x0A && c != 0x0D {
                        throw fail("unexpected \(PayloadDecoder.describeByte(c)) after a closing quote at byte \(i)")
                    }
                }
            } else {
                let fieldStart = i
                while i < n {
                    let c = b[i]
                    if c == UInt8(ascii: ",") || c == 0x0A || c == 0x0D { break }
                    if c == 0 { throw fail("NUL byte at byte \(i)") }
                    if c >= 0x80 { hasHigh = true }
                    i += 1
                }
                if hasHigh, let bad = UTF8Validation.firstInvalidOffset(b, in: fieldStart..<i) {
                    throw fail("invalid UTF-8 at byte \(bad)")
                }
                refs.append(CSVFieldRef(start: fieldStart, end: i, inSide: false))
            }
            // After a field: a separator, a line end, or the end of the input.
            if i >= n {
                offset = i
                return CSVRawRecord(number: number, line: startLine, byteRange: start..<i, fields: firstField..<refs.count)
            }
            let c = b[i]
            if c == UInt8(ascii: ",") {
                i += 1
                continue
            }
            let end = i
            i += (c == 0x0D && i + 1 < n && b[i + 1] == 0x0A) ? 2 : 1
            line += 1
            offset = i
            return CSVRawRecord(number: number, line: startLine, byteRange: start..<end, fields: firstField..<refs.count)
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
