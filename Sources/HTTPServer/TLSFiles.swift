import CGnuTLS
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The certificate chain and private key HTTPS is served with, as PEM files (a Let's Encrypt
/// `fullchain.pem` and `privkey.pem` as they are).
///
/// The pair is read into GnuTLS (libmicrohttpd's TLS) and every new handshake is given the
/// pair loaded last, so `HTTPServer.reloadTLS()` swaps it for the next connection while the
/// ones open keep theirs. The pair is process-wide: one TLS server per process.
public struct TLSFiles: Sendable, Equatable {
    /// The certificate chain, the server's own certificate first.
    public var certificatePath: String
    /// The certificate's private key.
    public var keyPath: String

    /// Files not read until the server starts (or reloads).
    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }

    /// Reads and checks both files and makes them the pair new handshakes get. Throws
    /// `.tlsCredentials` naming the file and the reason (missing or unreadable, not PEM, the key
    /// not the certificate's, expired or not yet valid); the pair served before then stays.
    /// Returns the certificate's expiry, seconds since the epoch.
    @discardableResult
    public func load() throws(HTTPServerError) -> Int {
        var detail = [CChar](repeating: 0, count: 256)
        let problem = CGnuTLS_load(certificatePath, keyPath, Int64(time(nil)), &detail, detail.count)
        let reason = String(decoding: detail.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        func fail(_ file: String, _ what: String) -> HTTPServerError {
            HTTPServerError(.tlsCredentials, "\(file): \(what)\(reason.isEmpty ? "" : " (\(reason))")")
        }
        switch problem {
        case Int32(CGNUTLS_OK.rawValue): return Int(CGnuTLS_current_expiry())
        case Int32(CGNUTLS_CERT_UNREADABLE.rawValue): throw fail("TLS certificate \(certificatePath)", "cannot be read")
        case Int32(CGNUTLS_KEY_UNREADABLE.rawValue): throw fail("TLS key \(keyPath)", "cannot be read")
        case Int32(CGNUTLS_CERT_INVALID.rawValue): throw fail("TLS certificate \(certificatePath)", "is not a PEM certificate")
        case Int32(CGNUTLS_KEY_INVALID.rawValue) where Self.isEncrypted(keyPath):
            throw HTTPServerError(.tlsCredentials, "TLS key \(keyPath): is encrypted; serve takes an unencrypted key "
                                  + "(`openssl pkey -in KEY -out KEY.plain`, readable by serve's user only)")
        case Int32(CGNUTLS_KEY_INVALID.rawValue): throw fail("TLS key \(keyPath)", "is not a PEM private key")
        case Int32(CGNUTLS_MISMATCH.rawValue):
            throw fail("TLS key \(keyPath)", "does not belong to the certificate \(certificatePath)")
        case Int32(CGNUTLS_EXPIRED.rawValue): throw fail("TLS certificate \(certificatePath)", "has expired")
        case Int32(CGNUTLS_NOT_YET_VALID.rawValue): throw fail("TLS certificate \(certificatePath)", "is not valid yet")
        default: throw fail("TLS certificate \(certificatePath)", "was refused")
        }
    }

    /// Whether a key file holds an encrypted PEM key (`ENCRYPTED PRIVATE KEY`, or the
    /// traditional `Proc-Type: 4,ENCRYPTED`), which serve cannot use without a passphrase.
    static func isEncrypted(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path), data.count < 1 << 20 else { return false }
        return String(decoding: data, as: UTF8.self).contains("ENCRYPTED")
    }
}
