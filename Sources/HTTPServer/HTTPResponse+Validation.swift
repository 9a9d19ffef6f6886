extension HTTPResponse {
    /// Why this response can't be sent as is (`status`, `header_name`,
    /// `header_value`), or nil when it can. A problem is a handler bug; the
    /// server answers 500 instead.
    var problem: String? {
        guard (200...599).contains(status) else { return "status" }
        for field in headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(Self.isTokenByte) else { return "header_name" }
            // CR or LF would let a value start a new header line (response splitting).
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
                return "header_value"
            }
        }
        return nil
    }

    /// Whether MHD writes this field itself from the body it was given.
    static func isSetByMHD(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "content-length" || lower == "transfer-encoding"
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }
}
