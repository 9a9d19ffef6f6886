/// An RFC 4180 reader over UTF-8 bytes, in the reference's dialect and a little beyond it.
///
/// Quoted fields may hold commas, doubled quotes, CR and LF. A record ends at LF, CRLF or a lone
/// CR; the last record may lack a terminator. A leading byte-order mark is skipped. A quote
/// inside an unquoted field is kept as a character. These make the document invalid
/// (`PayloadError` naming record and line): an unterminated quoted field, a character other
/// than a comma or line end after a closing quote, a NUL byte, invalid UTF-8.
public struct CSVReader: Sendable {
    /// The whole input; record byte ranges index into it.
    public let bytes: [UInt8]
    private var offset: Int
    private var recordNumber = 0
    private var line = 1

    /// A reader positioned at the first record (after a byte-order mark, if any).
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
    }

    /// Reads every record of `bytes`.
    public static func records(_ bytes: [UInt8]) throws(PayloadError) -> [CSVRecord] {
        var reader = CSVReader(bytes)
        var records: [CSVRecord] = []
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The next record, or nil at the end of the input.
    public mutating func next() throws(PayloadError) -> CSVRecord? {
        guard offset < bytes.count else { return nil }
        recordNumber += 1
        let number = recordNumber
        let startLine = line
        let start = offset
        var i = offset
        var line = self.line
        let result = try bytes.withUnsafeBufferPointer { (b) throws(PayloadError) -> (fields: [String], end: Int, next: Int) in
            let n = b.count
            var fields: [String] = []
            var scratch: [UInt8] = []
            func fail(_ what: String) -> PayloadError {
                PayloadError("record \(number) (line \(startLine)): \(what)")
            }
            func makeField(_ range: Range<Int>, hasHigh: Bool) throws(PayloadError) -> String {
                if hasHigh, let bad = UTF8Validation.firstInvalidOffset(b, in: range) {
                    throw fail("invalid UTF-8 at byte \(bad)")
                }
                return String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
            }
            while true {
                var hasHigh = false
                if i < n && b[i] == UInt8(ascii: "\"") {
                    // Quoted field: runs to the quote that is not doubled.
                    i += 1
                    var pieceStart = i
                    scratch.removeAll(keepingCapacity: true)
                    var usedScratch = false
                    while true {
                        guard i < n else { throw fail("unterminated quoted field") }
                        let c = b[i]
                        if c == UInt8(ascii: "\"") {
                            if i + 1 < n && b[i + 1] == UInt8(ascii: "\"") {
                                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: b[pieceStart...i]))
                                usedScratch = true
                                i += 2
                                pieceStart = i
                                continue
                            }
                            break
                        }
                        if c == 0 { throw fail("NUL byte at byte \(i)") }
                        if c == 0x0A {
                            line += 1
                        } else if c == 0x0D && !(i + 1 < n && b[i + 1] == 0x0A) {
                            line += 1
                        } else if c >= 0x80 {
                            hasHigh = true
                        }
                        i += 1
                    }
                    if usedScratch {
                        // Validate the pieces joined, so a sequence split by a doubled quote cannot slip through.
                        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: b[pieceStart..<i]))
                        if hasHigh, let bad = scratch.withUnsafeBufferPointer({ UTF8Validation.firstInvalidOffset($0, in: 0..<$0.count) }) {
                            throw fail("invalid UTF-8 in a quoted field (byte \(bad) of its text)")
                        }
                        fields.append(String(decoding: scratch, as: UTF8.self))
                    } else {
                        fields.append(try makeField(pieceStart..<i, hasHigh: hasHigh))
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
                    fields.append(try makeField(fieldStart..<i, hasHigh: hasHigh))
                }
                // After a field: a separator, a line end, or the end of the input.
                if i >= n { return (fields, i, i) }
                let c = b[i]
                if c == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                let end = i
                i += (c == 0x0D && i + 1 < n && b[i + 1] == 0x0A) ? 2 : 1
                line += 1
                return (fields, end, i)
            }
        }
        self.line = line
        offset = result.next
        return CSVRecord(fields: result.fields, number: number, line: startLine, byteRange: start..<result.end)
    }
}
