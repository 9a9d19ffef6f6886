import Foundation
import Hashing
import Postgres

/// What a file of a person's export holds, and so what reads it back (its `kind` in
/// `manifest.json`).
public enum PersonFileKind: String, Sendable, CaseIterable {
    /// A healthd v1 body (`ingest`).
    case healthd
    /// A healthd v1 body of samples that came from the Health app's export.
    case appleExport = "apple-export"
    /// A route that came with the Health app's export, as stored.
    case appleExportRoute = "apple-export-route"
    /// A healthd v1 body of Health Auto Export's samples.
    case hae
    /// A route Health Auto Export brought, as stored.
    case haeRoute = "hae-route"
    /// A stream Health Auto Export brought, as stored.
    case haeStream = "hae-stream"
    /// What Health Auto Export's workouts filled in workouts of other ways in, as stored.
    case haeFills = "hae-fills"
    /// A Health Auto Export body of its other arrays' items.
    case haeRecords = "hae-records"
    /// A Stridee `healthkit.v1` body.
    case workout
    /// A `healthkit.wellness.v1` body.
    case wellness
    /// The activity summaries.
    case activitySummaries = "activity-summaries"
    /// The marks a reconciliation made, and the reconciliations.
    case deletions
    /// The person's settings.
    case settings
}

/// A file of a person's export, as `manifest.json` lists it.
public struct PersonExportFile: Sendable, Equatable {
    /// What it holds and what reads it back.
    public var kind: PersonFileKind
    /// The path under the export's folder.
    public var path: String
    /// Samples, items or summaries in it (1 for a workout or the settings).
    public var items: Int
    /// SHA-256 of the file, hex.
    public var sha256: String
    /// A workout's body SHA-256 as first stored (the workout sample's `id`), hex; nil otherwise.
    public var storedSHA256: String?

    public init(kind: PersonFileKind, path: String, items: Int, sha256: String, storedSHA256: String? = nil) {
        self.kind = kind
        self.path = path
        self.items = items
        self.sha256 = sha256
        self.storedSHA256 = storedSHA256
    }
}

/// Why an export or an import of a person's folder was refused.
public enum PersonExportError: Error, CustomStringConvertible, Equatable {
    /// `--to` names a folder that holds something, or a file.
    case notEmpty(String)
    /// The manifest is missing or not one this version writes.
    case badManifest(String)
    /// A file the manifest lists is missing or its SHA-256 differs.
    case fileChanged(String)
    /// A file is larger than `PersonExporter.maxFileBytes`: an import refuses it, so an export never writes it.
    case tooLarge(String, bytes: Int)
    /// A file the manifest lists is a symbolic link, lies behind one, or is not a regular file.
    case notInFolder(String)

    public var description: String {
        switch self {
        case .notEmpty(let path): return "\(path) is not an empty folder: a person's export goes into a new or empty one"
        case .badManifest(let why): return "manifest.json: \(why)"
        case .fileChanged(let path): return "\(path) is missing or differs from its SHA-256 in manifest.json"
        case .tooLarge(let path, let bytes):
            return "\(path) is \(bytes) bytes; a file of a person's export is at most \(PersonExporter.maxFileBytes >> 20) MiB"
        case .notInFolder(let path):
            return "\(path) is a symbolic link, lies behind one, or is not a regular file: only regular files inside the folder are read"
        }
    }
}

/// `person export P --to DIR` (docs/people.md): everything held for a person, in formats this
/// warehouse reads back, read in one snapshot row by row (libpq's single-row mode: memory does
/// not grow with the person's history) and written one body per file, each hashed into `manifest.json`.
public struct PersonExporter: Sendable {
    /// Samples in one healthd body.
    public static let samplesPerBody = 1000
    /// Wellness items in one body (the receiver takes at most 2,000 and 10 MiB).
    public static let itemsPerBody = 200
    /// A body of samples or wellness items is cut early when its rows take this much as stored
    /// (`pg_column_size`, compressed), so a history of large payloads stays in files an import reads.
    public static let storedBytesPerBody = 16 << 20
    /// The largest file an export writes and an import reads (a backlog body's bound): a
    /// Stridee workout sent at the receiver's 30 MiB comes back a little larger (33.6 MB for 31.3 MB).
    public static let maxFileBytes = 256 << 20
    /// The manifest's `format`.
    public static let format = "health-warehouse.person-export.v1"

    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Exports `person` into `directory` (absent or empty) and returns the files written, the
    /// manifest last. Throws `UnknownPersonError` when nothing of the person is held.
    public func export(person: String, to directory: URL) throws -> [PersonExportFile] {
        // Checked before the folder is made: an unknown person leaves nothing behind.
        guard try PersonStore(pool: pool).exists(person) else { throw UnknownPersonError(person: person) }
        try Self.prepare(directory)
        return try pool.withTransaction { connection in
            try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            let writer = FolderWriter(directory: directory)
            var files = try PersonExportQueries.write(person: person, on: connection, into: writer)
            files.append(try writer.write("settings.json", kind: .settings, items: 1,
                                          Array(try PersonStore(pool: pool).settingsJSON(person, on: connection).utf8)))
            try writer.writeManifest(person: person, files: files)
            return files
        }
    }

    /// Refuses a folder that exists and holds anything (nothing is written then); creates it
    /// otherwise. Either way it ends mode 0700: it will hold health data.
    static func prepare(_ directory: URL) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder) {
            let entries = isFolder.boolValue ? try FileManager.default.contentsOfDirectory(atPath: directory.path) : ["file"]
            guard entries.isEmpty else { throw PersonExportError.notEmpty(directory.path) }
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
    }
}

/// Writes the files of one export and remembers their hashes: folders 0700 and files 0600 from
/// the start (`PrivateFile`), none larger than an import reads.
struct FolderWriter {
    let directory: URL

    /// Writes `bytes` to `path` (its folder made on first use) and describes the file.
    func write(_ path: String, kind: PersonFileKind, items: Int, _ bytes: [UInt8], storedSHA256: String? = nil) throws -> PersonExportFile {
        guard bytes.count <= PersonExporter.maxFileBytes else { throw PersonExportError.tooLarge(path, bytes: bytes.count) }
        let url = directory.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try PrivateFile.create(url.path, bytes)
        return PersonExportFile(kind: kind, path: path, items: items, sha256: SHA256.hexString(SHA256.hash(bytes)),
                                storedSHA256: storedSHA256)
    }

    /// `manifest.json`: the format, the person, the counts per kind and every file with its SHA-256.
    func writeManifest(person: String, files: [PersonExportFile]) throws {
        var counts: [String: Int] = [:]
        for file in files { counts[file.kind.rawValue, default: 0] += file.items }
        let listed: [[String: Any]] = files.map { file in
            var entry: [String: Any] = ["kind": file.kind.rawValue, "path": file.path, "items": file.items, "sha256": file.sha256]
            if let stored = file.storedSHA256 { entry["stored_sha256"] = stored }
            return entry
        }
        let manifest: [String: Any] = ["format": PersonExporter.format, "person": person, "counts": counts, "files": listed]
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys, .prettyPrinted])
        let path = directory.appendingPathComponent("manifest.json").path
        try data.withUnsafeBytes { raw in try PrivateFile.create(path, raw) }
    }
}
