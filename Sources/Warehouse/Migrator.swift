import Foundation
import Postgres

/// One SQL migration file compiled into the binary.
public struct Migration: Sendable, Equatable {
    /// The number in front of the file name (`0001`).
    public let version: Int
    /// The rest of the file name without `.sql` (`schemas_and_reader_role`).
    public let name: String
    /// The file's text.
    public let sql: String
    /// SHA-256 of the file's bytes, lowercase hex.
    public let sha256: String

    /// Every migration compiled into this binary, in version order.
    public static let embedded: [Migration] = EmbeddedMigrations.files.compactMap { file in
        guard let data = Data(base64Encoded: file.base64) else { return nil }
        return Migration(fileName: file.name, bytes: Array(data))
    }

    /// Reads `NNNN_snake_description.sql`.
    public init?(fileName: String, bytes: [UInt8]) {
        guard fileName.hasSuffix(".sql") else { return nil }
        let stem = fileName.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else { return nil }
        self.version = version
        self.name = String(stem[stem.index(after: underscore)...])
        self.sql = String(decoding: bytes, as: UTF8.self)
        self.sha256 = SHA256.hex(bytes)
    }

    /// `0001_schemas_and_reader_role.sql`
    public var fileName: String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name + ".sql"
    }
}

/// Why migrating stopped.
public enum MigrationError: Error, CustomStringConvertible {
    /// An applied file's bytes differ from what was applied.
    case changed(file: String, applied: String, now: String)
    /// An applied migration is no longer in this binary.
    case missing(version: Int, name: String)
    /// A migration's SQL failed; nothing of it was kept.
    case failed(file: String, error: PostgresError)

    public var description: String {
        switch self {
        case .changed(let file, let applied, let now):
            return "migration \(file) was edited after it was applied (applied sha256 \(applied.prefix(12))…, now \(now.prefix(12))…); applied migrations must never change: restore it and add a new migration instead"
        case .missing(let version, let name):
            return "migration \(version) (\(name)) was applied to this database but is not in this binary; run the binary that applied it, or a newer one"
        case .failed(let file, let error):
            return "migration \(file) failed and was rolled back: \(error)"
        }
    }
}

/// State of one migration in a database.
public struct MigrationStatus: Sendable {
    public var migration: Migration
    /// When it was applied, `nil` while pending.
    public var appliedAt: Date?
}

/// Applies the embedded migrations to a database, each in its own transaction, under an
/// advisory lock so that two processes starting at once apply each file exactly once.
public struct Migrator: Sendable {
    public let migrations: [Migration]

    public init(migrations: [Migration] = Migration.embedded) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    // A fixed key for pg_advisory_lock: "hw migrate".
    static let lockKey: Int64 = 0x6877_6d69_6772_6174

    /// Applies what is pending and returns the migrations applied now.
    @discardableResult
    public func migrate(_ connection: PostgresConnection) throws -> [Migration] {
        try withLock(connection) {
            let applied = try verify(connection)
            var done: [Migration] = []
            for migration in migrations where applied[migration.version] == nil {
                do {
                    try connection.withTransaction { conn in
                        try conn.execute(script: migration.sql)
                        try conn.query("""
                            INSERT INTO health_store.schema_migrations (version, name, sha256, applied_at)
                            VALUES ($1, $2, $3, clock_timestamp())
                            """, [migration.version, migration.name, migration.sha256])
                    }
                } catch let error as PostgresError {
                    throw MigrationError.failed(file: migration.fileName, error: error)
                }
                done.append(migration)
            }
            return done
        }
    }

    /// Every migration of this binary with when it was applied; checks the applied ones.
    public func status(_ connection: PostgresConnection) throws -> [MigrationStatus] {
        try withLock(connection) {
            let applied = try verify(connection)
            return migrations.map { MigrationStatus(migration: $0, appliedAt: applied[$0.version]?.appliedAt) }
        }
    }

    /// Reads what was applied and refuses a changed or missing file.
    private func verify(_ connection: PostgresConnection) throws -> [Int: (sha256: String, appliedAt: Date)] {
        var applied: [Int: (sha256: String, appliedAt: Date)] = [:]
        let rows = try connection.query("SELECT version, name, sha256, applied_at FROM health_store.schema_migrations ORDER BY version")
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for row in rows {
            let version: Int = try row.decode(0)
            let name: String = try row.decode(1)
            let sha: String = try row.decode(2)
            applied[version] = (sha, try row.decode(3))
            guard let migration = known[version] else { throw MigrationError.missing(version: version, name: name) }
            if migration.sha256 != sha {
                throw MigrationError.changed(file: migration.fileName, applied: sha, now: migration.sha256)
            }
        }
        return applied
    }

    private func withLock<T>(_ connection: PostgresConnection, _ body: () throws -> T) throws -> T {
        try connection.query("SELECT pg_advisory_lock($1)", [Self.lockKey])
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [Self.lockKey]) }
        try connection.execute(script: """
            CREATE SCHEMA IF NOT EXISTS health_store;
            CREATE TABLE IF NOT EXISTS health_store.schema_migrations (
              version    integer PRIMARY KEY,
              name       text NOT NULL,
              sha256     text NOT NULL,
              applied_at timestamptz NOT NULL
            );
            """)
        return try body()
    }
}
