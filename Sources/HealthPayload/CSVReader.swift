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
    private var scanner: CSVScanner

    /// A reader positioned at the first record (after a byte-order mark, if any).
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        scanner = CSVScanner(start: bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0)
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
        var refs: [CSVFieldRef] = []
        scanner.side.removeAll(keepingCapacity: true)
        return try bytes.withUnsafeBufferPointer { (b) throws(PayloadError) -> CSVRecord? in
            guard let raw = try scanner.next(b, into: &refs) else { return nil }
            return scanner.side.withUnsafeBufferPointer { side in
                let fields = CSVFieldBytes(input: b, side: side)
                return CSVRecord(fields: refs.map(fields.string), number: raw.number, line: raw.line, byteRange: raw.byteRange)
            }
        }
    }
}
