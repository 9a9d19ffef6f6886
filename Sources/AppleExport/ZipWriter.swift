import CZip

/// Writes a zip archive with libzip, each entry's bytes pulled from a producer while the
/// archive is written (`close`), so an entry of gigabytes never sits in memory.
public final class ZipWriter {
    private var handle: OpaquePointer?
    private let path: String
    private let modified: Int

    /// Creates (or replaces) the archive at `path`; every entry carries `modified` (seconds
    /// since the epoch) as its time, so the same input gives the same bytes.
    public init(path: String, modified: Int) throws(AppleExportError) {
        var code: Int32 = 0
        guard let handle = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &code) else {
            throw AppleExportError("\(path): cannot create a zip archive (\(ZipArchive.message(code: code)))")
        }
        self.handle = handle
        self.path = path
        self.modified = modified
    }

    deinit { if let handle { zip_discard(handle) } }

    /// Adds an entry whose bytes `next` hands over chunk by chunk (nil at the end), deflated.
    /// `next` is called during `close()`, after every entry is added, in the order added.
    public func add(_ name: String, _ next: @escaping () throws -> [UInt8]?) throws(AppleExportError) {
        guard let handle else { throw AppleExportError("\(path): already closed") }
        let producer = ZipEntryProducer(next: next, modified: modified)
        let opaque = Unmanaged.passRetained(producer).toOpaque()
        guard let source = zip_source_function(handle, { userdata, data, length, command in
            Unmanaged<ZipEntryProducer>.fromOpaque(userdata!).takeUnretainedValue().handle(command, data, length, userdata!)
        }, opaque) else {
            Unmanaged<ZipEntryProducer>.fromOpaque(opaque).release()
            throw AppleExportError("\(path): \(String(cString: zip_strerror(handle)))")
        }
        let index = zip_file_add(handle, name, source, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE)
        guard index >= 0 else {
            zip_source_free(source)
            throw AppleExportError("\(path): cannot add \(name): \(String(cString: zip_strerror(handle)))")
        }
        zip_set_file_compression(handle, zip_uint64_t(index), ZIP_CM_DEFLATE, 6)
    }

    /// Writes the archive (libzip writes a temporary file beside it and renames it).
    public func close() throws {
        guard let handle else { return }
        self.handle = nil
        guard zip_close(handle) == 0 else {
            let message = String(cString: zip_strerror(handle))
            zip_discard(handle)
            throw AppleExportError("\(path): \(message)")
        }
    }
}

/// The libzip source callback's state for one entry: a chunk in hand and the producer.
private final class ZipEntryProducer {
    let next: () throws -> [UInt8]?
    let modified: Int
    var chunk: [UInt8] = []
    var offset = 0
    var failed = false

    init(next: @escaping () throws -> [UInt8]?, modified: Int) {
        self.next = next
        self.modified = modified
    }

    /// libzip's source protocol (zip_source_function(3)).
    func handle(_ command: zip_source_cmd_t, _ data: UnsafeMutableRawPointer?, _ length: zip_uint64_t,
                _ userdata: UnsafeMutableRawPointer) -> zip_int64_t {
        switch command {
        case ZIP_SOURCE_OPEN:
            return 0
        case ZIP_SOURCE_READ:
            while offset == chunk.count {
                do {
                    guard let more = try next() else { return 0 }
                    chunk = more
                    offset = 0
                } catch {
                    failed = true
                    return -1
                }
            }
            let n = min(Int(length), chunk.count - offset)
            chunk.withUnsafeBytes { data!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            offset += n
            return zip_int64_t(n)
        case ZIP_SOURCE_CLOSE:
            return 0
        case ZIP_SOURCE_STAT:
            let stat = data!.assumingMemoryBound(to: zip_stat_t.self)
            zip_stat_init(stat)
            stat.pointee.mtime = time_t(modified)
            stat.pointee.valid |= zip_uint64_t(ZIP_STAT_MTIME)
            return zip_int64_t(MemoryLayout<zip_stat_t>.size)
        case ZIP_SOURCE_ERROR:
            let codes = data!.assumingMemoryBound(to: Int32.self)
            codes[0] = failed ? ZIP_ER_READ : 0
            codes[1] = 0
            return zip_int64_t(2 * MemoryLayout<Int32>.size)
        case ZIP_SOURCE_FREE:
            Unmanaged<ZipEntryProducer>.fromOpaque(userdata).release()
            return 0
        case ZIP_SOURCE_SUPPORTS:
            let commands: [zip_source_cmd_t] = [ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                                ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SUPPORTS]
            return commands.reduce(0) { $0 | (zip_int64_t(1) << zip_int64_t($1.rawValue)) }
        default:
            return -1
        }
    }
}
