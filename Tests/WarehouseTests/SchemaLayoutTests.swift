import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The two kinds of schema files (docs/architecture.md, "Schema layout"): versioned
/// migrations that are applied once and never edited, and repeatable definition files that
/// are applied again whenever they change.
@Suite("Schema layout")
struct SchemaLayoutTests {
    typealias S = Sample

    /// Every object of the two schemas as text: function definitions, view definitions,
    /// columns, indexes, constraints, composite types, grants and comments.
    static func catalog(_ c: PostgresConnection) throws -> [String] {
        try c.table("""
            WITH ns AS (SELECT oid, nspname FROM pg_namespace WHERE nspname IN ('health', 'health_store'))
            SELECT 'schema ' || ns.nspname || ' ' || coalesce(array_to_string(n.nspacl, ','), '') || ' '
                   || coalesce(obj_description(n.oid, 'pg_namespace'), '')
            FROM ns JOIN pg_namespace n ON n.oid = ns.oid
            UNION ALL
            SELECT 'function ' || p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid) || ' acl '
                   || coalesce(array_to_string(p.proacl, ','), '') || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
            FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
            UNION ALL
            SELECT 'relation ' || c.oid::regclass::text || ' ' || c.relkind::text || ' ' || coalesce(pg_get_viewdef(c.oid), '')
                   || ' acl ' || coalesce(array_to_string(c.relacl, ','), '') || ' options ' || coalesce(array_to_string(c.reloptions, ','), '')
                   || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '')
            FROM pg_class c JOIN ns ON ns.oid = c.relnamespace WHERE c.relkind <> 'i'
            UNION ALL
            SELECT 'column ' || c.oid::regclass::text || '.' || a.attname || ' #' || a.attnum || ' '
                   || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' '
                   || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(col_description(c.oid, a.attnum), '')
            FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
            WHERE c.relkind IN ('r', 'v', 'c')
            UNION ALL
            SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i
            JOIN pg_class c ON c.oid = i.indrelid JOIN ns ON ns.oid = c.relnamespace
            UNION ALL
            SELECT 'constraint ' || con.conrelid::regclass::text || ' ' || con.conname || ' ' || pg_get_constraintdef(con.oid)
            FROM pg_constraint con JOIN ns ON ns.oid = con.connamespace
            ORDER BY 1
            """).rows.map { $0[0] ?? "" }
    }

    /// The columns of every health_store table but the bookkeeping ones.
    static func columns(_ c: PostgresConnection) throws -> [String: [String]] {
        var columns: [String: [String]] = [:]
        for row in try c.table("""
            SELECT c.relname, a.attname FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE n.nspname = 'health_store' AND c.relkind = 'r' AND c.relname NOT LIKE 'schema_%'
            ORDER BY c.relname, a.attnum
            """).rows {
            columns[row[0]!, default: []].append(row[1]!)
        }
        return columns
    }

    /// Every row of the given tables, limited to the given columns, as sorted text.
    static func data(_ c: PostgresConnection, _ columns: [String: [String]]) throws -> [String: String] {
        var contents: [String: String] = [:]
        for (table, names) in columns {
            let list = names.map { "t.\"\($0)\"" }.joined(separator: ", ")
            contents[table] = try c.query("SELECT coalesce(string_agg(x::text, E'\\n' ORDER BY x::text), '') FROM (SELECT \(list) FROM health_store.\(table) t) x").first?[0] ?? ""
        }
        return contents
    }

    @Test("an edited repeatable file is applied again, alone, by the next migrate; an edited versioned file is still refused")
    func repeatableReapplied() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            var files = Migrator().migrations
            let index = try #require(files.firstIndex { $0.fileName == "repeatable/40_public_views.sql" })
            let original = files[index]
            files[index] = try #require(Migration(fileName: original.fileName, bytes: Array((original.sql + """

