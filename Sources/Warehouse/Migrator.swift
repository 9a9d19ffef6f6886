import Dispatch
import Foundation
import Hashing
import Postgres

/// One SQL file compiled into the binary: a versioned migration (`migrations/NNNN_name.sql`,
/// applied once, never edited) or a repeatable definition (`migrations/repeatable/NN_name.sql`,
/// the current definition of some functions and views, re-applied whenever it changes).
public struct Migration: Sendable, Equatable {
    /// The number in front of a versioned file's name (`1` for `0001_…`); `nil` for a
    /// repeatable file.
    public let version: Int?
    /// The rest of a versioned file's name without `.sql` (`schemas_and_reader_role`), or a
    /// repeatable file's whole name without `.sql` (`30_store_batch`).
    public let name: String
    /// The file's text.
    public let sql: String
    /// SHA-256 of the file's bytes, lowercase hex.
    public let sha256: String

    /// Every file compiled into this binary, versioned ones first in version order, then the
    /// repeatable ones in name order: the order `Migrator` applies them in.
    public static let embedded: [Migration] = EmbeddedMigrations.files.compactMap { file in
        guard let data = Data(base64Encoded: file.base64) else { return nil }
        return Migration(fileName: file.name, bytes: Array(data))
    }

    /// The newest versioned migration compiled in, four digits at least (`0061`, `0100`): the
    /// schema this build brings (`health_warehouse_build_info`).
    public static let embeddedSchema: String = {
        let digits = String(embedded.compactMap(\.version).max() ?? 0)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }()

    /// Prefix of a repeatable file's path under `migrations/`.
    static let repeatableFolder = "repeatable/"

    /// Reads `NNNN_snake_description.sql` or `repeatable/NN_snake_description.sql`.
    public init?(fileName: String, bytes: [UInt8]) {
        guard fileName.hasSuffix(".sql") else { return nil }
        if fileName.hasPrefix(Self.repeatableFolder) {
            let stem = fileName.dropFirst(Self.repeatableFolder.count).dropLast(4)
            guard !stem.isEmpty, !stem.contains("/") else { return nil }
            self.version = nil
            self.name = String(stem)
        } else {
            let stem = fileName.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else { return nil }
            self.version = version
            self.name = String(stem[stem.index(after: underscore)...])
        }
        self.sql = String(decoding: bytes, as: UTF8.self)
        self.sha256 = SHA256.hex(bytes)
    }

    /// True for a repeatable definition file.
    public var isRepeatable: Bool { version == nil }

    /// `0001_schemas_and_reader_role.sql`, or `repeatable/30_store_batch.sql`.
    public var fileName: String {
        guard let version else { return Self.repeatableFolder + name + ".sql" }
        let digits = String(version)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + name + ".sql"
    }
}

/// Why migrating stopped.
public enum MigrationError: Error, CustomStringConvertible {
    /// An applied versioned file's bytes differ from what was applied.
    case changed(file: String, applied: String, now: String)
    /// An applied versioned migration is no longer in this binary.
    case missing(version: Int, name: String)
    /// A file's SQL failed; nothing of this run was kept.
    case failed(file: String, error: PostgresError)
    /// Asked to stop while waiting for readers' locks; nothing of this run was kept.
    case stopped

    public var description: String {
        switch self {
        case .changed(let file, let applied, let now):
            return "migration \(file) was edited after it was applied (applied sha256 \(applied.prefix(12))…, now \(now.prefix(12))…); applied migrations must never change: restore it and add a new migration instead (functions and views belong in migrations/repeatable/, which may change)"
        case .missing(let version, let name):
            return "migration \(version) (\(name)) was applied to this database but is not in this binary; run the binary that applied it, or a newer one"
        case .failed(let file, let error):
            return "migration \(file) failed and nothing of this run was kept: \(error)"
        case .stopped:
            return "stopped while waiting for readers to release what the migration replaces; nothing of this run was kept"
        }
    }
}

/// State of one file in a database.
public struct MigrationStatus: Sendable {
    public var migration: Migration
    /// When it was applied (a repeatable file: when this very content was applied); `nil`
    /// while pending.
    public var appliedAt: Date?
    /// A repeatable file applied before with other content: it is applied again next time.
    public var changedSinceApplied: Bool
}

