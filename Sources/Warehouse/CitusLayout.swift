import Postgres

/// The schema's layout on a Citus cluster (docs/scaling.md): when the database `migrate` is given
/// has the `citus` extension, every table holding a person's rows is distributed by `person`,
/// all co-located with `health_store.persons`, so one person's batch, rollups and views live on
/// one worker; the small shared tables are reference tables (a copy on every node); and the
/// writers a client calls with a person are distributed functions, delegated to the worker that
/// holds that person. On PostgreSQL without Citus none of this runs.
public enum CitusLayout {
    /// The table every other person-keyed table is co-located with.
    static let anchor = "health_store.persons"

    /// Tables kept whole on every node although they have a `person` column: a token is looked
    /// up by its hash alone, before anyone knows whose it is.
    static let referenceWithPerson: Set<String> = ["tokens"]

    /// The functions clients call with a person, by signature, and the argument that names the
    /// person: a call of one of them alone in its transaction runs on that person's worker.
    static let delegated: [(signature: String, personArgument: String)] = [
        ("health_store.store_batch(text, health_store.delivery_origin, boolean, text, text, jsonb, jsonb, jsonb, bytea, timestamptz, boolean)", "p_person"),
        ("health_store.store_workout(text, boolean, boolean, jsonb, bytea, health_store.workout_stream[], health_store.workout_route, timestamptz)", "p_person"),
        ("health_store.store_wellness(text, boolean, boolean, text[], timestamptz[], text[], timestamptz[], bigint[], boolean[], text[], json[], timestamptz)", "p_person"),
        ("health_store.set_connection(text, boolean, boolean, timestamptz)", "p_person"),
        ("health_store.verify_rollups(text)", "p_person"),
        ("health.set_time_zone(text, text)", "person"),
        ("health.set_source_priority(text, text, text[])", "person"),
        ("health.set_stale_after(text, interval)", "person"),
        ("health.set_source_name(text, text, text)", "person"),
    ]

    /// The installed Citus version, or nil on a database without it.
    public static func citusVersion(on connection: PostgresConnection) throws -> String? {
        try connection.query("SELECT extversion FROM pg_extension WHERE extname = 'citus'").first?[0]
    }

    /// Distributes what is not distributed yet, in the caller's transaction (the migrator's):
    /// new tables after an upgrade, everything on a first migrate. Does nothing without Citus.
    /// Returns the tables and functions it distributed now.
    @discardableResult
    public static func apply(on connection: PostgresConnection) throws -> [String] {
        guard try citusVersion(on: connection) != nil else { return [] }
        var done = try distributeTables(on: connection)
        try grantReaderTheViewsTables(on: connection)
        for function in delegated where try !isDelegated(function.signature, on: connection) {
            try connection.query("SELECT create_distributed_function($1, $2, colocate_with => $3)",
                                 [function.signature, function.personArgument, anchor])
            done.append(function.signature)
        }
        return done
    }

    /// Distributes the tables not distributed yet. The migrator calls it after the versioned
    /// files and before the repeatable ones, so views and functions are made over distributed
    /// tables and Citus propagates them whole (a view made before its table was distributed is
    /// remade by Citus without its comments and grants). Does nothing without Citus.
    @discardableResult
    public static func distributeTables(on connection: PostgresConnection) throws -> [String] {
        guard try citusVersion(on: connection) != nil else { return [] }
        var done: [String] = []
        for row in try connection.query(tablesQuery) {
            let table: String = try row.decode(0)
            let byPerson: Bool = try row.decode(1)
            if byPerson {
                let colocate = "health_store." + table == anchor ? "none" : anchor
                try connection.query("SELECT create_distributed_table($1, 'person', colocate_with => $2)",
                                     ["health_store." + table, colocate])
            } else {
                try connection.query("SELECT create_reference_table($1)", ["health_store." + table])
            }
            done.append("health_store." + table)
        }
        return done
    }

