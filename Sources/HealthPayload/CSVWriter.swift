/// Writes CSV in the reference's dialect: minimal quoting, LF after every row, UTF-8, no byte-order mark.
///
/// A field is quoted only when it contains a comma, a double quote, LF or CR; an embedded double
/// quote is doubled. There is no backslash escape and no padding.
public struct CSVWriter: Sendable {
    /// The document written so far, UTF-8.
    public private(set) var bytes: [UInt8] = []

    /// An empty document.
    public init() {}

    /// The document written so far, as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends one row and its LF terminator.
    public mutating func writeRow(_ fields: [String]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.append(field: field, to: &bytes)
        }
        bytes.append(0x0A)
    }

    /// One row with its LF terminator, as text.
    public static func row(_ fields: [String]) -> String {
        var writer = CSVWriter()
        writer.writeRow(fields)
        return writer.text
    }

    /// True when `field` must be quoted: it contains a comma, a double quote, LF or CR.
    public static func needsQuoting(_ field: some StringProtocol) -> Bool {
        field.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
    }

    /// Appends one field, quoted only if needed, to a UTF-8 buffer.
    public static func append(field: some StringProtocol, to out: inout [UInt8]) {
        guard needsQuoting(field) else {
            out.append(contentsOf: field.utf8)
            return
        }
        out.append(UInt8(ascii: "\""))
        for c in field.utf8 {
            if c == UInt8(ascii: "\"") { out.append(c) }
            out.append(c)
        }
        out.append(UInt8(ascii: "\""))
    }
}
