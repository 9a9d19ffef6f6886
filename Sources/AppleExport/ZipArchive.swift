import CZip

/// A zip archive read with libzip, one entry streamed at a time and inflated as it is read:
/// nothing is unpacked to disk and memory does not grow with the entry.
///
/// Why libzip rather than zlib over a hand-read central directory: the Health app's archives
/// of a few years pass 4 GiB uncompressed (zip64 sizes and offsets), entries may carry data
/// descriptors, names come UTF-8 flagged or in CP437 (`导出.xml`), and CRCs should be checked;
/// libzip does all of that, and writes archives too (`generate --format apple-export`).
final class ZipArchive {
    private let handle: OpaquePointer
    /// The archive's path, for messages.
    let path: String

    /// Opens `path` read-only.
    init(path: String) throws(AppleExportError) {
        var code: Int32 = 0
        guard let handle = zip_open(path, ZIP_RDONLY, &code) else {
            throw AppleExportError("\(path): not a zip archive libzip can read (\(Self.message(code: code)))")
        }
        self.handle = handle
        self.path = path
    }

    deinit { zip_discard(handle) }

    /// Every entry's name, in the archive's order.
    var entryNames: [String] {
        let count = zip_get_num_entries(handle, 0)
        guard count > 0 else { return [] }
        return (0..<count).map { index in zip_get_name(handle, zip_uint64_t(index), ZIP_FL_ENC_GUESS).map { String(cString: $0) } ?? "" }
    }

    /// The index of the entry named `name` (exactly, else ignoring case); nil when absent.
    func index(of name: String) -> Int? {
        var index = zip_name_locate(handle, name, ZIP_FL_ENC_GUESS)
        if index < 0 { index = zip_name_locate(handle, name, ZIP_FL_NOCASE) }
        return index < 0 ? nil : Int(index)
    }

    /// The uncompressed size of entry `index`, when the archive records it.
    func size(of index: Int) -> Int64? {
        var stat = zip_stat_t()
        zip_stat_init(&stat)
        guard zip_stat_index(handle, zip_uint64_t(index), 0, &stat) == 0, stat.valid & zip_uint64_t(ZIP_STAT_SIZE) != 0 else { return nil }
        return Int64(stat.size)
    }

    /// A stream of entry `index`'s uncompressed bytes.
    func open(_ index: Int) throws(AppleExportError) -> ByteStream {
        guard let file = zip_fopen_index(handle, zip_uint64_t(index), 0) else {
            throw AppleExportError("\(path): cannot open \(entryNames[index]): \(String(cString: zip_strerror(handle)))")
        }
        return ZipEntryStream(file: file, archive: self, name: entryNames[index])
    }

    static func message(code: Int32) -> String {
        var error = zip_error_t()
        zip_error_init_with_code(&error, code)
        defer { zip_error_fini(&error) }
        return String(cString: zip_error_strerror(&error))
    }
}

/// One entry of an open archive, inflated as it is read (libzip checks its CRC at the end).
final class ZipEntryStream: ByteStream {
    private let file: OpaquePointer
    // Keeps the archive open while the entry is read.
    private let archive: ZipArchive
    private let name: String

    init(file: OpaquePointer, archive: ZipArchive, name: String) {
        self.file = file
        self.archive = archive
        self.name = name
    }

    deinit { zip_fclose(file) }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(AppleExportError) -> Int {
        let n = zip_fread(file, buffer.baseAddress, zip_uint64_t(buffer.count))
        guard n >= 0 else {
            throw AppleExportError("\(archive.path): \(name): \(String(cString: zip_file_strerror(file)))")
        }
        return Int(n)
    }
}
