import AppleExport
import Foundation
import Pipeline
import Postgres
import Synchronization
import Testing
import TestSupport

/// The exports the tests read: the hand-written fixture in this folder, and the real ones in
/// ../shared/external/apple-health (read in place, never copied: several carry no licence).
enum Exports {
    /// `Fixtures/small-export`, an unpacked export (apple_health_export/export.xml and a GPX route).
    static var fixtureFolder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/small-export")
    }

    /// The fixture's export.xml.
    static var fixtureXML: URL { fixtureFolder.appendingPathComponent("apple_health_export/export.xml") }

    /// ../shared/external/apple-health beside the repository, when it is there.
    static var external: URL? {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/external/apple-health")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// A fresh temporary folder.
    static func temporaryFolder() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("hw-export-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Zips a folder's files (names relative to it, in name order) with libzip, as the phone does.
    static func zip(_ folder: URL, to archive: URL) throws {
        let writer = try ZipWriter(path: archive.path, modified: 1_710_230_400)
        let files = FileManager.default.enumerator(atPath: folder.path)!.compactMap { $0 as? String }.sorted()
        for name in files {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path, isDirectory: &isDirectory)
            guard !isDirectory.boolValue else { continue }
            var bytes: [UInt8]? = Array(try Data(contentsOf: folder.appendingPathComponent(name)))
            try writer.add(name) {
                defer { bytes = nil }
                return bytes
            }
        }
        try writer.close()
    }
}

/// Running an import in-process against a test database.
struct Importing {
    let database: TestDatabase
    var person = "default"

    /// Imports `path`; returns the summary and the elements skipped, in order.
    @discardableResult
    func run(_ path: String, shouldStop: @escaping @Sendable () -> Bool = { false }) throws -> (ImportSummary, [SkippedElement]) {
        let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 2)
        defer { pool.close() }
        let skipped = Mutex<[SkippedElement]>([])
        let summary = try AppleExportImporter(pool: pool, person: person).run(path, shouldStop: shouldStop, onSkipped: { s in
            skipped.withLock { $0.append(s) }
        })
        return (summary, skipped.withLock { $0 })
    }
}

extension TestDatabase {
    /// Every row of a query as text cells (NULL as nil), columns in order.
    func rows(_ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> [[String?]] {
        let result = try query(sql, parameters)
        return result.map { row in (0..<result.columns.count).map { row[$0] } }
    }

    /// Every table an import writes, as sorted text: equal for two databases holding the same
    /// rows (a sample's export_id, the run that brought it, left out).
    func importedRows() throws -> [String: [String]] {
        let tables = [
            "samples": "SELECT person, uuid, id, type, grp, kind, source, start_at, end_at, day, value, unit, category_name, activity_type, activity_name, duration_s, distance_m, energy_kcal, payload, origin, coalesced FROM health_store.samples",
            "routes": "SELECT person, uuid, origin, t, lat, lon, altitude_m, speed_mps, course_deg, horizontal_accuracy_m, vertical_accuracy_m, points, distance_m, elevation_gain_m FROM health_store.workout_routes",
            "summaries": "SELECT person, day, active_energy_kcal, active_energy_goal_kcal, exercise_min, exercise_goal_min, stand_hours, stand_goal_hours, summary FROM health_store.activity_summaries",
            "rollup_source": "SELECT * FROM health_store.rollup_source",
            "rollup_day_type": "SELECT * FROM health_store.rollup_day_type",
            "rollup_day": "SELECT * FROM health_store.rollup_day",
        ]
        var out: [String: [String]] = [:]
        for (name, sql) in tables {
            out[name] = try rows(sql).map { $0.map { $0 ?? "∅" }.joined(separator: "|") }.sorted()
        }
        return out
    }

    /// `health_store.verify_rollups(person)`'s differences: none when the rollups equal a recompute.
    func rollupDifferences(_ person: String = "default") throws -> Int {
        try scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [person], as: Int.self) ?? -1
    }
}
