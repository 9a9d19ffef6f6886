import CCrypto

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
        let digits = String(text.filter { $0 != "-" })
        guard text.utf8.count == 36, digits.utf8.count == 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        return Hex.bytes(digits)
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

/// Hexadecimal text and bytes.
public enum Hex {
    /// The bytes of hex digits, two per byte (either case; the caller has checked they are hex).
    public static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8 = c >= 97 ? c - 87 : c >= 65 ? c - 55 : c - 48
            if let h = high {
                out.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return out
    }
}

extension UUIDv5 {
    /// The UUID of `name` in `namespace` (16 bytes) as its two 64-bit halves, most significant
    /// byte first: for a decoder that keeps millions of them, without an allocation each.
    public static func value(namespace: [UInt8], name: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        precondition(namespace.count == 16, "a namespace is a UUID's 16 bytes")
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 + name.count + 64) { buffer in
            let message = UnsafeMutableRawBufferPointer(start: buffer.baseAddress, count: 16 + name.count)
            namespace.withUnsafeBytes { message.copyMemory(from: $0) }
            if name.count > 0 { UnsafeMutableRawBufferPointer(rebasing: message[16...]).copyMemory(from: name) }
            let digest = buffer.baseAddress! + 16 + name.count
            var length: UInt32 = 0
            _ = EVP_Digest(message.baseAddress, message.count, digest, &length, EVP_sha1(), nil)
            digest[6] = (digest[6] & 0x0F) | 0x50
            digest[8] = (digest[8] & 0x3F) | 0x80
            var high: UInt64 = 0, low: UInt64 = 0
            for k in 0..<8 { high = high << 8 | UInt64(digest[k]) }
            for k in 8..<16 { low = low << 8 | UInt64(digest[k]) }
            return (high, low)
        }
    }

    /// Appends a UUID given as its two halves as uppercase 8-4-4-4-12 text.
    public static func appendText(_ value: (UInt64, UInt64), to out: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        let digits = UnsafeBufferPointer(start: hex.utf8Start, count: 16)
        for k in 0..<16 {
            if k == 4 || k == 6 || k == 8 || k == 10 { out.append(UInt8(ascii: "-")) }
            let byte = UInt8(truncatingIfNeeded: (k < 8 ? value.0 >> UInt64(56 - 8 * k) : value.1 >> UInt64(56 - 8 * (k - 8))))
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
    }
}
