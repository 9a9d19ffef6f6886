import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("ingest on the command line")
struct IngestCLITests {
    static let header = Bodies.csvHeader

    /// A JSON body of one step sample.
    static func body(_ n: Int, value: Int = 10, schemaVersion: String = "1") -> [UInt8] {
        Bodies.json(samples: [Bodies.quantity(uuid: uuid(n), start: "2026-08-21T10:25:30.000+02:00", value: String(value))],
                    exportId: "6C7F1E22-1B3D-4A5E-9F00-\(String(format: "%012d", n))", schemaVersion: schemaVersion)
    }

    static func uuid(_ n: Int) -> String { "A1B2C3D4-0000-4000-8000-" + String(format: "%012d", n) }

    static func folder(_ files: [String: [UInt8]]) throws -> String {
        let folder = NSTemporaryDirectory() + "hw-ingest-cli-\(UUID().uuidString)"
        for (name, bytes) in files {
            let url = URL(fileURLWithPath: folder + "/" + name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        return folder
    }

    static func summary(_ stdout: String) throws -> [String: Any] {
        let line = try #require(stdout.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("a good backlog exits 0; --json prints the summary on stdout, the one-line summary goes to stderr")
    func goodBacklog() throws {
        let folder = try Self.folder(["a.json": Self.body(1), "b.json": Self.body(2), "c.jsonl": Self.body(3) + [0x0A] + Self.body(1) + [0x0A]])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", "--json", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            let json = try Self.summary(out.stdout)
            #expect(json["files_seen"] as? Int == 3)
            #expect(json["files_ingested"] as? Int == 3)
            #expect(json["files_skipped"] as? Int == 0)
            #expect(json["files_failed"] as? Int == 0)
            #expect(json["batches"] as? Int == 4)
            #expect(json["samples"] as? Int == 4)
            #expect(json["inserted"] as? Int == 3)
            #expect(json["duplicates"] as? Int == 1)
            #expect(json["replaced"] as? Int == 0)
            #expect(json["quarantined"] as? Int == 0)
            #expect((json["seconds"] as? Double).map { $0 >= 0 } == true)
            #expect((json["errors"] as? [Any])?.isEmpty == true)
            #expect(out.stderr.contains("ingest: 3 files (3 ingested, 0 skipped, 0 failed), 4 batches, 4 samples (3 new, 1 duplicates"))
            #expect(!out.stderr.contains("\r"), "no progress line off a terminal")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries WHERE origin = 'file'", as: Int.self) == 4)

            let again = try CLIProcess.run(["ingest", "--json", folder, "--database-url", db.connectionString])
            #expect(again.status == 0)
            let second = try Self.summary(again.stdout)
            #expect(second["files_skipped"] as? Int == 3)
            #expect(second["batches"] as? Int == 0)
        }
    }

    @Test("a bad file among good ones exits 1, named on stderr with its line; the good ones are stored")
    func badFile() throws {
        let csv = Array((Self.header + "\n1,not,enough\n").utf8)
        let folder = try Self.folder(["good.json": Self.body(1), "v2.json": Self.body(2, schemaVersion: "2"), "broken.csv": csv])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", "--json", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: \(folder)/v2.json: schemaVersion is 2; only 1 is accepted\n"))
            #expect(out.stderr.contains("error: \(folder)/broken.csv: record 2 (line 2): 3 fields; the header has 26\n"))
            let json = try Self.summary(out.stdout)
            #expect(json["files_failed"] as? Int == 2)
            #expect(json["files_ingested"] as? Int == 1)
            let errors = try #require(json["errors"] as? [[String: String]])
            #expect(errors.map { $0["file"] ?? "" } == ["\(folder)/broken.csv", "\(folder)/v2.json"])
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 1)
        }
    }

    @Test("usage errors exit 64 before touching the database", arguments: [
        ["ingest"], ["ingest", "--format", "xml", "x.json"], ["ingest", "--every", "0s", "x"], ["ingest", "--every", "soon", "x"],
        ["ingest", "--person", "not a name", "x"], ["ingest", "--bogus", "x"], ["ingest", "-", "-"], ["ingest", "--every", "1h", "-"],
        ["ingest", "--force=yes", "x"],
    ])
    func usage(arguments: [String]) throws {
        let out = try CLIProcess.run(arguments, environment: ["DATABASE_URL": "host=/nonexistent"])
        #expect(out.status == 64, "\(arguments): \(out.stderr)")
        #expect(out.stderr.hasPrefix("error: "))
        #expect(out.stderr.contains("hint: run `health-warehouse ingest --help`"))
    }

    @Test("standard input: CSV sniffed without --format; JSON lines with --format json; the delivery's file is -")
    func standardInput() throws {
        try TestPostgres.withDatabase { db in
            let env = ["DATABASE_URL": db.connectionString]
            let csv = Self.header + "\n1,6C7F1E22-1B3D-4A5E-9F00-000000000009,2026-08-21T12:00:00.000+02:00,1,true,2026-08-20T12:00:00.000+02:00,2026-08-21T12:00:00.000+02:00,\(Self.uuid(9)),\(String(repeating: "c", count: 64)),HKQuantityTypeIdentifierStepCount,activity,com.apple.Health,2026-08-21T10:25:30.000+02:00,2026-08-21T10:25:30.000+02:00,quantity,77,count,,,,,,,window,2026-08-20T12:00:00.000+02:00,2026-08-21T12:00:00.000+02:00\n"
            let first = try CLIProcess.run(["ingest", "--json", "-"], environment: env, stdin: csv)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try Self.summary(first.stdout)["inserted"] as? Int == 1)
            let lines = String(decoding: Self.body(4) + [0x0A] + Self.body(5) + [0x0A], as: UTF8.self)
            let second = try CLIProcess.run(["ingest", "--format", "json", "--json", "-"], environment: env, stdin: lines)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(try Self.summary(second.stdout)["batches"] as? Int == 2)
            #expect(try db.query("SELECT DISTINCT file, format FROM health_store.deliveries ORDER BY format").map { [$0[0], $0[1]] } == [["-", "csv"], ["-", "json"]])
            #expect(try db.scalar("SELECT value FROM health_store.samples WHERE uuid = $1::uuid", [Self.uuid(9)], as: Double.self) == 77)
            #expect(try db.scalar("SELECT count(*) FROM health_store.ingested_files", as: Int.self) == 0, "standard input has no ledger")
        }
    }

    @Test("--every repeats, picks up new files, and stops on SIGTERM with exit 0")
    func every() throws {
        let folder = try Self.folder(["a.json": Self.body(1)])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let running = try CLIProcess.start(["ingest", "--every", "1s", "--json", "--person", "eve", folder],
                                               environment: ["DATABASE_URL": db.connectionString])
            #expect(running.waitForStderr("ingest: 1 file (1 ingested", timeout: 30))
            try Data(Self.body(2)).write(to: URL(fileURLWithPath: folder + "/b.json"))
            #expect(running.waitForStderr("ingest: 2 files (1 ingested, 1 skipped", timeout: 30))
            running.signal(SIGTERM)
            let out = running.wait()
            #expect(out.status == 0, "\(out.stderr)")
            let runs = out.stdout.split(separator: "\n")
            #expect(runs.count >= 2, "one JSON summary a run")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE person = 'eve'", as: Int.self) == 2)
        }
    }
}
