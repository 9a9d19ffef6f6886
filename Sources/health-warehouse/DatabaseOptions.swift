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
                               (default ./health-warehouse-data), started for this command
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

    /// Runs `body` with one connection to the database `withDatabase` gives, closed after.
    func withConnection<T>(migrate: Bool, _ body: (PostgresConnection) throws -> T) throws -> T {
        try withDatabase(migrate: migrate) { url in
            let connection = try PostgresConnection(connectionString: url)
            defer { connection.close() }
            return try body(connection)
        }
    }

    /// Applies pending migrations, printing what it applied on stderr.
    func runMigrations(_ connectionString: String) throws {
        let connection = try PostgresConnection(connectionString: connectionString)
        defer { connection.close() }
        for migration in try Migrator().migrate(connection) {
            printError("migrated \(migration.fileName)")
        }
    }
}
