import Backlog
import DemoData
import Foundation
import HealthPayload
import Pipeline
import Postgres
import TestSupport
import Warehouse

/// A temporary folder, removed by `remove()`.
struct TempFolder {
    let url: URL
    var path: String { url.path }

    init(_ label: String = "backlog") throws {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("hw-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes a file (folders created as needed) and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
        return file.path
    }

    /// Appends to a file.
    func append(_ name: String, _ bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: url.appendingPathComponent(name))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Small bodies with known uuids and values, in both formats.
enum TestBodies {
    /// `A1B2C3D4-0000-4000-8000-00000000000n`
    static func uuid(_ n: Int) -> String {
        let digits = String(n)
        return "A1B2C3D4-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
    }

    static func exportId(_ n: Int) -> String {
        let digits = String(n)
        return "6C7F1E22-1B3D-4A5E-9F00-" + String(repeating: "0", count: 12 - digits.count) + digits
    }

    /// A JSON body of step samples `(uuid number, steps)`.
    static func json(export: Int, sequence: Int = 1, isFinal: Bool = true, steps: [(Int, Int)], schemaVersion: String = "1") -> [UInt8] {
        Bodies.json(samples: steps.map { Bodies.quantity(uuid: uuid($0.0), start: "2026-08-21T10:25:30.000+02:00", value: String($0.1)) },
                    exportId: exportId(export), sequence: sequence, isFinal: isFinal, schemaVersion: schemaVersion)
    }

    /// A CSV body (header row, LF after every row) of step samples, written by DemoData.
    static func csv(export: Int, sequence: Int = 1, isFinal: Bool = true, steps: [(Int, Int)]) -> [UInt8] {
        let stamp = Bodies.instant("2026-08-21T12:00:00.000+02:00"), from = Bodies.instant("2026-08-20T12:00:00.000+02:00")
        let at = Bodies.instant("2026-08-21T10:25:30.000+02:00").millisecondsSinceEpoch
        let envelope = DemoEnvelope(exportId: exportId(export), generatedAt: stamp.millisecondsSinceEpoch, batchSequence: sequence,
                                    isFinalBatch: isFinal, windowStart: from.millisecondsSinceEpoch, windowEnd: stamp.millisecondsSinceEpoch,
                                    occasionStart: from.millisecondsSinceEpoch, occasionEnd: stamp.millisecondsSinceEpoch, offsetMinutes: 120)
        return DemoEncoder.csv(envelope, steps.map { n, value in
            DemoSample(uuid: uuid(n), type: .steps, source: "com.apple.Health", start: at, end: at, value: String(value),
                       id: String(repeating: "b", count: 64))
        })
    }

    /// Lines joined with LF, each terminated.
    static func lines(_ bodies: [[UInt8]]) -> [UInt8] {
        bodies.flatMap { $0 + [0x0A] }
    }
}

/// gzip(1) output for a fixture (the ingest side inflates with zlib itself).
func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let folder = try TempFolder("gz")
    defer { folder.remove() }
    let path = try folder.write("in", bytes)
    // ProcessRunner, not Foundation's Process: its waitUntilExit can hang on the concurrency
    // threads tests run on.
    let result = try ProcessRunner.run("/bin/sh", ["-c", "gzip -c -n \"$0\" > \"$0.gz\"", path])
    guard result.status == 0 else { throw BacklogError("gzip failed: \(result.output)") }
    return Array(try Data(contentsOf: URL(fileURLWithPath: path + ".gz")))
}

/// Runs an ingest over a test database.
func ingest(_ db: TestDatabase, _ paths: [String], person: String = "default", format: BacklogFormat? = nil,
            force: Bool = false, haeAggregation: HAEAggregation? = nil) -> IngestSummary {
    let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
    defer { pool.close() }
    return Ingester(pool: pool, options: IngestOptions(person: person, format: format, force: force, haeAggregation: haeAggregation))
        .run(paths)
}

/// What a database holds.
struct Held: Equatable {
    var samples: Int
    var deliveries: Int
    var ledger: Int
}

func held(_ db: TestDatabase) throws -> Held {
    let row = try requireRow(db.query("""
        SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries),
               (SELECT count(*) FROM health_store.ingested_files)
        """))
    return Held(samples: try row.decode(0), deliveries: try row.decode(1), ledger: try row.decode(2))
}

func requireRow(_ rows: PostgresRows) throws -> PostgresRow {
    guard let first = rows.first else { throw BacklogError("no row") }
    return first
}

/// The file's path as the ledger and deliveries hold it.
func real(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// Sets a file's modification time (seconds since the epoch).
func setModified(_ path: String, seconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    _ = utimensat(AT_FDCWD, path, &times, 0)
}
