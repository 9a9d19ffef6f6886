#if canImport(Glibc)
import Glibc
#endif

/// Creating or writing a private file failed: which step, which file, and `errno`.
public struct PrivateFileError: Error, CustomStringConvertible {
    /// `create` or `write`.
    public var step: String
    public var path: String
    /// `errno` of the failing call.
    public var code: Int32

    public var description: String { "cannot \(step) \(path): \(String(cString: strerror(code)))" }
}

/// Files only their owner may read, made so from the start: created with mode 0600 by
/// `O_CREAT|O_EXCL|O_NOFOLLOW` — never an existing file, never a symbolic link's target, never
/// readable by anyone else for a moment before a `chmod`.
public enum PrivateFile {
    /// Creates `path` (mode 0600) and writes all of `bytes` to it. Throws `PrivateFileError`
    /// (`code` `EEXIST` when something is there already).
    public static func create(_ path: String, _ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try create(path, $0) }
    }

    /// `create(_:_:)` of bytes in memory that is not an array.
    public static func create(_ path: String, _ bytes: UnsafeRawBufferPointer) throws(PrivateFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw PrivateFileError(step: "create", path: path, code: errno) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let written = write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw PrivateFileError(step: "write", path: path, code: errno)
            }
            offset += written
        }
    }
}
