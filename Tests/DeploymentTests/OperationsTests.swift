import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// docs/operations.md, run: the documented dump of schemas health_store and health restores
/// into an empty database whose views answer as the original's, the binary finds nothing to
/// migrate there, and the documented block removes one person's data and nobody else's.
@Suite("Backups and restores")
struct OperationsTests {
    static func tool(_ name: String) throws -> String {
        let path = try ServerBinaries.locate().directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw DeploymentTestError("\(name) not found at \(path)") }
        return path
    }

    /// What the views say, person by person, as one comparable text.
    static func fingerprint(_ database: TestDatabase) throws -> [String] {
        try [
            "SELECT person, count(*), sum(steps)::bigint, sum(sleep_min)::bigint FROM health.daily_summary GROUP BY 1 ORDER BY 1",
            "SELECT person, count(*) FROM health.samples GROUP BY 1 ORDER BY 1",
            "SELECT person, last_received_at, newest_sample_end_at, is_stale FROM health.freshness ORDER BY 1",
            "SELECT person, export_id, is_complete, samples FROM health.export_runs ORDER BY 1, 2",
            "SELECT person, count(*) FROM health.quarantine GROUP BY 1 ORDER BY 1",
            "SELECT person, type, samples FROM health.unknown_types ORDER BY 1, 2",
            "SELECT person, time_zone FROM health.settings ORDER BY 1",
            "SELECT count(*) FROM health_store.tokens",
        ].map { sql in
            try database.query(sql).map { row in (0..<8).compactMap { row[$0] }.joined(separator: "|") }.joined(separator: "\n")
        }
    }

    @Test("the documented pg_dump of health_store and health restores into an empty database with the same views")
    func backupAndRestore() throws {
        let source = try FilledDatabase.get()
        let operations = try Repository.text("docs/operations.md")
        #expect(operations.contains("pg_dump -U health -d health --format=custom \\\n  --schema=health_store --schema=health"))
        #expect(operations.contains("pg_restore -U health -d health --no-owner --exit-on-error"))
        let dump = NSTemporaryDirectory() + "health-\(getpid())-\(UUID().uuidString).dump"
        defer { unlink(dump) }
        var env = try Libpq.environment(of: source.database.connectionString)
        let dumped = try Run.program("/usr/bin/env", env.map { "\($0.key)=\($0.value)" }
                                     + [try Self.tool("pg_dump"), "--format=custom", "--schema=health_store", "--schema=health", "--file", dump])
        #expect(dumped.status == 0, "\(dumped.output)")
        try TestPostgres.withDatabase(migrated: false) { empty in
            // The documented order: the roles first (reader-login), then pg_restore.
            try FilledDatabase.runReaderLoginScript(on: empty, login: FilledDatabase.readerLogin, password: FilledDatabase.readerPassword)
            env = try Libpq.environment(of: empty.connectionString)
            let restored = try Run.program("/usr/bin/env", env.map { "\($0.key)=\($0.value)" }
                                           + [try Self.tool("pg_restore"), "--no-owner", "--exit-on-error", "--dbname", empty.name, dump])
            #expect(restored.status == 0, "\(restored.output)")
            #expect(try Self.fingerprint(empty) == (try Self.fingerprint(source.database)))
            // The restored database is at the dump's migration: nothing to apply.
            let migrate = try CLIProcess.run(["migrate", "--database-url", empty.connectionString])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(migrate.stdout.isEmpty, "applied: \(migrate.stdout)")
            // The read-only login reads the restored views.
            let reader = try PostgresConnection(connectionString: Libpq.with(empty.connectionString, user: FilledDatabase.readerLogin,
                                                                            password: FilledDatabase.readerPassword))
            defer { reader.close() }
            #expect(try reader.query("SELECT count(*) FROM health.daily_summary WHERE person = 'me'").first?[0].flatMap(Int.init) ?? 0 >= 44)

            // The documented removal of one person's data.
            let block = try #require(Self.sqlBlock(after: "### Removing a person's data", in: operations))
            let connection = try empty.connect()
            defer { connection.close() }
            for statement in block.replacingOccurrences(of: "'demo'", with: "'alex'").split(separator: ";") {
                let sql = statement.trimmingCharacters(in: .whitespacesAndNewlines)
                if !sql.isEmpty { try connection.query(sql) }
            }
            #expect(try empty.scalar("SELECT count(*) FROM health.daily_summary WHERE person = 'alex'", as: Int.self) == 0)
            #expect(try empty.scalar("SELECT count(*) FROM health.freshness WHERE person = 'alex'", as: Int.self) == 0)
            #expect(try empty.scalar("SELECT count(*) FROM health.daily_summary WHERE person = 'me'", as: Int.self)
                    == (try source.database.scalar("SELECT count(*) FROM health.daily_summary WHERE person = 'me'", as: Int.self)))
        }
    }

    /// The first ```sql block after a heading.
    static func sqlBlock(after heading: String, in text: String) -> String? {
        guard let start = text.range(of: heading),
              let open = text.range(of: "```sql\n", range: start.upperBound..<text.endIndex),
              let close = text.range(of: "```", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}
