import Foundation
import Testing
import TestSupport

/// The text bound on the command line: a file path the ingest ledger keys by, and a time zone
/// name, are bounded at 1,024 bytes where they enter, named, before anything is stored.
@Suite("Text bounds on the command line")
struct TextBoundsCLITests {
    /// A path of exactly `bytes` bytes under `base` (itself free of symlinks), ending in
    /// `suffix`, made of nested folders of at most 201 bytes a name.
    static func path(bytes: Int, under base: String, suffix: String) -> String {
        var path = base
        while bytes - path.utf8.count - 1 > 255 {
            path += "/" + String(repeating: "d", count: 200)
        }
        let left = bytes - path.utf8.count - 1
        return path + "/" + String(repeating: "f", count: left - suffix.utf8.count) + suffix
    }

    /// A fresh folder with symlinks resolved (the ledger keeps resolved paths).
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "hw-bounds-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
    }

    @Test("ingest: a file whose resolved path is 1,024 bytes is stored with its ledger row; one of 1,025 fails naming its path's length, exit 1, nothing of it stored")
    func ingestPath() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let longest = Self.path(bytes: 1024, under: folder + "/a", suffix: ".json")
        let refused = Self.path(bytes: 1025, under: folder + "/b", suffix: ".json")
        for (path, n) in [(longest, 1), (refused, 2)] {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(IngestCLITests.body(n)).write(to: URL(fileURLWithPath: path))
        }
        #expect(longest.utf8.count == 1024 && refused.utf8.count == 1025)
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("its path is 1025 bytes, at most 1024"), "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 1)
            #expect(try db.scalar("SELECT octet_length(path) FROM health_store.ingested_files", as: Int.self) == 1024)
        }
    }

    @Test("import-apple-health: an export whose path is over 1,024 bytes fails naming the length, exit 1, nothing stored")
    func importPath() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let refused = Self.path(bytes: 1025, under: folder, suffix: ".xml")
        try FileManager.default.createDirectory(atPath: (refused as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Bodies.fixtures.deletingLastPathComponent().deletingLastPathComponent()
                                             .appendingPathComponent("AppleExportTests/Fixtures/small-export/apple_health_export/export.xml").path,
                                         toPath: refused)
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", refused], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("its path is 1025 bytes, at most 1024"), "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }

    @Test("set-time-zone: a name over 1,024 bytes is a usage error naming its length (64), before the database is reached")
    func timeZoneName() throws {
        let out = try CLIProcess.run(["set-time-zone", String(repeating: "Z", count: 1025)], environment: ["DATABASE_URL": "host=/nonexistent"])
        #expect(out.status == 64)
        #expect(out.stderr.contains("the time zone is 1025 bytes, at most 1024"))
        #expect(out.stderr.utf8.count < 1024, "the name is not echoed")
    }
}
