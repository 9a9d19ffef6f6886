/// Name-based UUIDs, version 5 (RFC 9562 §5.5): the SHA-1 of a namespace UUID and a name,
/// with the version and variant bits set. The same namespace and name always give the same
/// UUID, so something without an identifier of its own (a record of the Health app's export)
/// gets one that a second import finds again.
public enum UUIDv5 {
    /// The UUID of `name` in `namespace` (16 bytes), as uppercase 8-4-4-4-12 text.
    public static func make(namespace: [UInt8], name: [UInt8]) -> String {
        precondition(namespace.count == 16, "a namespace is a UUID's 16 bytes")
        var bytes = Array(SHA1.hash(namespace + name).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return text(bytes)
    }

    /// The 16 bytes of a UUID written as 8-4-4-4-12 hex digits (either case); nil otherwise.
    public static func bytes(_ text: String) -> [UInt8]? {
        let digits = text.utf8.filter { $0 != UInt8(ascii: "-") }
        guard text.utf8.count == 36, digits.count == 32 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(16)
        var high: UInt8?
        for c in digits {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }

    /// 16 bytes as uppercase 8-4-4-4-12 text.
    static func text(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
