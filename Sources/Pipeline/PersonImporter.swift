import AppleExport
import Foundation
import Hashing
import HealthPayload
import Postgres
import Warehouse

/// What `person import` stored, per kind of file.
public struct PersonImportSummary: Sendable, Equatable {
    /// Samples of the healthd and Health-app-export bodies.
    public var samples = 0
    public var workouts = 0
    public var wellnessItems = 0
    public var activitySummaries = 0
    /// Files that failed, named with the reason (the import goes on with the others).
    public var failures: [String] = []
}

/// `person import P --from DIR` (docs/people.md): reads a folder `person export` wrote back whole,
/// the manifest checked first (every file present with its SHA-256 and within
/// `PersonExporter.maxFileBytes`, nothing stored otherwise). Only the files the manifest lists are
/// read, each as a regular file inside the folder (no symbolic link on the way), one at a time.
/// Settings come first (days are right as samples are stored), then the healthd bodies through
/// the one pipeline (`Ingester`), the Health app's export's and Health Auto Export's samples with
/// their origin (and the latter's routes, streams and other arrays), the
/// Stridee workouts (with the body hash first stored, the workout sample's `id`) and wellness,
/// the activity summaries, the deletion marks, and the settings again (the connection as it was).
public struct PersonImporter: Sendable {
    let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Imports `directory` as `person`.
    public func run(person: String, from directory: URL) throws -> PersonImportSummary {
        let files = try Self.checkedManifest(directory)
        let people = PersonStore(pool: pool)
        let settings = try files.first { $0.kind == .settings }.map { try Self.read($0, in: directory) }
        if let settings { try people.restoreSettings(settings, person: person) }
        var summary = PersonImportSummary()
        // The healthd bodies the manifest lists, by name (never the folder's other files): none
        // for a person who only has Stridee data.
        let bodies = files.filter { $0.kind == .healthd }.map { directory.appendingPathComponent($0.path).path }
        if !bodies.isEmpty {
            let healthd = Ingester(pool: pool, options: IngestOptions(person: person)).run(bodies)
            summary.samples += healthd.samples
            summary.failures += healthd.failures.map { "\($0.path): \($0.message)" }
        }
        storeOthers(files.filter { ![.healthd, .settings, .deletions].contains($0.kind) }, in: directory, person: person,
                    into: &summary)
        // Marks last: every sample they name is held by now (a Stridee workout's own sample too).
        if let deletions = try files.first(where: { $0.kind == .deletions }).map({ try Self.read($0, in: directory) }) {
            try pool.withTransaction { connection in
                try connection.query("SELECT health_store.restore_deletions($1, $2::jsonb)", [person, PostgresBinaryText(deletions)])
            }
        }
        if let settings { try people.restoreSettings(settings, person: person) }
        return summary
    }

    /// A listed file read ahead of its storing (`readAhead`).
    struct ReadFile: Sendable {
        var bytes: [UInt8]
        /// A body of samples' (apple-export, hae) batches, ready to store; nil for other kinds.
        var batches: [Batch]?
    }

