import Foundation
import Hashing
import HealthPayload

/// The file that identifies an export (the archive, or export.xml): size, modification time
/// and, when asked, its SHA-256.
public struct FileIdentity: Sendable {
    /// The file's path.
    public let path: String
    /// Its size in bytes and modification time (ns since the epoch).
    public let size: Int64
    public let modifiedNanoseconds: Int64

    /// The identity of the file at `path`, from `stat`.
    public init(_ path: String) throws(AppleExportError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw AppleExportError("\(path): \(String(cString: strerror(errno)))") }
        self.path = path
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    /// The whole file's SHA-256.
    public func sha256() throws(AppleExportError) -> [UInt8] {
        var hash = SHA256()
        try FileStream(path: path).forEachChunk(size: 1 << 20) { chunk in
            hash.update(chunk)
            return true
        }
        return hash.finalize()
    }

    /// The modification time in ISO 8601 (UTC): the generatedAt of an export without an ExportDate.
    public var modifiedText: String {
        Timestamp(microsecondsSinceEpoch: modifiedNanoseconds / 1000, offsetSeconds: 0).description
    }
}
