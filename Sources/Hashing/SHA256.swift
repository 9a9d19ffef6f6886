import CCrypto

/// SHA-256 through libcrypto (Linux has no CryptoKit; never hand-roll a hash): the one hashing
/// wrapper of the package, for tokens, bodies, backlog files, migrations and demo `id`s.
///
/// Streaming: `update` as bytes arrive, `digest()` for the hash of everything so far (hashing
/// can go on: the ledger reads the hash of a file's ingested prefix, then hashes on), or
/// `finalize()` to end. One-shot: `SHA256.hash(bytes)`, `SHA256.hex(bytes)`.
public struct SHA256: ~Copyable {
    private let context: OpaquePointer

    /// An empty hash.
    public init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes to the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Adds bytes to the hash.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds bytes to the hash.
    public mutating func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest of everything added so far; hashing can go on (a copy of the
    /// context is finished, `EVP_MD_CTX_copy_ex`).
    public func digest() -> [UInt8] {
        let copy = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(copy) }
        EVP_MD_CTX_copy_ex(copy, context)
        return Self.finish(copy)
    }

    /// The 32-byte digest; the hash is finished afterwards.
    public consuming func finalize() -> [UInt8] {
        Self.finish(context)
    }

    private static func finish(_ context: OpaquePointer?) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        digest.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return digest
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.finalize()
    }

    /// The digest of `bytes`.
    public static func hash(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var h = SHA256()
        h.update(bytes)
        return h.finalize()
    }

    /// The digest of `bytes` as 64 lowercase hex characters.
    public static func hex(_ bytes: [UInt8]) -> String { hexString(hash(bytes)) }

    /// Bytes as lowercase hex.
    public static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension SHA256 {
    /// Appends the digest of `bytes` as 64 lowercase hex characters, without an allocation of
    /// its own (one-shot `EVP_Digest`): a fingerprint per decoded sample.
    public static func appendHex(of bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
            var length: UInt32 = 0
            _ = EVP_Digest(bytes.baseAddress, bytes.count, digest.baseAddress, &length, EVP_sha256(), nil)
            let hex: StaticString = "0123456789abcdef"
            let digits = UnsafeBufferPointer(start: hex.utf8Start, count: 16)
            for b in digest {
                out.append(digits[Int(b >> 4)])
                out.append(digits[Int(b & 0x0f)])
            }
        }
    }
}
