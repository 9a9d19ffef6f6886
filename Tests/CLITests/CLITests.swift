import Foundation
import Hashing
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("Command line")
struct CLITests {
    @Test("usage errors exit 64 with an error line and a hint on stderr")
    func usageErrors() throws {
        for arguments in [["frobnicate"], ["migrate", "--bogus"], ["token"], ["token", "create"], ["migrate", "extra"], ["mcp", "extra"],
                          ["mcp", "--person", "no spaces"], ["token", "list", "extra"], ["token", "list", "--json", "extra"],
                          ["token", "create", "extra", "--person", "p"], ["person", "list", "extra"], ["person", "list", "--json", "extra"],
                          ["source", "list", "extra"], ["status", "extra"], []] {
            let out = try CLIProcess.run(arguments)
            #expect(out.status == 64, "\(arguments)")
            #expect(out.stdout.isEmpty, "\(arguments)")
            if !arguments.isEmpty {
                #expect(out.stderr.hasPrefix("error: "), "\(arguments)")
                #expect(out.stderr.contains("\nhint: "), "\(arguments)")
            }
        }
    }

    @Test("an option whose value was forgotten is refused, exit 64, not given the next option as its value")
    func forgottenValue() throws {
        for (arguments, option, next) in [(["token", "create", "--person", "--label", "phone"], "--person", "--label"),
                                          (["set-time-zone", "Europe/Berlin", "--person", "--yes"], "--person", "--yes"),
                                          (["serve", "--listen", "--metrics-listen=127.0.0.1:9"], "--listen", "--metrics-listen=127.0.0.1:9")] {
            let out = try CLIProcess.run(arguments)
            #expect(out.status == 64, "\(arguments)")
            #expect(out.stderr.hasPrefix("error: \(option) needs a value, got the option \(next)"), "\(out.stderr)")
        }
    }

    @Test("a token id that is not a number, and a person name outside ASCII, are named in the message")
    func namedValues() throws {
        let revoke = try CLIProcess.run(["token", "revoke", "abc"])
        #expect(revoke.status == 64)
        #expect(revoke.stderr.contains("needs the token's id, a number; got \"abc\""), "\(revoke.stderr)")
        let person = try CLIProcess.run(["mcp", "--person", "Zoë"])
        #expect(person.status == 64)
        #expect(person.stderr.contains("person name \"Zoë\" is not allowed: use 1-64 ASCII letters"), "\(person.stderr)")
    }

    @Test("--help works for every command and exits 0")
    func help() throws {
        for command in ["serve", "migrate", "ingest", "token", "set-time-zone", "status", "generate", "import-apple-health", "mcp"] {
            let out = try CLIProcess.run([command, "--help"])
            #expect(out.status == 0, "\(command)")
            #expect(out.stdout.contains("usage: health-warehouse \(command)"), "\(command)")
        }
        #expect(try CLIProcess.run(["--help"]).stdout.contains("Commands:"))
    }

