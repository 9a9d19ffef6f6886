import Foundation
import Testing
import TestSupport

/// `health-warehouse source list|rename` run as the built binary: what it prints, and its exit
/// codes (0 done, 1 failure, 64 usage).
@Suite("source list and rename")
struct SourceCommandTests {
    static let watch = "com.apple.health.14452A08-5697-4892-A7A3-66C27B1C2E64"

    /// Steps of `person` from the watch and from a source whose name holds a tab and a line break.
    static func fill(_ db: TestDatabase, person: String) throws {
        let samples = [
            Bodies.quantity(uuid: UUID().uuidString, source: watch, start: "2026-03-10T08:00:00.000+01:00", value: "700"),
            Bodies.quantity(uuid: UUID().uuidString, source: watch, start: "2026-03-11T08:00:00.000+01:00", value: "800"),
            Bodies.quantity(uuid: UUID().uuidString, source: "odd\tsource\nname", start: "2026-03-11T09:00:00.000+01:00", value: "5"),
        ]
        let file = NSTemporaryDirectory() + "hw-sources-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Data(Bodies.json(samples: samples, exportId: UUID().uuidString)).write(to: URL(fileURLWithPath: file))
        let stored = try CLIProcess.run(["ingest", "--person", person, file], environment: ["DATABASE_URL": db.connectionString])
        #expect(stored.status == 0, "\(stored.stderr)")
    }

    @Test("list shows each source with its name; rename sets one, '' clears it; --person decides whose")
    func listAndRename() throws {
        try TestPostgres.withDatabase { db in
            try Self.fill(db, person: "anna")
            let env = ["DATABASE_URL": db.connectionString]
            let before = try CLIProcess.run(["source", "list", "--person", "anna"], environment: env)
            #expect(before.status == 0, "\(before.stderr)")
            #expect(before.stdout == "source\tname\tnamed_by\tsamples\tfirst_day\tlast_day\n"
                    + "\(Self.watch)\t\(Self.watch)\t\t2\t2026-03-10\t2026-03-11\n"
                    + "odd\\tsource\\nname\todd\\tsource\\nname\t\t1\t2026-03-11\t2026-03-11\n", "one line per source, controls escaped")
            let renamed = try CLIProcess.run(["source", "rename", Self.watch, "Anna’s Apple Watch", "--person", "anna"], environment: env)
            #expect(renamed.status == 0, "\(renamed.stderr)")
            let json = try CLIProcess.run(["source", "list", "--person", "anna", "--json"], environment: env)
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(rows.first?["name"] as? String == "Anna’s Apple Watch" && rows.first?["named_by"] as? String == "person")
            #expect(rows.first?["samples"] as? Int == 2 && rows.count == 2)
            #expect(try db.scalar("SELECT name FROM health.sources WHERE person = 'anna' AND source = $1", [Self.watch], as: String.self)
                    == "Anna’s Apple Watch")
            #expect(try CLIProcess.run(["source", "rename", Self.watch, "", "--person", "anna"], environment: env).status == 0)
            #expect(try db.scalar("SELECT named_by FROM health.sources WHERE person = 'anna' AND source = $1", [Self.watch], as: String.self) == nil)
        }
    }

    @Test("an unknown person or source, a name over 1,024 bytes, missing or extra words are usage errors (64, nothing changed); a database that cannot be reached is 1")
    func exitCodes() throws {
        try TestPostgres.withDatabase { db in
            try Self.fill(db, person: "anna")
            let env = ["DATABASE_URL": db.connectionString]
            for (arguments, says) in [
                (["source", "list", "--person", "nobody"], "unknown person \"nobody\""),
                (["source", "rename", Self.watch, "X", "--person", "nobody"], "unknown person \"nobody\""),
                (["source", "rename", "com.example.never", "X", "--person", "anna"], "person \"anna\" has no source \"com.example.never\""),
                (["source", "rename", Self.watch, String(repeating: "n", count: 1025), "--person", "anna"], "the new name is 1025 bytes, at most 1024"),
                (["source", "rename", Self.watch, "--person", "anna"], "source rename needs the source and its new name"),
                (["source", "list", "extra"], "source list takes no arguments"),
                (["source", "forget"], "unknown source action \"forget\""),
                (["source"], "source needs an action"),
            ] {
                let out = try CLIProcess.run(arguments, environment: env)
                #expect(out.status == 64, "\(arguments): \(out.stderr)")
                #expect(out.stderr.contains(says), "\(arguments): \(out.stderr)")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.source_names", as: Int.self) == 0)
            let down = try CLIProcess.run(["source", "list", "--database-url", "host=127.0.0.1 port=1 dbname=x connect_timeout=2"])
            #expect(down.status == 1, "\(down.stderr)")
        }
    }
}
