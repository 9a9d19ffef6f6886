import Foundation
import Testing
import TestSupport

/// `health-warehouse import-apple-health` as a user runs it.
@Suite("import-apple-health on the command line")
struct ImportCommandTests {
    static func json(_ stdout: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    }

    @Test("usage errors exit 64 before touching the database", arguments: [
        ["import-apple-health"], ["import-apple-health", "a.zip", "b.zip"], ["import-apple-health", "--person", "not a name", "x"],
        ["import-apple-health", "--bogus", "x"], ["import-apple-health", "--json=yes", "x"],
    ])
    func usage(arguments: [String]) throws {
        let out = try CLIProcess.run(arguments, environment: ["DATABASE_URL": "host=/nonexistent"])
        #expect(out.status == 64, "\(arguments): \(out.stderr)")
        #expect(out.stderr.hasPrefix("error: "))
        #expect(out.stderr.contains("hint: run `health-warehouse import-apple-health --help`"))
    }

    @Test("the command list and --help name it; a path that holds no export fails with exit 1 and says what PATH may be")
    func helpAndBadPath() throws {
        #expect(try CLIProcess.run(["--help"]).stdout.contains("import-apple-health"))
        let help = try CLIProcess.run(["import-apple-health", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--person NAME") && help.stdout.contains("--json"))
        try TestPostgres.withDatabase { db in
            let folder = try Exports.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            for path in [folder.path, folder.appendingPathComponent("missing.zip").path] {
                let out = try CLIProcess.run(["import-apple-health", path], environment: ["DATABASE_URL": db.connectionString])
                #expect(out.status == 1, "\(path)")
                #expect(out.stderr.contains("hint: PATH is the Health app's export.zip, its apple_health_export folder, or export.xml"), "\(out.stderr)")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }

    @Test("an empty file (empty.zip, an empty export.xml, a folder's or archive's 0-byte export.xml) fails with exit 1 naming it; random bytes named .zip, and an archive cut short whatever its name, are not a zip archive; nothing stored")
    func emptyOrNotAnArchive() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let unpacked = folder.appendingPathComponent("unpacked/apple_health_export")
        try FileManager.default.createDirectory(at: unpacked, withIntermediateDirectories: true)
        for file in [folder.appendingPathComponent("empty.zip"), folder.appendingPathComponent("export.xml"), unpacked.appendingPathComponent("export.xml")] {
            try Data().write(to: file)
        }
        try Exports.zip(folder.appendingPathComponent("unpacked"), to: folder.appendingPathComponent("empty-entry.zip"))
        var state: UInt64 = 7
        let random = (0..<4096).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        try Data(random).write(to: folder.appendingPathComponent("random.zip"))
        // A real archive cut short (a download that stopped), named otherwise: its bytes say zip.
        let whole = folder.appendingPathComponent("whole.zip")
        try Exports.zip(Exports.fixtureFolder, to: whole)
        let bytes = try Data(contentsOf: whole)
        try Data(bytes.prefix(bytes.count / 2)).write(to: folder.appendingPathComponent("cut.export"))
        let cases = [
            ("empty.zip", "empty.zip: the file is empty (0 bytes): not the Health app's export"),
            ("export.xml", "export.xml: the file is empty (0 bytes): not the Health app's export"),
            ("unpacked", "unpacked/apple_health_export/export.xml is empty (0 bytes): not the Health app's export"),
            ("empty-entry.zip", "empty-entry.zip: apple_health_export/export.xml is empty (0 bytes): not the Health app's export"),
            ("random.zip", "random.zip: not a zip archive libzip can read"),
            ("cut.export", "cut.export: not a zip archive libzip can read"),
        ]
        try TestPostgres.withDatabase { db in
            for (name, says) in cases {
                let out = try CLIProcess.run(["import-apple-health", "--json", folder.appendingPathComponent(name).path],
                                             environment: ["DATABASE_URL": db.connectionString])
                #expect(out.status == 1, "\(name): \(out.stderr)")
                #expect(out.stderr.hasPrefix("error: ") && out.stderr.contains(says), "\(name): \(out.stderr)")
                #expect(!out.stderr.contains("records read") && out.stdout.isEmpty, "\(name): no summary")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.ingested_files", as: Int.self) == 0)
        }
    }

    @Test("a clean import exits 0 with the summary on stderr and --json's object on stdout; run again it is a no-op, exit 0; --person decides whose")
    func cleanAndAgain() throws {
        try TestPostgres.withDatabase { db in
            let env = ["DATABASE_URL": db.connectionString]
            let first = try CLIProcess.run(["import-apple-health", "--json", "--person", "anna", Exports.fixtureFolder.path], environment: env)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stderr.contains("import-apple-health: 27 records read (28 new, 2 duplicates, 0 matched), 3 workouts, 2 routes, 2 activity summaries, 0 skipped, 0 quarantined, 1 batches"))
            let summary = try Self.json(first.stdout)
            #expect(summary["records_read"] as? Int == 27)
            #expect(summary["new"] as? Int == 28)
            #expect(summary["duplicates"] as? Int == 2)
            #expect(summary["matched"] as? Int == 0)
            #expect(summary["workouts"] as? Int == 3)
            #expect(summary["routes"] as? Int == 2)
            #expect(summary["activity_summaries"] as? Int == 2)
            #expect((summary["seconds"] as? Double).map { $0 > 0 } == true)
            let again = try CLIProcess.run(["import-apple-health", "--json", "--person", "anna", Exports.fixtureFolder.path], environment: env)
            #expect(again.status == 0)
            #expect(again.stderr.contains("is unchanged since it was imported: nothing to do"))
            #expect(try Self.json(again.stdout)["new"] as? Int == 0)
            #expect(try db.scalar("SELECT count(DISTINCT person) FROM health.samples", as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'anna'", as: Int.self) == 28)
        }
    }
}
