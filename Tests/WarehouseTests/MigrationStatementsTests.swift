import Postgres
import Testing
import TestSupport
import Warehouse

/// A migration's statements, as the migrator runs them one at a time on Citus (whose workers
/// refuse some DDL sent as the text of several statements).
@Suite("Migration statements")
struct MigrationStatementsTests {
    static func statements(_ sql: String) -> [String] {
        Migration(fileName: "0001_fixture.sql", bytes: Array(sql.utf8))!.statements
    }

    @Test("a semicolon inside quotes, dollar quotes, comments or a BEGIN ATOMIC body ends no statement",
          arguments: [
            ("SELECT 1; SELECT 2;", ["SELECT 1", " SELECT 2"]),
            ("SELECT 'a;b''c;'; SELECT \"x;y\"", ["SELECT 'a;b''c;'", " SELECT \"x;y\""]),
            ("SELECT E'a\\';b'; SELECT 2", ["SELECT E'a\\';b'", " SELECT 2"]),
            ("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$; SELECT $1", ["CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$", " SELECT $1"]),
            ("DO $body$ BEGIN PERFORM 1; END $body$; SELECT a$b", ["DO $body$ BEGIN PERFORM 1; END $body$", " SELECT a$b"]),
            ("-- one; two\nSELECT 1 /* a; /* b; */ c; */; -- trailing;\n", ["-- one; two\nSELECT 1 /* a; /* b; */ c; */"]),
            ("CREATE FUNCTION g(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT CASE WHEN x > 0 THEN 1 END; SELECT 2; END; SELECT 3",
             ["CREATE FUNCTION g(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT CASE WHEN x > 0 THEN 1 END; SELECT 2; END", " SELECT 3"]),
            ("SELECT 'ü;ß'; ;  \n", ["SELECT 'ü;ß'"]),
          ])
    func split(sql: String, expected: [String]) {
        #expect(Self.statements(sql) == expected)
    }

    @Test("every file of the binary run a statement at a time makes the same functions and views as the files run whole")
    func everyFileSplits() throws {
        let schema = """
            SELECT p.oid::regprocedure::text || ' ' || md5(pg_get_functiondef(p.oid)) FROM pg_proc p
            WHERE p.pronamespace IN ('health'::regnamespace, 'health_store'::regnamespace) AND p.prokind <> 'a'
            UNION ALL
            SELECT c.oid::regclass::text || ' ' || c.relkind::text || ' ' || md5(coalesce(pg_get_viewdef(c.oid), ''))
            FROM pg_class c WHERE c.relnamespace IN ('health'::regnamespace, 'health_store'::regnamespace)
              AND c.relkind IN ('r', 'v', 'i') AND c.relname NOT LIKE 'schema\\_%'
            ORDER BY 1
            """
        let whole = try TestPostgres.withDatabase { db in try db.connect().query(schema).map { $0[0] } }
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            defer { c.close() }
            try c.withTransaction { c in
                for migration in Migrator().migrations {
                    for statement in migration.statements {
                        try c.execute(script: statement)
                    }
                }
                try c.query("SELECT health_store.after_migrate()")  // as the migrator ends
            }
            let split = try c.query(schema).map { $0[0] }
            #expect(split == whole)
        }
    }
}
