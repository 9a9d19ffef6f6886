import CCrypto

/// SHA-1 through libcrypto, for name-based (version 5) UUIDs only (RFC 9562 §5.5): never for
/// anything that must resist collisions on purpose.
public enum SHA1 {
    /// The 20-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { out in
                _ = EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, EVP_sha1(), nil)
            }
        }
        return digest
    }
}