    /// Stores `files` in their order, each read (and a body of samples decoded) on a thread of its
    /// own while the one before is stored, one file ahead (`WorkQueue`, as the pipeline reads
    /// ahead); a file that fails is named in `summary` and the others go on.
    func storeOthers(_ files: [PersonExportFile], in directory: URL, person: String, into summary: inout PersonImportSummary) {
        let queue = WorkQueue<(PersonExportFile, Result<ReadFile, any Error>)>(capacity: 1)
        let readerDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            for file in files where !queue.put((file, Result { try Self.readAhead(file, in: directory) })) { break }
            queue.finish()
            readerDone.signal()
        }
        reader.name = "person-import-reader"
        reader.start()
        while let (file, read) = queue.take() {
            do {
                try store(file, try read.get(), person: person, into: &summary)
            } catch {
                summary.failures.append("\(file.path): \(error)")
            }
        }
        readerDone.wait()
    }

    /// A listed file's bytes and, for a body of samples, its batches as they are stored: the
    /// quarantined samples kept (`keepingAll`), the Health app's records with their shared members
    /// and creation date apart again, as the import stored them (`GivenBackRecords`).
    static func readAhead(_ file: PersonExportFile, in directory: URL) throws -> ReadFile {
        let bytes = try read(file, in: directory)
        guard file.kind == .appleExport || file.kind == .hae else { return ReadFile(bytes: bytes) }
        guard case .batches(let batches) = try PayloadDecoder.decode(json: bytes) else { return ReadFile(bytes: bytes, batches: []) }
        var kept = batches.map(keepingAll)
        if file.kind == .appleExport {
            for i in kept.indices { kept[i].samplesJSON = try GivenBackRecords.sharedApart(samplesJSON: kept[i].samplesJSON) }
        }
        return ReadFile(bytes: bytes, batches: kept)
    }

    /// Stores one file of a kind other than `healthd` and `settings`, read ahead.
    func store(_ file: PersonExportFile, _ read: ReadFile, person: String, into summary: inout PersonImportSummary) throws {
        let bytes = read.bytes
        switch file.kind {
        case .appleExport, .hae:
            guard let batches = read.batches, !batches.isEmpty else { return }
            let origin: DeliveryOrigin = file.kind == .hae ? .hae(path: file.path) : .export(path: file.path)
            let counts = try BatchStore(pool: pool).store(batches, person: person, origin: origin, bodySHA256: SHA256.hash(bytes))
            summary.samples += counts.samples
        case .haeRecords:
            let body = try HAEDecoder.decode(bytes, aggregation: nil)
            _ = try HAEStore.store(body, person: person, bodySHA256: SHA256.hash(bytes), pool: pool)
        case .haeStream:
            try pool.withTransaction { connection in
                try connection.query("SELECT health_store.restore_stream($1, $2::jsonb)", [person, PostgresBinaryText(bytes)])
            }
        case .workout:
            let workout = try StrideeDecoder.decodeWorkout(bytes)
            let stored = file.storedSHA256.flatMap(Self.bytes(hex:)) ?? SHA256.hash(bytes)
            _ = try StrideeStore(pool: pool).storeWorkout(workout, person: person, connect: true, bodySHA256: stored)
            summary.workouts += 1
        case .haeFills:
            try pool.withTransaction { connection in
                try connection.query("SELECT health_store.restore_workout_fills($1, $2::jsonb)", [person, PostgresBinaryText(bytes)])
            }
        case .appleExportRoute, .haeRoute:
            try pool.withTransaction { connection in
                try connection.query("SELECT health_store.restore_route($1, $2::jsonb)", [person, PostgresBinaryText(bytes)])
            }
        case .wellness:
            let items = try StrideeDecoder.decodeWellness(bytes)
            summary.wellnessItems += try StrideeStore(pool: pool).storeWellness(items, person: person, connect: true).stored
        case .activitySummaries:
            try pool.withTransaction { connection in
                try connection.query("SELECT health_store.lock_person($1)", [person])
                try ExportStore.storeActivitySummaries(bytes, person: person, on: connection)
            }
            summary.activitySummaries += file.items
        case .healthd, .settings, .deletions:
            return  // read by `import` itself, before and after the others
        }
    }

    /// `batch` with its quarantined samples stored like the others: a sample the Health app's
    /// export brought is kept as the import made it (a category value by name, say), which a
    /// healthd body would not carry. Each is its verbatim text, so its payload comes back as it was.
    static func keepingAll(_ batch: Batch) -> Batch {
        guard !batch.quarantined.isEmpty else { return batch }
        var json = Array(batch.samplesJSON.dropLast())
        for (i, sample) in batch.quarantined.enumerated() {
            if batch.validSampleCount > 0 || i > 0 { json.append(UInt8(ascii: ",")) }
            json += Array(sample.raw.utf8)
        }
        json.append(UInt8(ascii: "]"))
        return Batch(format: batch.format, envelope: batch.envelope, samplesJSON: json,
                     validSampleCount: batch.sampleCount, quarantined: [])
    }

    /// The manifest's files, each checked present, within the bound and with its SHA-256 (read
    /// through, never held whole); throws before anything is stored.
    static func checkedManifest(_ directory: URL) throws -> [PersonExportFile] {
        let text: [UInt8]
        do {
            text = try ListedFile.read("manifest.json", in: directory)
        } catch PersonExportError.fileChanged {
            throw PersonExportError.badManifest("missing in \(directory.path)")
        }
        guard let manifest = try? JSONSerialization.jsonObject(with: Data(text)) as? [String: Any] else {
            throw PersonExportError.badManifest("not a JSON object in \(directory.path)")
        }
        guard manifest["format"] as? String == PersonExporter.format, let listed = manifest["files"] as? [[String: Any]] else {
            throw PersonExportError.badManifest("not a \(PersonExporter.format) manifest")
        }
        let files = try listed.map { entry in
            guard let name = entry["kind"] as? String, let path = entry["path"] as? String, let sha = entry["sha256"] as? String,
                  ListedFile.isInside(path) else {
                throw PersonExportError.badManifest("a file entry lacks kind, path or sha256, or leaves the folder")
            }
            guard let kind = PersonFileKind(rawValue: name) else {
                throw PersonExportError.badManifest("unknown kind \"\(name)\" (\(path))")
            }
            return PersonExportFile(kind: kind, path: path, items: entry["items"] as? Int ?? 0, sha256: sha,
                                    storedSHA256: entry["stored_sha256"] as? String)
        }
        for file in files { try ListedFile.check(file, in: directory) }
        return files
    }

    /// A listed file's bytes, checked against its SHA-256.
    static func read(_ file: PersonExportFile, in directory: URL) throws -> [UInt8] {
        try ListedFile.read(file.path, in: directory, sha256: file.sha256)
    }

    /// Bytes of a hex text; nil when it is not hex.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }
}