/// Applies the embedded files to a database in one transaction: pending versioned migrations
/// in version order, then every repeatable file whose content differs from the one applied
/// (every repeatable file, when a versioned one was applied), in name order. Two processes
/// starting at once serialize on a lock of the bookkeeping table, so each file is applied
/// exactly once.
///
/// Readers (dashboards) may hold the relations a migration replaces, for as long as their
/// transaction lasts. So before applying anything, one statement takes every relation of
/// `health` and `health_store` at once, waiting at most `lockWait` — less than PostgreSQL's
/// `deadlock_timeout`, so the migrator gives up before a waiting reader could be chosen as a
/// deadlock's victim (40P01) — and holding nothing a reader wants while it waits, so no
/// reader is held up behind it for longer than that. When the locks are not all free, it
/// rolls back, says on stderr who holds what (`migrate.waiting`), and tries again after a
/// back-off (doubling up to `maxBackoff`); any other lock wait of the transaction gives up at
/// `lockWait` too and is retried the same way.
public struct Migrator: Sendable {
    /// Every file, in the order they are applied.
    public let migrations: [Migration]
    /// Seconds one attempt may wait for its locks (capped at half of `deadlock_timeout`).
    public var lockWait: Double
    /// The longest pause between two attempts, in seconds.
    public var maxBackoff: Double

    public init(migrations: [Migration] = Migration.embedded, lockWait: Double = 0.5, maxBackoff: Double = 10) {
        let versioned = migrations.filter { !$0.isRepeatable }.sorted { $0.version! < $1.version! }
        let repeatable = migrations.filter(\.isRepeatable).sorted { $0.name < $1.name }
        self.migrations = versioned + repeatable
        self.lockWait = lockWait
        self.maxBackoff = maxBackoff
    }

    /// The versioned migrations.
    public var versioned: [Migration] { migrations.filter { !$0.isRepeatable } }
    /// The repeatable definition files.
    public var repeatable: [Migration] { migrations.filter(\.isRepeatable) }

    // A fixed key for pg_advisory_xact_lock: "hw migrate". Only taken while the bookkeeping
    // tables do not exist yet (a new database); after that the lock is on a table no reader
    // login can reach.
    static let lockKey: Int64 = 0x6877_6d69_6772_6174

    /// Applies what is pending, in one transaction, and returns the files applied now; while
    /// readers hold what it must replace, waits for them as the type's summary says. Throws
    /// `MigrationError.stopped` when `shouldStop` turns true between attempts.
    @discardableResult
    public func migrate(_ connection: PostgresConnection, shouldStop: () -> Bool = { false }) throws -> [Migration] {
        var pause = min(0.25, maxBackoff)
        while true {
            do {
                return try connection.withTransaction { try apply($0) }
            } catch let busy as LocksBusy {
                try reportWait(busy, on: connection, retryIn: pause)
            } catch MigrationError.failed(let file, let error) where error.sqlState == SQLState.lockNotAvailable || error.sqlState == SQLState.deadlockDetected
                                                                 || Self.catalogRace(error) {
                try reportWait(LocksBusy(during: file), on: connection, retryIn: pause)
            }
            let resume = DispatchTime.now().uptimeNanoseconds + UInt64(pause * 1e9)
            while DispatchTime.now().uptimeNanoseconds < resume {
                if shouldStop() { throw MigrationError.stopped }
                usleep(20_000)
            }
            pause = min(pause * 2, maxBackoff)
        }
    }

    /// Two sessions changed one shared catalog row at once: on Citus, two databases of one
    /// cluster migrating together, each granting to `health_reader`, which Citus re-creates on
    /// the workers. The run was rolled back whole; another attempt meets no such race.
    static func catalogRace(_ error: PostgresError) -> Bool {
        error.sqlState == SQLState.internalError && error.message.contains("tuple concurrently updated")
    }