    @Test("migrate run from /tmp uses the SQL compiled into the binary; --status lists every file")
    func migrateFromElsewhere() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let out = try CLIProcess.run(["migrate"], environment: ["DATABASE_URL": db.connectionString], directory: "/tmp")
            #expect(out.status == 0, "\(out.stderr)")
            let count = Migrator().migrations.count
            #expect(out.stdout.split(separator: "\n").count == count)
            #expect(try db.scalar("SELECT count(*) FROM health_store.schema_migrations", as: Int.self) == Migrator().versioned.count)
            #expect(try db.scalar("SELECT count(*) FROM health_store.schema_repeatables", as: Int.self) == Migrator().repeatable.count)
            let status = try CLIProcess.run(["migrate", "--status", "--database-url", db.connectionString], directory: "/tmp")
            #expect(status.status == 0)
            let lines = status.stdout.split(separator: "\n")
            #expect(lines.count == count)
            #expect(lines.allSatisfy { !$0.hasSuffix("pending") && !$0.hasSuffix("changed") })
            #expect(lines.contains { $0.hasPrefix("repeatable/30_store_batch.sql\t") }, "both kinds are listed: \(lines)")
            let again = try CLIProcess.run(["migrate", "--database-url", db.connectionString])
            #expect(again.status == 0)
            #expect(again.stdout.isEmpty)
        }
    }

    @Test("two migrate processes at once both succeed and apply each file once")
    func concurrentMigrateProcesses() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let env = ["DATABASE_URL": db.connectionString]
            let first = try CLIProcess.start(["migrate"], environment: env)
            let second = try CLIProcess.start(["migrate"], environment: env)
            let a = first.wait(), b = second.wait()
            #expect(a.status == 0, "\(a.stderr)")
            #expect(b.status == 0, "\(b.stderr)")
            let applied = a.stdout.split(separator: "\n").count + b.stdout.split(separator: "\n").count
            #expect(applied == Migrator().migrations.count)
            #expect(try db.scalar("SELECT count(*) FROM health_store.schema_migrations", as: Int.self) == Migrator().versioned.count)
        }
    }

    @Test("migrate refuses, exit 1, when an applied migration's hash changed")
    func migrateRefusesChangedHash() throws {
        try TestPostgres.withDatabase { db in
            try db.query("UPDATE health_store.schema_migrations SET sha256 = repeat('0', 64) WHERE version = 2")
            let out = try CLIProcess.run(["migrate", "--database-url", db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: migration 0002_store_tables.sql was edited after it was applied"))
            #expect(out.stderr.contains("hint: "))
        }
    }

    @Test("token create prints only the token, and only its SHA-256 is stored")
    func tokenCreate() throws {
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["token", "create", "--person", "alice", "--label", "phone", "--database-url", db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            let token = out.stdout.trimmingCharacters(in: .newlines)
            #expect(!token.contains("\n"))
            #expect(token.hasPrefix("hw_") && token.count >= 40)
            #expect(!out.stderr.contains(token))
            let row = try #require(db.query("SELECT person, label, encode(token_sha256, 'hex') FROM health_store.tokens").first)
            #expect(row[0] == "alice")
            #expect(row[1] == "phone")
            #expect(row[2] == SHA256.hex(Array(token.utf8)))
            let everything = try db.query("SELECT t::text FROM health_store.tokens t").map { $0[0] ?? "" }.joined()
            #expect(!everything.contains(token))
            let list = try CLIProcess.run(["token", "list", "--database-url", db.connectionString])
            #expect(list.stdout.contains("\talice\tphone\t"))
            #expect(!list.stdout.contains(token))
            let revoke = try CLIProcess.run(["token", "revoke", "1", "--database-url", db.connectionString])
            #expect(revoke.status == 0)
            let twice = try CLIProcess.run(["token", "revoke", "1", "--database-url", db.connectionString])
            #expect(twice.status == 1)
        }
    }

    @Test("the embedded cluster starts for a command, is reused by a second one, and stops")
    func embeddedCluster() throws {
        let folder = NSTemporaryDirectory() + "hw-embedded-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try CLIProcess.run(["migrate", "--data-dir", folder], directory: "/tmp")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("psql \"host="))
        let pidFile = folder + "/postgres/postmaster.pid"
        #expect(!FileManager.default.fileExists(atPath: pidFile), "the cluster should stop with the command")

        // A cluster already running for the folder (as under `serve`) is reused, not started twice.
        let embedded = try EmbeddedDatabase(directory: URL(fileURLWithPath: folder))
        let session = try embedded.open()
        defer { embedded.close() }
        #expect(session.startedHere)
        let second = try CLIProcess.run(["migrate", "--status", "--data-dir", folder])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stderr.contains("already running"))
        #expect(FileManager.default.fileExists(atPath: pidFile), "the reusing command must not stop it")
        let connection = try PostgresConnection(connectionString: session.connectionString)
        #expect(try connection.query("SELECT count(*) FROM health_store.schema_migrations").first?.decode(0, as: Int.self) == Migrator().versioned.count)
        connection.close()
        embedded.close()
        #expect(!FileManager.default.fileExists(atPath: pidFile))
    }

    @Test("SIGTERM during a command stops the embedded cluster it started")
    func embeddedStopsOnSignal() throws {
        let folder = NSTemporaryDirectory() + "hw-embedded-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // set-time-zone on a fresh cluster: migrates, then runs; stop it while it works.
        let running = try CLIProcess.start(["migrate", "--data-dir", folder])
        #expect(running.waitForStderr("psql \"host="))
        running.signal(SIGTERM)
        let out = running.wait()
        #expect(out.status == 0 || out.status == 128 + SIGTERM, "\(out.status) \(out.stderr)")
        #expect(waitUntil { !FileManager.default.fileExists(atPath: folder + "/postgres/postmaster.pid") })
    }

    @Test("a malformed database URL fails with exit 1, and stderr holds no part of it, by flag or by DATABASE_URL",
          arguments: ["postgresql://someone:hunter2%zz@127.0.0.1:1/health", "host=127.0.0.1 password='hunter2 never closed",
                      "postgresql://someone:hunter2@127.0.0.1:1/health?sslmode=hunter2mode",
                      "postgresql://someone:pass@hunter2@127.0.0.1:1/health"])
    func malformedURLNotEchoed(url: String) throws {
        for (arguments, environment) in [(["migrate", "--database-url", url], [String: String]()),
                                         (["status"], ["DATABASE_URL": url])] {
            let out = try CLIProcess.run(arguments, environment: environment)
            #expect(out.status == 1, "\(arguments): \(out.stderr)")
            #expect(out.stderr.hasPrefix("error: "), "\(out.stderr)")
            #expect(!out.stderr.contains("hunter2"), "\(out.stderr)")
            #expect(!out.stderr.contains("%zz"), "\(out.stderr)")
            #expect(!out.stdout.contains("hunter2"))
        }
    }
}