    /// The tables of health_store not yet in Citus' metadata, with whether they hold a person's
    /// rows: reference tables first (a distributed table's foreign key may point at one), then the
    /// anchor, then each table before the tables whose foreign keys point at it.
    static var tablesQuery: String {
        let references = referenceWithPerson.map { "'\($0)'" }.joined(separator: ", ")
        return """
            WITH RECURSIVE t AS (
              SELECT c.oid, c.relname,
                     EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'person' AND NOT a.attisdropped)
                       AND c.relname NOT IN (\(references)) AS by_person
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'health_store' AND c.relkind = 'r' AND c.relname NOT LIKE 'schema\\_%'
                AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p WHERE p.logicalrelid = c.oid)
            ),
            depth AS (
              SELECT t.oid, 0 AS level FROM t
              UNION ALL
              SELECT f.conrelid, d.level + 1 FROM depth d
              JOIN pg_constraint f ON f.contype = 'f' AND f.confrelid = d.oid AND f.conrelid <> d.oid
              WHERE d.level < 10
            )
            SELECT t.relname, t.by_person
            FROM t JOIN (SELECT oid, max(level) AS level FROM depth GROUP BY oid) d ON d.oid = t.oid
            ORDER BY t.by_person, t.relname <> 'persons', d.level, t.relname
            """
    }

    /// Citus runs a view's query on the shards as the user reading the view, not as its owner
    /// (citusdata/citus#1683, #6161): `health_reader` could read no view. On Citus it is given
    /// SELECT on exactly the tables the views of schema `health` read — the data those views
    /// show anyway — never on a table no view reads, and on `tokens` its `person` column only
    /// (health.settings lists who holds a token). Each migrate, for new views. (docs/scaling.md,
    /// "Reading".)
    static func grantReaderTheViewsTables(on connection: PostgresConnection) throws {
        try connection.query("GRANT USAGE ON SCHEMA health_store TO health_reader")
        for row in try connection.query(viewTablesQuery) {
            let table: String = try row.decode(0)
            try connection.query("GRANT SELECT ON TABLE health_store.\(table) TO health_reader")
        }
        // health.settings lists the persons holding a token: their names, never the hashes.
        try connection.query("GRANT SELECT (person) ON TABLE health_store.tokens TO health_reader")
        // A session that is health_reader by SET ROLE (the page at /ui) reaches the workers as
        // health_reader: Citus opens those connections as the current user, so the role must be
        // allowed to log in there (it has no password; authenticate it like Citus' own
        // connections: pg_hba.conf or pg_dist_authinfo).
        try connection.query("ALTER ROLE health_reader LOGIN")
        // So does health.query_as_reader's owner, which the assistant's query runs as.
        try connection.query("ALTER ROLE health_sql_reader LOGIN")
    }

    /// The tables of health_store that the views of schema health read (through their rewrite
    /// rules, and the rules of the views of health_store they read in turn), tokens aside: names
    /// of plain identifiers only.
    public static var viewTablesQuery: String {
        let references = referenceWithPerson.map { "'\($0)'" }.joined(separator: ", ")
        return """
            WITH RECURSIVE read (oid) AS (
              SELECT v.oid FROM pg_class v JOIN pg_namespace vn ON vn.oid = v.relnamespace AND vn.nspname = 'health'
              WHERE v.relkind = 'v'
              UNION
              SELECT d.refobjid
              FROM read x
              JOIN pg_class v ON v.oid = x.oid AND v.relkind = 'v'
              JOIN pg_rewrite r ON r.ev_class = v.oid
              JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid AND d.refclassid = 'pg_class'::regclass
            )
            SELECT DISTINCT c.relname
            FROM read x
            JOIN pg_class c ON c.oid = x.oid AND c.relkind = 'r'
            JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health_store'
            WHERE c.relname NOT IN (\(references)) AND c.relname ~ '^[a-z_][a-z0-9_]*$'
            ORDER BY 1
            """
    }

    static func isDelegated(_ signature: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("""
            SELECT EXISTS (SELECT 1 FROM pg_dist_object o
                           WHERE o.classid = 'pg_proc'::regclass AND o.objid = $1::regprocedure
                             AND o.distribution_argument_index IS NOT NULL)
            """, [signature]).first?.decode(0, as: Bool.self) ?? false
    }
}
