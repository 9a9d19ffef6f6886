import CCrypto

/// SHA-256 over a stream, whose digest so far can be read without ending it.
///
/// The ledger keeps the hash of the bytes ingested so far; reading it at a boundary and then
/// hashing on needs a copy of the context (`EVP_MD_CTX_copy_ex`), which `Warehouse.SHA256`
/// does not offer.
final class RunningSHA256 {
    private let context: OpaquePointer

    init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds bytes.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// Adds bytes.
    func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything added so far; hashing can go on.
    func digest() -> [UInt8] {
        let copy = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(copy) }
        EVP_MD_CTX_copy_ex(copy, context)
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        out.withUnsafeMutableBufferPointer { _ = EVP_DigestFinal_ex(copy, $0.baseAddress, &length) }
        return out
    }

    /// The digest of `bytes`.
    static func hash(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let h = RunningSHA256()
        h.update(bytes)
        return h.digest()
    }
}
