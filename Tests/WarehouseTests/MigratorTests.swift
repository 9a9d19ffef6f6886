import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport
import Warehouse

@Suite("Migrations")
struct MigratorTests {
    /// Every object in the two schemas with its definition, to prove a re-run changes nothing.
    static func schemaFingerprint(_ connection: PostgresConnection) throws -> String {
        try connection.query("""
            SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' ORDER BY n.nspname, c.relname)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname IN ('health', 'health_store')
            """).first?[0] ?? ""
    }

    @Test("migrations apply to an empty database, in order, and a second run changes nothing")
    func applyThenNoop() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let connection = try db.connect()
            let migrator = Migrator()
            #expect(migrator.migrations.count >= 4)
            let applied = try migrator.migrate(connection)
            #expect(applied.map(\.fileName) == migrator.migrations.map(\.fileName))
            #expect(applied.compactMap(\.version) == applied.compactMap(\.version).sorted())
            #expect(applied.last?.isRepeatable == true, "repeatable files are applied after the versioned ones")
            let recorded = try connection.query("SELECT version, name, sha256 FROM health_store.schema_migrations ORDER BY version")
            #expect(recorded.count == migrator.versioned.count)
            for (row, migration) in zip(recorded, migrator.versioned) {
                #expect(try row.decode(0, as: Int.self) == migration.version)
                #expect(row[1] == migration.name)
                #expect(row[2] == migration.sha256)
                #expect(migration.sha256.count == 64)
            }
            let definitions = try connection.query("SELECT name, sha256 FROM health_store.schema_repeatables ORDER BY name")
            #expect(definitions.map { $0[0] } == migrator.repeatable.map(\.name))
            #expect(definitions.map { $0[1] } == migrator.repeatable.map(\.sha256))
            let before = try Self.schemaFingerprint(connection)
            #expect(try migrator.migrate(connection).isEmpty)
            #expect(try Self.schemaFingerprint(connection) == before)
            #expect(try connection.query("SELECT count(*) FROM health_store.schema_migrations").first?.decode(0, as: Int.self) == migrator.versioned.count)
        }
    }

    @Test("an applied migration that was edited is refused and nothing runs")
    func editedRefused() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            var files = Migrator().migrations
            let edited = try #require(Migration(fileName: files[1].fileName, bytes: Array((files[1].sql + "\n-- edited").utf8)))
            files[1] = edited
            files.append(try #require(Migration(fileName: "9999_should_not_run.sql", bytes: Array("CREATE TABLE health_store.nope ();".utf8))))
            #expect {
                try Migrator(migrations: files).migrate(connection)
            } throws: { error in
                guard case MigrationError.changed(let file, _, _) = error else { return false }
                return file == edited.fileName && "\(error)".contains("edited after it was applied")
            }
            #expect(try connection.query("SELECT to_regclass('health_store.nope') IS NULL").first?.decode(0, as: Bool.self) == true)
        }
    }

    @Test("an applied migration missing from the binary is refused")
    func missingRefused() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let last = try #require(Migrator().versioned.last)
            let files = Migrator().migrations.filter { $0 != last }
            #expect {
                try Migrator(migrations: files).migrate(connection)
            } throws: { error in
                guard case MigrationError.missing(let version, _) = error else { return false }
                return version == last.version
            }
        }
    }

    @Test("a failing migration leaves nothing of itself and is not recorded")
    func failingMigrationRollsBack() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let bad = try #require(Migration(fileName: "9998_half_done.sql",
                                             bytes: Array("CREATE TABLE health_store.half (k int); SELECT 1/0;".utf8)))
            #expect(throws: MigrationError.self) { try Migrator(migrations: Migrator().migrations + [bad]).migrate(connection) }
            #expect(try connection.query("SELECT to_regclass('health_store.half') IS NULL").first?.decode(0, as: Bool.self) == true)
            #expect(try connection.query("SELECT count(*) FROM health_store.schema_migrations WHERE version = 9998").first?.decode(0, as: Int.self) == 0)
            #expect(!connection.isInTransaction)
        }
    }

    @Test("two migrators starting at once both succeed and apply each file once")
    func concurrentMigrators() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let outcomes = Mutex<[Result<Int, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let result = Result { () throws -> Int in
                    let connection = try db.connect()
                    defer { connection.close() }
                    return try Migrator().migrate(connection).count
                }
                outcomes.withLock { $0.append(result) }
            }
            let counts = try outcomes.withLock { $0 }.map { try $0.get() }
            #expect(counts.sorted() == [0, Migrator().migrations.count])
            #expect(try db.scalar("SELECT count(*) FROM health_store.schema_migrations", as: Int.self) == Migrator().versioned.count)
            #expect(try db.scalar("SELECT count(*) FROM health_store.schema_repeatables", as: Int.self) == Migrator().repeatable.count)
        }
    }

    @Test("the catalog holds the reference's 24 types with their rules")
    func catalog() throws {
        try TestPostgres.withDatabase { db in
            let rows = try db.query("SELECT type, grp, kind, unit, metric, rule FROM health.catalog")
            #expect(rows.count == 24)
            var byType: [String: PostgresRow] = [:]
            for row in rows { byType[row[0]!] = row }
            #expect(byType["HKQuantityTypeIdentifierStepCount"]?[5] == "total")
            #expect(byType["HKCategoryTypeIdentifierSleepAnalysis"]?[5] == "sleep")
            #expect(byType["HKCategoryTypeIdentifierSleepAnalysis"]?[3] == nil)
            #expect(byType["HKQuantityTypeIdentifierHeartRate"]?[5] == "reading")
            #expect(byType["HKQuantityTypeIdentifierOxygenSaturation"]?[3] == "fraction")
            #expect(byType["HKQuantityTypeIdentifierBodyMass"]?[5] == "latest")
            #expect(byType["HKWorkoutTypeIdentifier"]?[5] == "workout")
            #expect(byType["HKQuantityTypeIdentifierVO2Max"]?[3] == "ml/(kg*min)")
            let groups = try db.query("SELECT grp, count(*) FROM health.catalog GROUP BY grp ORDER BY grp").map { "\($0[0]!)=\($0[1]!)" }
            #expect(groups == ["activity=7", "body=5", "heart=4", "sleep=1", "vitals=6", "workouts=1"])
        }
    }
}
