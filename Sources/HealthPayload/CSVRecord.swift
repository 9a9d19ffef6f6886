/// One CSV record: its fields, where it starts, and the bytes it occupies.
public struct CSVRecord: Sendable, Equatable {
    /// The fields, unquoted (`""` inside a quoted field is one `"`).
    public var fields: [String]
    /// 1-based record number in the document, counting every record, blank lines included.
    public var number: Int
    /// 1-based line on which the record starts (LF, CRLF and a lone CR each end a line).
    public var line: Int
    /// Byte offsets of the record in the reader's input, without its terminator.
    public var byteRange: Range<Int>

    /// Creates a record.
    public init(fields: [String], number: Int, line: Int, byteRange: Range<Int>) {
        self.fields = fields
        self.number = number
        self.line = line
        self.byteRange = byteRange
    }

    /// True for an empty line (one empty field, no bytes).
    public var isBlank: Bool { byteRange.isEmpty }

    /// "record N (line L)", for error messages.
    public var location: String { "record \(number) (line \(line))" }
}
