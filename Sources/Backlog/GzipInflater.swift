import CZlib

/// Streaming gzip decompression through zlib, one chunk of compressed input at a time.
///
/// `inflateInit2` with window bits 15 + 32 reads the gzip header itself. A file of several
/// gzip members (`cat a.gz b.gz`, or one `gzip >>` per body) is read through: after each
/// member's end the stream is reset for the next one, as gzip(1) does; zero padding after
/// the last member is tolerated, like gzip's.
final class GzipInflater {
    private var stream = z_stream()
    private var memberEnded = false
    private var sawInput = false
    private var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    /// Compressed bytes consumed, for error messages.
    private(set) var consumed = 0

    init() throws(BacklogError) {
        let rc = inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw BacklogError("cannot start zlib (inflateInit2 returned \(rc))") }
    }

    deinit { inflateEnd(&stream) }

    /// Inflates one chunk of compressed input, handing each piece of output to `output`.
    func inflate(_ input: UnsafeRawBufferPointer, _ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = input.baseAddress, input.count > 0 else { return }
        sawInput = true
        var offset = 0
        while offset < input.count {
            if memberEnded {
                if input[offset...].allSatisfy({ $0 == 0 }) {
                    consumed += input.count - offset
                    return
                }
                inflateReset(&stream)
                memberEnded = false
            }
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self) + offset)
            // zlib counts in 32 bits: hand it at most that much at a time.
            let available = min(input.count - offset, Int(UInt32.max))
            stream.avail_in = UInt32(available)
            while true {
                var produced = 0
                let capacity = buffer.count
                let rc: Int32 = try buffer.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(clamping: out.count)
                    let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                    produced = Int(UInt32(clamping: out.count) - stream.avail_out)
                    if produced > 0 { try output(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: out[0..<produced]))) }
                    return rc
                }
                if rc == Z_STREAM_END {
                    memberEnded = true
                    break
                }
                if rc == Z_OK {
                    if stream.avail_in == 0 && produced < capacity { break }
                    continue
                }
                if rc == Z_BUF_ERROR { break }  // wants more input
                let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(rc)"
                let at = consumed + (available - Int(stream.avail_in))
                throw BacklogError("not valid gzip data (compressed byte \(at)): \(reason)")
            }
            let next = offset + available - Int(stream.avail_in)
            consumed += next - offset
            offset = next
        }
    }

    /// Checks that the input ended where a gzip member ends.
    func finish() throws(BacklogError) {
        guard sawInput else { throw BacklogError("not valid gzip data: the file is empty") }
        guard memberEnded else { throw BacklogError("gzip data ends early, after \(consumed) compressed bytes: the file is truncated") }
    }
}
