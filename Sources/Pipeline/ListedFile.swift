import Foundation
import Hashing
import Warehouse

/// A file of a person's export folder, as `person import` reads it: only by the relative path
/// the manifest gives, every folder on the way and the file itself opened without following a
/// symbolic link (`openat` with `O_NOFOLLOW`), the file a regular one of at most
/// `PersonExporter.maxFileBytes`, read straight into the bytes it returns (no copy of a whole file).
enum ListedFile {
    /// Bytes read at a time while hashing a file through.
    static let chunkBytes = 1 << 20

    /// Whether `path` stays inside the folder: relative, and no empty, `.` or `..` part.
    static func isInside(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    /// The bytes of `path` under `directory`; with `sha256`, checked against it.
    static func read(_ path: String, in directory: URL, sha256: String? = nil) throws -> [UInt8] {
        let (fd, size) = try open(path, in: directory)
        defer { close(fd) }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            while count < size {
                let got = Foundation.read(fd, buffer.baseAddress! + count, size - count)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                count += got
            }
            failed = count < size
        }
        // Shorter or longer than when it was opened: changed under the import.
        var extra: UInt8 = 0
        guard !failed, Foundation.read(fd, &extra, 1) == 0 else { throw PersonExportError.fileChanged(path) }
        if let sha256, SHA256.hexString(SHA256.hash(bytes)) != sha256 { throw PersonExportError.fileChanged(path) }
        return bytes
    }

    /// Checks `file` present, within the bound and matching its SHA-256, reading it through a
    /// chunk at a time.
    static func check(_ file: PersonExportFile, in directory: URL) throws {
        let (fd, _) = try open(file.path, in: directory)
        defer { close(fd) }
        var hash = SHA256()
        var chunk = [UInt8](repeating: 0, count: chunkBytes)
        while true {
            let got = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw PersonExportError.fileChanged(file.path) }
            if got == 0 { break }
            hash.update(chunk[..<got])
        }
        guard SHA256.hexString(hash.finalize()) == file.sha256 else { throw PersonExportError.fileChanged(file.path) }
    }

    /// `path` under `directory` opened for reading, and its size. Throws `notInFolder` for a
    /// symbolic link on the way or a file that is not a regular one, `tooLarge` beyond the bound,
    /// `fileChanged` when it is missing.
    static func open(_ path: String, in directory: URL) throws -> (fd: Int32, size: Int) {
        guard isInside(path) else { throw PersonExportError.badManifest("\(path) leaves the folder") }
        let parts = path.split(separator: "/").map(String.init)
        var folder = Foundation.open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw PersonExportError.fileChanged(path) }
        for part in parts.dropLast() {
            let next = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let code = errno
            close(folder)
            guard next >= 0 else { throw code == ENOENT ? PersonExportError.fileChanged(path) : PersonExportError.notInFolder(path) }
            folder = next
        }
        // O_NONBLOCK: a FIFO put in a file's place must not hang the import; a regular file ignores it.
        let fd = openat(folder, parts[parts.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let code = errno
        close(folder)
        guard fd >= 0 else { throw code == ENOENT ? PersonExportError.fileChanged(path) : PersonExportError.notInFolder(path) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw PersonExportError.notInFolder(path)
        }
        guard info.st_size <= PersonExporter.maxFileBytes else {
            close(fd)
            throw PersonExportError.tooLarge(path, bytes: Int(info.st_size))
        }
        return (fd, Int(info.st_size))
    }
}
