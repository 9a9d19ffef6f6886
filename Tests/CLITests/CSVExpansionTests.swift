import Foundation
import Postgres
import Testing
import TestSupport

/// A CSV body's unknown column name is repeated as a key in every sample it builds: a 4 MiB body
/// with a 2 MB name and a few thousand short rows would build gigabytes. The decoder refuses it
/// at the header, over HTTP and in backlog files alike.
@Suite("CSV bodies that would expand")
struct CSVExpansionTests {
    /// The body: the version 1 header plus a 2,000,000-byte column name, then short valid rows up to ~4 MB.
    static let body = Bodies.expandingCSV(nameBytes: 2_000_000, totalBytes: 4_000_000)
    static let named = "record 1 (line 1): the header's column 27 has a name of 2000000 bytes; at most 256 are accepted"

    /// A process's resident memory, current and peak, in KiB, from /proc.
    static func residentKiB(of pid: pid_t) throws -> (now: Int, peak: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) throws -> Int {
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(name + ":") })
            return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? ""))
        }
        return (try field("VmRSS"), try field("VmHWM"))
    }

    @Test("over HTTP: 400 naming the column, nothing stored, serve still answers and its peak memory stays bounded")
    func overHTTP() throws {
        #expect(Self.body.count > 4_000_000 && Self.body.count < 4 << 20, "inside the default --max-body of 4 MiB")
        let rows = Self.body.filter { $0 == 0x0A }.count - 1
        #expect(rows > 4000, "thousands of rows, each of which would repeat the 2 MB name")
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let response = try HTTPTestClient.request(port: port, method: "POST", path: "/",
                                                      headers: [("Content-Type", "text/csv; charset=utf-8")], body: Self.body, timeout: 60)
            #expect(response.status == 400)
            let error = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
            #expect(error?["error"] == Self.named)
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)

            // Alive: the next batch is stored.
            let good = Bodies.json(samples: [Bodies.quantity(uuid: "AB000000-0000-4000-8000-000000000001", start: "2026-08-21T10:00:00.000+02:00", value: "5")])
            let next = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: good)
            #expect(next.status == 200)
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 1)

            // Built, the samples would be 2 MB × thousands of rows (gigabytes); refused at the header, serve's
            // peak resident memory stays that of a process holding a few copies of one 4 MB body.
            let memory = try Self.residentKiB(of: serve.pid)
            #expect(memory.peak < 64 * 1024, "serve's peak RSS: \(memory.peak / 1024) MiB")
        }
    }

    @Test("as a backlog file: the same error named with the file, exit 1, nothing stored")
    func asBacklogFile() throws {
        let folder = NSTemporaryDirectory() + "hw-expanding-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/expanding.csv"
        try Data(Self.body).write(to: URL(fileURLWithPath: path))
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", "--database-url", db.connectionString, path])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: \(path): \(Self.named)\n"), "\(out.stderr)")
            let held = try #require(try db.query("""
                SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries),
                       (SELECT count(*) FROM health_store.quarantine), (SELECT count(*) FROM health_store.ingested_files)
                """).first)
            #expect(try (0..<4).map { try held.decode($0, as: Int.self) } == [0, 0, 0, 0])
        }
    }
}
