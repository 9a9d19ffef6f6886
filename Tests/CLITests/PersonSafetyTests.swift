import Foundation
import Hashing
import HealthPayload
import Postgres
import Synchronization
import Testing
import TestSupport
import Warehouse

/// `person delete` beside a running `serve`, `person list`, and the bad input docs/people.md names.
@Suite("person: safety and bad input")
struct PersonSafetyTests {
    static func batch(_ n: Int) -> [UInt8] {
        Bodies.json(samples: [Bodies.quantity(uuid: String(format: "D0000000-0000-4000-8000-%012d", n),
                                              start: "2026-08-21T10:\(String(format: "%02d", n % 60)):00.000+02:00", value: "\(n)")])
    }

    static func post(_ port: Int, token: String?, _ body: [UInt8]) throws -> Int {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let response = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers, body: body, timeout: 30)
        return response.status
    }

    @Test("every health_store table with a person column is in health_store.person_tables, and nothing else is")
    func personTablesMatchCatalog() throws {
        try TestPostgres.withDatabase { db in
            let listed = try db.query("SELECT table_name FROM health_store.person_tables").map { try $0.decode(0, as: String.self) }
            let catalog = try db.query("""
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'person' AND NOT a.attisdropped
                WHERE n.nspname = 'health_store' AND c.relkind IN ('r', 'p')
                """).map { try $0.decode(0, as: String.self) }
            #expect(Set(listed) == Set(catalog), "only listed: \(Set(listed).subtracting(catalog)), only in the catalog: \(Set(catalog).subtracting(listed))")
            #expect(listed.count == Set(listed).count)
        }
    }

    @Test("a batch authenticated before a delete and stored after it gets 401, nothing stored; tokens stay required after the last token-holder goes")
    func deleteRacingServe() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "carol", label: nil).token
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            #expect(try Self.post(port, token: token, Self.batch(1)) == 200, "stored before the delete")

            // The delete holds carol's lock, uncommitted: the next batch passes the head's check
            // (the token is still visible) and waits for the lock inside its store.
            let deleter = try db.connect()
            try deleter.query("BEGIN")
            let removed = try deleter.query("SELECT table_name, deleted FROM health_store.delete_person('carol')")
                .reduce(into: [String: Int]()) { $0[try $1.decode(0)] = try $1.decode(1) }
            #expect(removed["sample_rows"] == 1 && removed["tokens"] == 1 && removed["deliveries"] == 1)
            let status = Mutex<Int?>(nil)
            let racing = Thread {
                let answer = (try? Self.post(port, token: token, Self.batch(2))) ?? -1
                status.withLock { $0 = answer }
            }
            racing.start()
            sleepSeconds(1.5)
            #expect(status.withLock { $0 } == nil, "the batch waits for the person lock")
            try deleter.query("COMMIT")
            let deadline = monotonicNow() + 20
            while status.withLock({ $0 }) == nil && monotonicNow() < deadline { sleepSeconds(0.05) }
            #expect(status.withLock { $0 } == 401)
            #expect(try PersonTests.storedRows(db, person: "carol") == 0, "never half: nothing of carol is left")

            // carol held the only tokens: the receiver must not fall back to `default` for anyone.
            #expect(try Self.post(port, token: nil, Self.batch(3)) == 401)
            #expect(try Self.post(port, token: token, Self.batch(4)) == 401)
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 0)
        }
    }

    @Test("person list: every person with live tokens, samples, first and last day, last batch; as text and JSON")
    func list() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            _ = try TokenStore(pool: pool).create(person: "erin", label: nil)
            guard case .batches(let batches) = try PayloadDecoder.decode(json: Self.batch(7)) else { Issue.record("no batch"); return }
            try BatchStore(pool: pool).store(batches, person: "frank", origin: .http, bodySHA256: SHA256.hash(Self.batch(7)))
            let json = try CLIProcess.run(["person", "list", "--json", "--database-url", db.connectionString])
            #expect(json.status == 0, "\(json.stderr)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(rows.map { $0["person"] as? String } == ["erin", "frank"])
            #expect(Set(rows[0].keys) == ["person", "tokens", "samples", "first_day", "last_day", "last_received_at"])
            #expect(rows[0]["tokens"] as? Int == 1 && rows[0]["samples"] as? Int == 0 && rows[0]["first_day"] is NSNull)
            #expect(rows[1]["tokens"] as? Int == 0 && rows[1]["samples"] as? Int == 1)
            #expect(rows[1]["first_day"] as? String == "2026-08-21" && rows[1]["last_day"] as? String == "2026-08-21")
            #expect((rows[1]["last_received_at"] as? String)?.hasSuffix("Z") == true)
            let text = try CLIProcess.run(["person", "list", "--database-url", db.connectionString])
            #expect(text.stdout.hasPrefix("person\ttokens\tsamples\tfirst_day\tlast_day\tlast_received_at\nerin\t1\t0\t\t\t\nfrank\t0\t1\t2026-08-21\t2026-08-21\t"), "\(text.stdout.debugDescription)")
        }
    }

    @Test("bad input: an unknown person is exit 64 naming it; a --to folder not empty, or no --yes off a terminal, changes nothing")
    func badInput() throws {
        let folder = NSTemporaryDirectory() + "hw-person-bad-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            guard case .batches(let batches) = try PayloadDecoder.decode(json: Self.batch(8)) else { Issue.record("no batch"); return }
            try BatchStore(pool: pool).store(batches, person: "gina", origin: .http, bodySHA256: SHA256.hash(Self.batch(8)))
            let url = ["--database-url", db.connectionString]
            for action in [["delete", "nobody", "--yes"], ["export", "nobody", "--to", "\(folder)/new"]] {
                let out = try CLIProcess.run(["person"] + action + url)
                #expect(out.status == 64, "\(action): \(out.stderr)")
                #expect(out.stderr.contains("unknown person \"nobody\""), "\(out.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: "\(folder)/new"), "nothing made for an unknown person")

            try FileManager.default.createDirectory(atPath: "\(folder)/full", withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: "\(folder)/full/note.txt"))
            let full = try CLIProcess.run(["person", "export", "gina", "--to", "\(folder)/full"] + url)
            #expect(full.status == 1 && full.stderr.contains("not an empty folder"), "\(full.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: "\(folder)/full") == ["note.txt"])

            let unasked = try CLIProcess.run(["person", "delete", "gina"] + url)
            #expect(unasked.status == 64 && unasked.stderr.contains("--yes"), "\(unasked.stderr)")
            #expect(try PersonTests.storedRows(db, person: "gina") > 0)
        }
    }

    @Test("person import checks the manifest first: a changed file or an unknown kind stores nothing")
    func importChecksManifest() throws {
        let folder = NSTemporaryDirectory() + "hw-person-manifest-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            guard case .batches(let batches) = try PayloadDecoder.decode(json: Self.batch(9)) else { Issue.record("no batch"); return }
            try BatchStore(pool: pool).store(batches, person: "hana", origin: .http, bodySHA256: SHA256.hash(Self.batch(9)))
            try db.query("SELECT health.set_time_zone('hana', 'Asia/Tokyo')")
            let url = ["--database-url", db.connectionString]
            #expect(try CLIProcess.run(["person", "export", "hana", "--to", folder] + url).status == 0)
            let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(folder)/manifest.json"))) as? [String: Any])
            #expect((manifest["counts"] as? [String: Int])?["healthd"] == 1)
            try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(folder)/settings.json"))
            let out = try CLIProcess.run(["person", "import", "ivan", "--from", folder] + url)
            #expect(out.status == 1 && out.stderr.contains("settings.json is missing or differs"), "\(out.stderr)")
            #expect(try PersonTests.storedRows(db, person: "ivan") == 0)

            // A kind this version does not know is named, with its file, before anything is read.
            var listed = manifest
            var files = try #require(manifest["files"] as? [[String: Any]])
            let body = try #require(files.firstIndex { $0["kind"] as? String == "healthd" })
            files[body]["kind"] = "healthd-v9"
            listed["files"] = files
            try JSONSerialization.data(withJSONObject: listed).write(to: URL(fileURLWithPath: "\(folder)/manifest.json"))
            let unknown = try CLIProcess.run(["person", "import", "ivan", "--from", folder] + url)
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown kind \"healthd-v9\""), "\(unknown.stderr)")
            #expect(try PersonTests.storedRows(db, person: "ivan") == 0)
        }
    }
}