    /// One attempt, inside its transaction.
    private func apply(_ conn: PostgresConnection) throws -> [Migration] {
        do {
            let applied = try lockAndRead(conn)
            let versionedPending = versioned.filter { applied.versioned[$0.version!] == nil }
            // A versioned file may drop or reshape what definitions depend on: after one, every
            // repeatable file is applied again.
            let pending = versionedPending + repeatable.filter { migration in
                !versionedPending.isEmpty || applied.repeatable[migration.name]?.sha256 != migration.sha256
            }
            if pending.isEmpty { return [] }
            try lockRelations(conn)
            // On Citus, one migration mixes DDL over distributed tables with writes and grants on
            // reference tables, which Citus allows in one transaction only when shards are
            // reached one connection at a time.
            let citus = try CitusLayout.citusVersion(on: conn) != nil
            if citus {
                try conn.query("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
            }
            for (index, migration) in pending.enumerated() {
                // On Citus, the tables are distributed before the definitions over them are made.
                if migration.version == nil, index > 0, pending[index - 1].version != nil {
                    do {
                        try CitusLayout.distributeTables(on: conn)
                    } catch let error as PostgresError {
                        throw MigrationError.failed(file: "the Citus layout (docs/scaling.md)", error: error)
                    }
                }
                do {
                    // Citus sends some DDL over a distributed table (CREATE INDEX, ADD CONSTRAINT)
                    // to the workers as the text it came in, which a worker refuses when that
                    // text holds several statements (citusdata/citus#6608): there, one at a time.
                    for statement in citus ? migration.statements : [migration.sql] {
                        try conn.execute(script: statement)
                    }
                    try record(migration, on: conn)
                } catch let error as PostgresError {
                    throw MigrationError.failed(file: migration.fileName, error: error)
                }
            }
            // On Citus, whatever is new is distributed by person (and the writers delegated) before
            // anything is rebuilt. Only by a run that makes the definitions (the repeatable files,
            // after the tables are distributed): a run of versioned files alone (an upgrade test's
            // older schema) made its functions and views on the coordinator alone, and leaves the
            // schema as the binary of its time did, for the next migrate to lay out.
            if pending.contains(where: \.isRepeatable) {
                do {
                    try CitusLayout.apply(on: conn)
                } catch let error as PostgresError {
                    throw MigrationError.failed(file: "the Citus layout (docs/scaling.md)", error: error)
                }
            }
            // Work a versioned file queued for the current definitions (rebuilding rollups
            // under a new rule), in this same transaction.
            if !pending.isEmpty,
               try conn.query("SELECT to_regprocedure('health_store.after_migrate()') IS NOT NULL").first?.decode(0, as: Bool.self) == true {
                do {
                    try conn.query("SELECT health_store.after_migrate()")
                } catch let error as PostgresError {
                    throw MigrationError.failed(file: "health_store.after_migrate()", error: error)
                }
            }
            return pending
        }
    }

    /// The locks were not all free within `lockWait`; `during` names the file that waited, or
    /// nil for the up-front lock of every relation.
    struct LocksBusy: Error {
        var during: String?
    }

    /// Takes every relation of the two schemas in `ACCESS EXCLUSIVE` mode in one statement,
    /// waiting at most `lockWait` in all, then leaves `lock_timeout` at `lockWait` for the rest
    /// of the transaction. Relations are named by a query, so new tables and views count.
    private func lockRelations(_ conn: PostgresConnection) throws {
        let deadlock = try conn.query("SELECT extract(epoch FROM current_setting('deadlock_timeout')::interval)::float8")
            .first?.decode(0, as: Double.self) ?? 1
        let wait = Int((min(lockWait, deadlock / 2) * 1000).rounded(.down))
        let names = try conn.query("""
            SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname IN ('health', 'health_store') AND c.relkind IN ('r', 'p', 'v', 'm') ORDER BY c.oid
            """).compactMap { $0[0] }
        let previous = try conn.query("SELECT current_setting('statement_timeout')").first?[0] ?? "0"
        try conn.query("SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $1, true)", ["\(max(1, wait))ms"])
        if !names.isEmpty {
            do {
                try conn.execute(script: "LOCK TABLE " + names.joined(separator: ", ") + " IN ACCESS EXCLUSIVE MODE")
            } catch let error as PostgresError where error.sqlState == SQLState.queryCanceled || error.sqlState == SQLState.lockNotAvailable
                        || error.sqlState == SQLState.deadlockDetected {
                throw LocksBusy(during: nil)
            }
        }
        try conn.query("SELECT set_config('statement_timeout', $1, true)", [previous])
    }

    /// Says on stderr, once per wait, which sessions hold relations of the two schemas
    /// (process id, login, application, state, how long their transaction has been open):
    /// never their queries. Leaves the connection idle.
    private func reportWait(_ busy: LocksBusy, on connection: PostgresConnection, retryIn pause: Double) throws {
        let holders = try connection.query("""
            SELECT l.pid, coalesce(a.usename, '?'), coalesce(nullif(a.application_name, ''), '-'), coalesce(a.state, '?'),
                   coalesce(extract(epoch FROM clock_timestamp() - a.xact_start)::int::text, '?'),
                   string_agg(DISTINCT format('%s.%s', n.nspname, c.relname), ',')
            FROM pg_locks l
            JOIN pg_class c ON c.oid = l.relation
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE n.nspname IN ('health', 'health_store') AND c.relkind IN ('r', 'p', 'v', 'm') AND l.granted AND l.pid <> pg_backend_pid()
            GROUP BY 1, 2, 3, 4, 5 ORDER BY 1
            """)
        let wait = busy.during.map { "a lock \($0) needs" } ?? "the locks of the objects it replaces"
        if holders.isEmpty {
            Log.event("migrate.waiting", ["for": wait, "retry_in_s": pause])
        }
        for row in holders {
            Log.event("migrate.waiting", ["for": wait, "pid": row[0] ?? "?", "user": row[1] ?? "?", "application": row[2] ?? "-",
                                          "state": row[3] ?? "?", "transaction_s": row[4] ?? "?", "holds": row[5] ?? "",
                                          "retry_in_s": pause])
        }
    }

    /// Every file of this binary with when it was applied; checks the applied versioned ones.
    public func status(_ connection: PostgresConnection) throws -> [MigrationStatus] {
        try connection.withTransaction { conn in
            let applied = try lockAndRead(conn)
            return migrations.map { migration in
                if migration.isRepeatable {
                    let recorded = applied.repeatable[migration.name]
                    let current = recorded?.sha256 == migration.sha256
                    return MigrationStatus(migration: migration, appliedAt: current ? recorded?.appliedAt : nil,
                                           changedSinceApplied: recorded != nil && !current)
                }
                return MigrationStatus(migration: migration, appliedAt: applied.versioned[migration.version!]?.appliedAt,
                                       changedSinceApplied: false)
            }
        }
    }

    private struct Applied {
        var versioned: [Int: (sha256: String, appliedAt: Date)] = [:]
        var repeatable: [String: (sha256: String, appliedAt: Date)] = [:]
    }

    /// Creates the bookkeeping tables on first use, locks them for this transaction, reads
    /// what was applied and refuses an edited or missing versioned file.
    private func lockAndRead(_ connection: PostgresConnection) throws -> Applied {
        let ready = try connection.query("SELECT to_regclass('health_store.schema_repeatables') IS NOT NULL").first?.decode(0, as: Bool.self) ?? false
        if !ready {
            try connection.query("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
            try connection.execute(script: """
                CREATE SCHEMA IF NOT EXISTS health_store;
                CREATE TABLE IF NOT EXISTS health_store.schema_migrations (
                  version    integer PRIMARY KEY,
                  name       text NOT NULL,
                  sha256     text NOT NULL,
                  applied_at timestamptz NOT NULL
                );
                CREATE TABLE IF NOT EXISTS health_store.schema_repeatables (
                  name       text PRIMARY KEY,
                  sha256     text NOT NULL,
                  applied_at timestamptz NOT NULL
                );
                """)
        }
        // Self-conflicting, so two migrators take turns; readers never see this table.
        try connection.execute(script: "LOCK TABLE health_store.schema_migrations IN SHARE ROW EXCLUSIVE MODE")

        var applied = Applied()
        let known = Dictionary(uniqueKeysWithValues: versioned.map { ($0.version!, $0) })
        for row in try connection.query("SELECT version, name, sha256, applied_at FROM health_store.schema_migrations ORDER BY version") {
            let version: Int = try row.decode(0)
            let name: String = try row.decode(1)
            let sha: String = try row.decode(2)
            applied.versioned[version] = (sha, try row.decode(3))
            guard let migration = known[version] else { throw MigrationError.missing(version: version, name: name) }
            if migration.sha256 != sha {
                throw MigrationError.changed(file: migration.fileName, applied: sha, now: migration.sha256)
            }
        }
        for row in try connection.query("SELECT name, sha256, applied_at FROM health_store.schema_repeatables") {
            applied.repeatable[try row.decode(0)] = (try row.decode(1), try row.decode(2))
        }
        return applied
    }

    private func record(_ migration: Migration, on connection: PostgresConnection) throws {
        if let version = migration.version {
            try connection.query("""
                INSERT INTO health_store.schema_migrations (version, name, sha256, applied_at)
                VALUES ($1, $2, $3, clock_timestamp())
                """, [version, migration.name, migration.sha256])
        } else {
            try connection.query("""
                INSERT INTO health_store.schema_repeatables (name, sha256, applied_at)
                VALUES ($1, $2, clock_timestamp())
                ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = excluded.applied_at
                """, [migration.name, migration.sha256])
        }
    }
}