                COMMENT ON VIEW health.catalog IS 'edited by a test';
                """).utf8)))
            let applied = try Migrator(migrations: files).migrate(c)
            #expect(applied.map(\.fileName) == ["repeatable/40_public_views.sql"])
            #expect(try c.query("SELECT obj_description('health.catalog'::regclass, 'pg_class')").first?[0] == "edited by a test")
            #expect(try c.query("SELECT sha256 FROM health_store.schema_repeatables WHERE name = '40_public_views'").first?[0] == files[index].sha256)
            let status = try Migrator().status(c)
            let entry = try #require(status.first { $0.migration.fileName == original.fileName })
            #expect(entry.appliedAt == nil && entry.changedSinceApplied, "the binary's own file now differs from the applied one")

            // The binary's own file goes back in on the next run, and nothing else does.
            #expect(try Migrator().migrate(c).map(\.fileName) == ["repeatable/40_public_views.sql"])
            #expect(try c.query("SELECT obj_description('health.catalog'::regclass, 'pg_class')").first?[0] != "edited by a test")
            #expect(try Migrator().migrate(c).isEmpty)

            var edited = Migrator().migrations
            let first = try #require(edited.firstIndex { !$0.isRepeatable })
            edited[first] = try #require(Migration(fileName: edited[first].fileName, bytes: Array((edited[first].sql + "\n-- edited").utf8)))
            #expect(throws: MigrationError.self) { try Migrator(migrations: edited).migrate(c) }
        }
    }

    @Test("a failing repeatable file rolls back the whole run, versioned files included")
    func failingRepeatableRollsBack() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            let bad = try #require(Migration(fileName: "repeatable/99_broken.sql",
                                             bytes: Array("CREATE VIEW health.broken AS SELECT 1; SELECT 1/0;".utf8)))
            #expect {
                try Migrator(migrations: Migrator().migrations + [bad]).migrate(c)
            } throws: { error in
                "\(error)".contains("repeatable/99_broken.sql") && "\(error)".contains("nothing of this run was kept")
            }
            #expect(try c.query("SELECT to_regclass('health_store.samples') IS NULL AND to_regclass('health.broken') IS NULL").first?.decode(0, as: Bool.self) == true)
            #expect(try Migrator().migrate(c).count == Migrator().migrations.count)
        }
    }

    /// A database migrated by the binary before the repeatable layout (0001–0021), with data:
    /// the upgrade changes no row, leaves every rollup equal to a recompute, and ends in the
    /// very schema a fresh database gets.
    @Test("a database migrated to 0021 with data upgrades with no data change, equal rollups, and the catalog of a fresh database",
          .disabled(if: TestPostgres.citusURL != nil, "the schema before 0042 never ran on Citus"))
    func upgradeFrom0021() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            let old = Migrator().versioned.filter { $0.version! <= 21 }
            try Migrator(migrations: old).migrate(c)
            let store = Store(connection: c)
            try store.batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-10T08:00:00.000+01:00", value: 1200),
                S.quantity(S.U(2), HK.steps, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 900),
                S.quantity(S.U(3), HK.heartRate, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 71),
                S.sleep(S.U(4), source: "watch", start: "2026-03-10T01:00:00.000+01:00", end: "2026-03-10T02:30:00.000+01:00", value: 3),
                S.workout(S.U(5), source: "watch", start: "2026-03-10T17:00:00.000+01:00", end: "2026-03-10T17:40:00.000+01:00", activityType: 37, activityName: "running", duration: 2400),
            ])
            try store.batch(person: "q", [S.quantity(S.U(6), HK.bodyMass, source: "scale", start: "2026-03-11T07:00:00.000+01:00", value: 80.4)])
            try c.query("SELECT health.set_time_zone('q', 'Europe/Berlin')")
            try c.query("SELECT health.set_source_priority('p', $1, ARRAY['watch'])", [HK.steps])
            let existing = try Self.columns(c)
            let before = try Self.data(c, existing)

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == Migrator().versioned.compactMap(\.version).filter { $0 > 21 })
            #expect(applied.filter(\.isRepeatable).count == Migrator().repeatable.count)

            // Tables a later migration reshaped — rule data that became a function (the sleep
            // stages) and derived rows (level 1's aggregates as one column, 0042) — are held to
            // the rollups' equality with a recompute below; the samples moved into a compact table
            // (0080) and health_store.samples, a view now, gives back every value of every column
            // they had; every other table keeps every value of every column it had.
            let kept = try Self.columns(c)
            let unchanged = existing.filter { table, names in kept[table].map { now in names.allSatisfy(now.contains) } ?? false }
            #expect(Set(existing.keys).subtracting(unchanged.keys) == ["rollup_source", "sleep_stages", "samples"])
            #expect(try Self.data(c, unchanged) == before.filter { unchanged[$0.key] != nil }, "no value of a column that existed changed")
            let samples = try #require(existing["samples"])
            #expect(try Self.data(c, ["samples": samples]) == before.filter { $0.key == "samples" }, "every sample as it was, payload included")
            #expect(try Self.columns(c)["persons"] != nil, "the upgrade adds health_store.persons")
            #expect(try c.table("SELECT person FROM health_store.persons ORDER BY 1").rows == [["p"], ["q"]])
            for person in ["p", "q"] {
                #expect(try c.table("SELECT * FROM health_store.verify_rollups($1)", [person]).count == 0)
            }
            // Still written to the same way after the upgrade.
            try store.batch([S.quantity(S.U(7), HK.steps, source: "watch", start: "2026-03-10T10:00:00.000+01:00", value: 100)])
            #expect(try c.table("SELECT value::text, source FROM health.daily_totals WHERE person = 'p' AND type = $1", [HK.steps]).rows == [["1000", "watch"]])
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)

            let upgraded = try Self.catalog(c)
            try TestPostgres.withDatabase { fresh in
                let f = try fresh.connect()
                let expected = try Self.catalog(f)
                #expect(upgraded.count == expected.count)
                let missing = Set(expected).subtracting(upgraded), extra = Set(upgraded).subtracting(expected)
                #expect(missing.isEmpty && extra.isEmpty, "fresh only: \(missing.sorted().prefix(3)); upgraded only: \(extra.sorted().prefix(3))")
            }
        }
    }

    /// The functions docs/architecture.md lists as the writers of health_store.sample_rows.
    static func documentedSampleWriters() throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let start = try #require(text.range(of: "<!-- samples-writers -->"))
        let end = try #require(text.range(of: "<!-- /samples-writers -->"))
        return Set(text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `"), let close = line.dropFirst(3).firstIndex(of: "`") else { return nil }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<close])
        })
    }

    /// The functions of both schemas whose source text may write health_store.sample_rows: a
    /// statement naming the table, a dynamic statement (`EXECUTE format('DELETE FROM
    /// health_store.%I …')`) whose table is a run-time name and so may be sample_rows, or any other
    /// `EXECUTE` of text built at run time, which could write anything (not the `EXECUTE
    /// FUNCTION` of a trigger a function makes).
    static let sampleWritersQuery = """
        SELECT n.nspname || '.' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname IN ('health', 'health_store')
          AND (coalesce(p.prosrc, '') ~* '(insert\\s+into|update|delete\\s+from)\\s+health_store\\.sample_rows\\M'
               OR coalesce(p.prosrc, '') ~* 'execute\\s+format\\(\\s*''\\s*(insert\\s+into|update|delete\\s+from|merge\\s+into)\\s+health_store\\.(%I|%s|sample_rows\\M)'
               OR coalesce(p.prosrc, '') ~* '\\mexecute\\s+(?!format\\(\\s*''\\s*select\\M)(?!(function|procedure)\\M)')
        ORDER BY 1
        """

    /// The refresh writes a calc view's row as its table's row by position (`ROW(v.*)::` the
    /// table's type, `INSERT … SELECT v.*`, 25_rollup_upkeep.sql): a view whose columns drifted
    /// from its table's order would put one double precision into another's column unseen.
    @Test("the calc views of rollup levels 2 and 3 give their tables' columns, names and types, in the tables' order")
    func calcViewsMatchTheirTables() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            func columns(_ relation: String) throws -> [[String?]] {
                try c.table("""
                    SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
                    WHERE a.attrelid = '\(relation)'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
                    """).rows
            }
            for (view, table) in [("health_store.calc_day_type", "health_store.rollup_day_type"), ("health_store.calc_day", "health_store.rollup_day")] {
                let tableColumns = try columns(table)
                #expect(tableColumns.count > 20, "\(table) read")
                #expect(try columns(view) == tableColumns, "\(view) against \(table)")
            }
        }
    }

    @Test("the functions whose bodies insert, update or delete health_store.sample_rows, dynamic statements included, are exactly the ones docs/architecture.md lists")
    func sampleWriters() throws {
        try TestPostgres.withDatabase { db in
            let writers = try db.connect().table(Self.sampleWritersQuery).rows.compactMap { $0[0] }
            #expect(writers.count >= 5)
            #expect(writers.contains("health_store.delete_person"), "its DELETE of every person table is built at run time")
            #expect(Set(writers) == (try Self.documentedSampleWriters()))
        }
    }

    @Test("the writer list sees dynamic SQL: a DELETE built by format() over a run-time table name, or any EXECUTE of built text, counts; a dynamic SELECT or a trigger's EXECUTE FUNCTION does not")
    func dynamicWritersSeen() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            try c.execute(script: """
                CREATE SCHEMA health_store;
                CREATE FUNCTION health_store.wipes(t text) RETURNS void LANGUAGE plpgsql AS $$
                BEGIN EXECUTE format('DELETE FROM health_store.%I WHERE person = $1', t) USING 'x'; END $$;
                CREATE FUNCTION health_store.builds(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE q; END $$;
                CREATE FUNCTION health_store.counts(t text) RETURNS bigint LANGUAGE plpgsql AS $$
                DECLARE n bigint; BEGIN EXECUTE format('SELECT count(*) FROM health_store.%I', t) INTO n; RETURN n; END $$;
                CREATE FUNCTION health_store.guards() RETURNS void LANGUAGE plpgsql AS $$
                BEGIN CREATE TEMPORARY TABLE q (x int);
                CREATE CONSTRAINT TRIGGER g AFTER INSERT ON pg_temp.q DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION health_store.g(); END $$;
                """)
            #expect(try c.table(Self.sampleWritersQuery).rows == [["health_store.builds"], ["health_store.wipes"]])
        }
    }

    @Test("every function of the two schemas is immune to the caller's search_path: a pinned search_path or a body parsed when it was created")
    func searchPathPinned() throws {
        try TestPostgres.withDatabase { db in
            let loose = try db.connect().table("""
                SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname IN ('health', 'health_store')
                  AND p.prosqlbody IS NULL
                  AND NOT coalesce(p.proconfig, '{}') @> ARRAY['search_path=pg_catalog, pg_temp']
                ORDER BY 1
                """)
            #expect(loose.rows.isEmpty, "functions that resolve names at call time: \(loose.rows)")
        }
    }
}
