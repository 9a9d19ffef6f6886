import Foundation
import Postgres
import Testing
import TestSupport

/// `token create --expires-in`: a token that stops working, shown with its expiry by `token list`.
@Suite("Token expiry")
struct TokenExpiryTests {
    @Test("--expires-in 30m, 1h or 7d stores that expiry; token list shows it; a token without one never expires",
          arguments: [("30m", 1800.0), ("1h", 3600), ("7d", 604_800)])
    func expiresIn(flag: String, seconds: Double) throws {
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["token", "create", "--person", "alice", "--expires-in", flag, "--database-url", db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("expiring 20"), "\(out.stderr)")
            let stored = try db.scalar("SELECT extract(epoch FROM expires_at - created_at)::float8 FROM health_store.tokens", as: Double.self)
            #expect(abs((stored ?? 0) - seconds) < 2)
            _ = try CLIProcess.run(["token", "create", "--person", "bob", "--database-url", db.connectionString])
            let list = try CLIProcess.run(["token", "list", "--database-url", db.connectionString])
            let lines = list.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
            #expect(lines.first?.last == "expires_at")
            let expiry = try db.scalar(#"SELECT to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM health_store.tokens WHERE person = 'alice'"#,
                                       as: String.self)
            #expect(lines.first { $0.count > 1 && $0[1] == "alice" }?.last.map(String.init) == expiry)
            #expect(lines.first { $0.count > 1 && $0[1] == "bob" }?.last == "", "bob's token never expires")
            let json = try CLIProcess.run(["token", "list", "--json", "--database-url", db.connectionString])
            let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(objects.first { $0["person"] as? String == "alice" }?["expires_at"] as? String == expiry)
            #expect(objects.first { $0["person"] as? String == "bob" }?["expires_at"] is NSNull)
        }
    }

    @Test("a bad --expires-in is a usage error (64) naming the flag, and mints nothing", arguments: ["1y", "-1h", "0s", "h", "", "3651d", "1 h"])
    func badDuration(flag: String) throws {
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["token", "create", "--person", "alice", "--expires-in", flag, "--database-url", db.connectionString])
            #expect(out.status == 64, "\(flag)")
            #expect(out.stderr.hasPrefix("error: --expires-in "), "\(out.stderr)")
            #expect(out.stdout.isEmpty)
            #expect(try db.scalar("SELECT count(*) FROM health_store.tokens", as: Int.self) == 0)
        }
    }
}
