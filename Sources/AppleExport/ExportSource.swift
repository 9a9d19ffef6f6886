import Foundation
import HealthPayload

/// Where an export's bytes are: the Health app's `export.zip`, its unpacked
/// `apple_health_export` folder, or an `export.xml` alone. Finds the export document (named
/// `export.xml`, `Export.xml`, or in the phone's language, `导出.xml`, `Exportieren.xml`, …)
/// and the route files its `FileReference`s name.
///
/// Sendable by discipline: only the reading thread of an import opens streams (the libzip
/// handle is used by one thread); other threads read only its constant names.
public final class ExportSource: @unchecked Sendable {
    enum Kind {
        case zip(ZipArchive, entry: Int, root: String)
        case folder(root: URL)
    }

    /// PATH as given, made absolute (symlinks resolved): what the deliveries and the ledger name.
    public let path: String
    /// The export document: the archive entry or the file.
    public let documentName: String
    /// The file whose size, time and hash identify the export: the archive, or the document.
    public let identityPath: String
    /// True for an archive.
    public let isArchive: Bool
    /// The document's size in bytes (uncompressed), when known: for progress.
    public let documentSize: Int64?
    private let kind: Kind
    private let documentPath: String

    /// Resolves `path`; throws when it is none of the three, holds no export document, or its
    /// document is empty (0 bytes).
    public init(path given: String) throws(AppleExportError) {
        let url = URL(fileURLWithPath: given).standardizedFileURL.resolvingSymlinksInPath()
        path = url.path
        // The ledger keys its row by this path (health_store.ingested_files), an index entry.
        if let excess = TextLimit.excess(path) { throw AppleExportError("\(given): its path is \(excess)") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw AppleExportError("\(given): no such file or folder")
        }
        if isDirectory.boolValue {
            guard let document = Self.document(in: url) else {
                throw AppleExportError("\(given): no export.xml in this folder or its apple_health_export folder")
            }
            guard let real = Self.realPath(document.path), real.hasPrefix(path + "/") else {
                throw AppleExportError("\(given): \(document.lastPathComponent) is a link out of the folder; give the file it leads to itself")
            }
            kind = .folder(root: document.deletingLastPathComponent())
            documentPath = document.path
            documentName = document.path
            identityPath = document.path
            isArchive = false
            documentSize = Self.fileSize(document.path)
        } else if Self.fileSize(path) == 0 {
            throw AppleExportError("\(given): the file is empty (0 bytes): not the Health app's export")
        } else if Self.isZip(path) || path.lowercased().hasSuffix(".zip") {
            // By its bytes first; a file named .zip that does not start like one goes to libzip
            // too, which reads it or says it is not an archive (never read as XML).
            let archive = try ZipArchive(path: path)
            let names = archive.entryNames
            guard let entry = Self.documentEntry(names) else {
                throw AppleExportError("\(given): the archive holds no export.xml (looked for apple_health_export/export.xml and the like)")
            }
            let name = names[entry]
            let root = name.contains("/") ? String(name[..<name.lastIndex(of: "/")!]) + "/" : ""
            kind = .zip(archive, entry: entry, root: root)
            documentPath = name
            documentName = "\(path): \(name)"
            identityPath = path
            isArchive = true
            documentSize = archive.size(of: entry)
        } else {
            kind = .folder(root: url.deletingLastPathComponent())
            documentPath = path
            documentName = path
            identityPath = path
            isArchive = false
            documentSize = Self.fileSize(path)
        }
        // A folder's or archive's export document of no bytes is no export (read, it would give
        // "0 records read" and exit 0).
        if documentSize == 0 { throw AppleExportError("\(documentName) is empty (0 bytes): not the Health app's export") }
    }

    /// The export document's bytes.
    func openDocument() throws(AppleExportError) -> ByteStream {
        switch kind {
        case .zip(let archive, let entry, _): return try archive.open(entry)
        case .folder: return try FileStream(path: documentPath)
        }
    }

    /// Where a file a `FileReference` names is: one answer per file however the reference
    /// spells it (`/./x`, `a//x`, `a/../a/x`, and in an archive the letter case libzip's
    /// lookup ignores), so a route file is read once per workout.
    enum Referenced: Hashable {
        /// An entry of the archive.
        case entry(Int)
        /// A file of the folder, by its real path.
        case file(String)
        /// The export holds no such file.
        case missing
        /// The path climbs out of the export's folder, or a link there leads out of it.
        case outside
    }

    /// Finds the file a `FileReference` names (`/workout-routes/route_….gpx`, relative to the
    /// export's folder). A folder's files are followed only as far as they stay in it.
    func locate(_ reference: String) -> Referenced {
        guard let relative = Self.normalized(reference) else { return .outside }
        switch kind {
        case .zip(let archive, _, let root):
            return archive.index(of: root + relative).map { .entry($0) } ?? .missing
        case .folder(let root):
            let path = root.appendingPathComponent(relative).path
            guard let real = Self.realPath(path) else { return .missing }
            guard let folder = Self.realPath(root.path), real.hasPrefix(folder == "/" ? "/" : folder + "/") else { return .outside }
            return FileManager.default.isReadableFile(atPath: real) ? .file(real) : .missing
        }
    }

    /// The bytes of a file `locate` found.
    func open(_ file: Referenced) throws(AppleExportError) -> ByteStream? {
        switch (kind, file) {
        case (.zip(let archive, _, _), .entry(let index)): return try archive.open(index)
        case (.folder, .file(let path)): return try FileStream(path: path)
        default: return nil
        }
    }

    /// `reference` as a path relative to the export's folder, `.` and `..` resolved; nil when
    /// it names nothing or climbs out of the folder.
    static func normalized(_ reference: String) -> String? {
        var parts: [Substring] = []
        for part in reference.split(separator: "/") where part != "." {
            if part == ".." {
                guard parts.popLast() != nil else { return nil }
            } else {
                parts.append(part)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "/")
    }

    /// The absolute path with every link resolved; nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the file starts like a zip archive (a local file header, or an empty archive).
    static func isZip(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 4)) ?? Data())
        return head == [0x50, 0x4B, 0x03, 0x04] || head == [0x50, 0x4B, 0x05, 0x06]
    }

    /// The export document among an archive's entries: `export.xml` (any case) at the top or one
    /// folder down, else the largest other `.xml` there that is not the clinical `export_cda.xml`.
    static func documentEntry(_ names: [String]) -> Int? {
        let candidates = names.indices.filter { i in
            let parts = names[i].split(separator: "/", omittingEmptySubsequences: false)
            return parts.count <= 2 && Self.isDocumentName(String(parts.last!))
        }
        return candidates.first { names[$0].split(separator: "/").last!.lowercased() == "export.xml" } ?? candidates.first
    }

    /// The export document in a folder: in it, or in its `apple_health_export` folder.
    static func document(in folder: URL) -> URL? {
        for candidate in [folder, folder.appendingPathComponent("apple_health_export")] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: candidate.path) else { continue }
            let documents = names.filter(isDocumentName).sorted()
            if let name = documents.first(where: { $0.lowercased() == "export.xml" }) ?? documents.max(by: {
                (fileSize(candidate.appendingPathComponent($0).path) ?? 0) < (fileSize(candidate.appendingPathComponent($1).path) ?? 0)
            }) {
                return candidate.appendingPathComponent(name)
            }
        }
        return nil
    }

    /// An XML file's name that is not the clinical document (`export_cda.xml`, `导出_cda.xml`).
    static func isDocumentName(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasSuffix(".xml") && !lower.hasSuffix("_cda.xml") && !lower.hasPrefix(".")
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}
