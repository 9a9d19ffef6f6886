import Foundation
import Postgres
import Warehouse

/// `--database-url` / `DATABASE_URL`, or an embedded cluster under `--data-dir`.
struct DatabaseOptions {
    static let optionNames: Set<String> = ["database-url", "data-dir"]
    static let help = """
        Database:
          --database-url URL   libpq connection string or URI (default: $DATABASE_URL;
                               libpq's PG* variables also apply)
          --data-dir DIR       with no URL: run an embedded PostgreSQL in DIR
                               (default ./health-warehouse-data), started when needed and
                               stopped by the last command still using it
        """

    var url: String?
    var dataDirectory: String

    init(_ parsed: ParsedArguments) {
        let environment = ProcessInfo.processInfo.environment["DATABASE_URL"]
        url = parsed.value("database-url") ?? (environment?.isEmpty == false ? environment : nil)
        dataDirectory = parsed.value("data-dir") ?? "./health-warehouse-data"
    }

    /// Runs `body` with a connection string: the URL given, or an embedded cluster started
    /// (or reused) for the duration of `body`. Migrates first when asked.
    func withDatabase<T>(migrate: Bool, _ body: (String) throws -> T) throws -> T {
        if let url {
            do {
                _ = try PostgresConnectionInfo(parsing: url)
            } catch {
                // The reason has its quoted fragments removed: they may be part of a password.
                throw CommandFailure(message: "--database-url (or DATABASE_URL) is not a connection string libpq can read: \(error.message)",
                                     hint: "use a libpq keyword string (host=… dbname=…) or a URI (postgresql://user@host/db); percent-encode special characters in a URI")
            }
            if migrate { try runMigrations(url) }
            return try body(url)
        }
        let embedded = try EmbeddedDatabase(directory: URL(fileURLWithPath: dataDirectory))
        let session = try embedded.open()
        Shutdown.shared.onExit { embedded.close() }
        defer { embedded.close() }
        if session.startedHere {
            printError("embedded PostgreSQL in \(embedded.directory.path) (127.0.0.1:\(session.port), password in \(embedded.directory.path)/password); connect with: \(session.psqlCommand)")
        } else {
            printError("using the embedded PostgreSQL already running for \(embedded.directory.path); connect with: \(session.psqlCommand)")
        }
        if migrate { try runMigrations(session.connectionString) }
        return try body(session.connectionString)
    }

    /// Runs `body` with the pool of a command that writes batches (ingest, import-apple-health):
    /// the database migrated, two connections with the writer's timeouts, closed after.
    func withWriterPool<T>(_ timeouts: WriterTimeouts, _ body: (PostgresPool) throws -> T) throws -> T {
        try withDatabase(migrate: true) { url in
            let pool = PostgresPool(connectionString: url, maxConnections: 2, sessionSettings: timeouts.sessionSettings)
            defer { pool.close() }
            return try body(pool)
        }
    }

    /// Runs `body` with one connection to the database `withDatabase` gives, closed after.
    func withConnection<T>(migrate: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        try withDatabase(migrate: migrate) { url in
            let connection = try PostgresConnection(connectionString: url)
            defer { connection.close() }
            return try body(connection)
        }
    }

    /// Applies pending migrations, printing what it applied on stderr; while readers hold
    /// what they replace, waits (saying so) until they let go or `shouldStop` turns true.
    func runMigrations(_ connectionString: String, shouldStop: () -> Bool = { false }) throws {
        let connection = try PostgresConnection(connectionString: connectionString)
        defer { connection.close() }
        for migration in try Migrator().migrate(connection, shouldStop: shouldStop) {
            printError("migrated \(migration.fileName)")
        }
    }
}

/// `--lock-timeout` and `--statement-timeout`: how long a write may wait for a lock, and run,
/// before PostgreSQL gives up on it (`lock_timeout`, `statement_timeout` of the writer
/// sessions). `serve` answers such a batch `503` with `Retry-After`; `ingest` stops and the
/// next run goes on.
///
/// The defaults keep a stuck write well inside what the healthd app waits for an answer:
/// 10 s for a lock is under its 15 s timeout on a retry, and 30 s for a statement under its
/// 60 s on a first attempt (reference, "Receiver setup"), so the app hears `503` and keeps
/// the batch instead of timing out while the write may still commit. A batch normally takes
/// tens of milliseconds.
struct WriterTimeouts {
    static let optionNames: Set<String> = ["lock-timeout", "statement-timeout"]
    /// The two options' help lines, their descriptions starting at `column` like the
    /// command's other options.
    static func help(column: Int) -> String {
        let pad = String(repeating: " ", count: column)
        return """
              --lock-timeout DURATION
            \(pad)a write waiting this long for a lock gives up (default 10s)
              --statement-timeout DURATION
            \(pad)a statement running this long is cancelled (default 30s)
            """
    }

    /// Seconds.
    var lock: Double
    var statement: Double

    init(_ parsed: ParsedArguments, command: String) throws {
        func duration(_ name: String, default fallback: Double) throws -> Double {
            guard let text = parsed.value(name) else { return fallback }
            guard let seconds = Duration.seconds(text), seconds >= 0.001, seconds <= 86_400 else {
                throw UsageError(message: "--\(name) must be a duration from 1ms to 1d such as 500ms, 10s or 2m, got \"\(text)\"",
                                 command: command)
            }
            return seconds
        }
        lock = try duration("lock-timeout", default: 10)
        statement = try duration("statement-timeout", default: 30)
    }

    /// The session settings of a writer pool, in milliseconds.
    var sessionSettings: [(name: String, value: String)] {
        [("lock_timeout", "\(Int((lock * 1000).rounded()))ms"), ("statement_timeout", "\(Int((statement * 1000).rounded()))ms")]
    }
}
