import Foundation
import Testing
import TestSupport

@Suite("generate on the command line")
struct GenerateCLITests {
    static func tree(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            out[name] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
        }
        return out
    }

    @Test("the same seed and start write the same tree byte for byte; another seed does not")
    func repeatable() throws {
        let base = NSTemporaryDirectory() + "hw-generate-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        for (folder, seed) in [("a", "5"), ("b", "5"), ("c", "6")] {
            let out = try CLIProcess.run(["generate", "--days", "3", "--start", "2026-10-24", "--seed", seed, "--out", base + "/" + folder])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.isEmpty)
            #expect(out.stderr.hasPrefix("wrote "))
            #expect(out.stderr.contains(" json files, "))
            #expect(out.stderr.contains("days 2026-10-24 to 2026-10-26, seed \(seed)"))
        }
        let a = try Self.tree(base + "/a"), b = try Self.tree(base + "/b"), c = try Self.tree(base + "/c")
        #expect(a.count >= 10)
        #expect(a == b)
        #expect(a != c)
        #expect(a.keys.sorted().first == "2026-10-24-0001.json")
        // Across the October DST change: bodies carry +02:00 before and +01:00 after.
        let texts = a.values.map { String(decoding: $0, as: UTF8.self) }
        #expect(texts.contains { $0.contains("\"generatedAt\":\"2026-10-24T") && $0.contains("+02:00\"") })
        #expect(texts.contains { $0.contains("\"generatedAt\":\"2026-10-26T") && $0.contains("+01:00\"") })
    }

    @Test("CSV output ingests cleanly through the binary")
    func csvIngests() throws {
        let folder = NSTemporaryDirectory() + "hw-generate-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gen = try CLIProcess.run(["generate", "--days", "2", "--start", "2026-08-01", "--format", "csv", "--out", folder])
        #expect(gen.status == 0, "\(gen.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { $0.hasSuffix(".csv") })
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", "--json", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
            #expect(json["quarantined"] as? Int == 0)
            #expect((json["samples"] as? Int ?? 0) > 1500)
        }
    }

    @Test("bad flags exit 64", arguments: [
        ["generate"], ["generate", "--days", "0"], ["generate", "--days", "-1"], ["generate", "--days", "abc"],
        ["generate", "--days", "3651"], ["generate", "--days", "3", "--start", "2026-02-30"], ["generate", "--days", "3", "--start", "yesterday"],
        ["generate", "--days", "3", "--format", "xml"], ["generate", "--days", "3", "--seed", "-1"], ["generate", "--days", "3", "extra"],
        ["generate", "--days", "3", "--coalesce", "101"], ["generate", "--days", "3", "--coalesce", "5%"],
    ])
    func badFlags(arguments: [String]) throws {
        let out = try CLIProcess.run(arguments, directory: "/tmp")
        #expect(out.status == 64, "\(arguments): \(out.stderr)")
        #expect(out.stderr.hasPrefix("error: "))
        #expect(out.stderr.contains("hint: run `health-warehouse generate --help`"))
    }
}
