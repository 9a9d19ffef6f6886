import Foundation

/// Bytes read in order, a chunk at a time: a file, or an entry of a zip archive inflated as it
/// is read.
protocol ByteStream: AnyObject {
    /// Fills the start of `buffer`; returns how many bytes were read, 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleExportError) -> Int
}

/// A file read with `read(2)`.
final class FileStream: ByteStream {
    private let descriptor: Int32
    private let path: String

    /// Opens `path` for reading.
    init(path: String) throws(AppleExportError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        self.path = path
        guard descriptor >= 0 else { throw AppleExportError("\(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close(descriptor) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleExportError) -> Int {
        while true {
            let n = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno != EINTR { throw AppleExportError("\(path): \(String(cString: strerror(errno)))") }
        }
    }
}

extension ByteStream {
    /// Calls `body` with each chunk until the end; `body` returns false to stop early.
    func forEachChunk(size: Int = 256 << 10, _ body: (UnsafeRawBufferPointer) throws(AppleExportError) -> Bool) throws(AppleExportError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try read(into: buffer)
            if n == 0 { return }
            guard try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) else { return }
        }
    }
}
