import Foundation
import Postgres
import Testing
import TestSupport

/// The public surface of schema health, pinned (pgTAP's columns_are): every view's columns,
/// in order, with their types; comments on everything; and what a reader may and may not do.
@Suite("Public surface")
struct ViewsSurfaceTests {
    /// Every public view's columns (docs/views.md), with the types this version chose. Append only: never rename or retype.
    static let views: [(name: String, columns: [(String, String)])] = [
        ("samples", [
            ("person", "text"),
            ("uuid", "uuid"),
            ("id", "text"),
            ("type", "text"),
            ("grp", "text"),
            ("kind", "text"),
            ("source", "text"),
            ("start_at", "timestamp with time zone"),
            ("end_at", "timestamp with time zone"),
            ("day", "date"),
            ("value", "double precision"),
            ("unit", "text"),
            ("category_name", "text"),
            ("activity_type", "integer"),
            ("activity_name", "text"),
            ("duration_s", "double precision"),
            ("distance_m", "double precision"),
            ("energy_kcal", "double precision"),
            ("payload", "jsonb"),
            ("first_received_at", "timestamp with time zone"),
            ("last_received_at", "timestamp with time zone"),
            ("export_id", "uuid"),
            ("deleted_at", "timestamp with time zone"),
        ]),
        ("catalog", [
            ("type", "text"),
            ("grp", "text"),
            ("kind", "text"),
            ("unit", "text"),
            ("metric", "text"),
            ("rule", "text"),
        ]),
        ("daily_source_totals", [
            ("person", "text"),
            ("day", "date"),
            ("type", "text"),
            ("metric", "text"),
            ("unit", "text"),
            ("source", "text"),
            ("total", "double precision"),
            ("samples", "bigint"),
            ("rank", "integer"),
            ("is_winner", "boolean"),
            ("is_partial", "boolean"),
        ]),
        ("daily_totals", [
            ("person", "text"),
            ("day", "date"),
            ("type", "text"),
            ("metric", "text"),
            ("unit", "text"),
            ("value", "double precision"),
            ("source", "text"),
            ("alternatives", "jsonb"),
            ("is_partial", "boolean"),
        ]),
        ("daily_sleep", [
            ("person", "text"),
            ("day", "date"),
            ("source", "text"),
            ("asleep_min", "double precision"),
            ("core_min", "double precision"),
            ("deep_min", "double precision"),
            ("rem_min", "double precision"),
            ("unspecified_min", "double precision"),
            ("awake_min", "double precision"),
            ("in_bed_min", "double precision"),
            ("unknown_min", "double precision"),
            ("alternatives", "jsonb"),
            ("is_partial", "boolean"),
        ]),
        ("daily_readings", [
            ("person", "text"),
            ("day", "date"),
            ("type", "text"),
            ("metric", "text"),
            ("unit", "text"),
            ("min", "double precision"),
            ("mean", "double precision"),
            ("max", "double precision"),
            ("samples", "bigint"),
            ("is_partial", "boolean"),
        ]),
        ("daily_body", [
            ("person", "text"),
            ("day", "date"),
            ("type", "text"),
            ("metric", "text"),
            ("unit", "text"),
            ("value", "double precision"),
            ("measured_at", "timestamp with time zone"),
            ("source", "text"),
        ]),
        ("daily_workouts", [
            ("person", "text"),
            ("day", "date"),
            ("workouts", "bigint"),
            ("duration_s", "double precision"),
            ("distance_m", "double precision"),
            ("energy_kcal", "double precision"),
            ("is_partial", "boolean"),
        ]),
        ("workouts", [
            ("person", "text"),
            ("day", "date"),
            ("uuid", "uuid"),
            ("start_at", "timestamp with time zone"),
            ("end_at", "timestamp with time zone"),
            ("activity_type", "integer"),
            ("activity_name", "text"),
            ("duration_s", "double precision"),
            ("distance_m", "double precision"),
            ("energy_kcal", "double precision"),
            ("source", "text"),
            ("overlapping", "uuid[]"),
            ("origin", "text"),
            ("server_type", "text"),
            ("device_name", "text"),
            ("heart_rate_min", "double precision"),
            ("heart_rate_mean", "double precision"),
            ("heart_rate_max", "double precision"),
            ("route_points", "integer"),
            ("route_distance_m", "double precision"),
            ("elevation_gain_m", "double precision"),
        ]),
        ("workout_route_points", [
            ("person", "text"), ("uuid", "uuid"), ("seq", "bigint"), ("t", "timestamp with time zone"),
            ("lat", "double precision"), ("lon", "double precision"), ("altitude_m", "double precision"),
            ("speed_mps", "double precision"), ("course_deg", "double precision"),
            ("horizontal_accuracy_m", "double precision"), ("vertical_accuracy_m", "double precision"),
        ]),
        ("workout_routes", [
            ("person", "text"), ("uuid", "uuid"), ("day", "date"), ("points", "integer"),
            ("distance_m", "double precision"), ("elevation_gain_m", "double precision"), ("geojson", "jsonb"),
        ]),
        ("workout_streams", [
            ("person", "text"), ("uuid", "uuid"), ("stream", "text"), ("t", "timestamp with time zone"),
            ("value", "double precision"), ("unit", "text"),
        ]),
        ("wellness", [
            ("person", "text"), ("kind", "text"), ("calendar_date", "date"), ("start_at", "timestamp with time zone"),
            ("end_at", "timestamp with time zone"), ("tz_offset_s", "integer"), ("is_final", "boolean"),
            ("item_id", "text"), ("fields", "jsonb"), ("first_received_at", "timestamp with time zone"),
            ("last_received_at", "timestamp with time zone"),
        ]),
        ("wellness_values", [
            ("person", "text"), ("kind", "text"), ("calendar_date", "date"), ("start_at", "timestamp with time zone"),
            ("measured_at", "timestamp with time zone"), ("metric", "text"), ("value", "double precision"),
            ("unit", "text"), ("is_final", "boolean"),
        ]),
        ("wellness_sleep", [
            ("person", "text"), ("day", "date"), ("start_at", "timestamp with time zone"),
            ("end_at", "timestamp with time zone"), ("asleep_min", "double precision"), ("light_min", "double precision"),
            ("deep_min", "double precision"), ("rem_min", "double precision"), ("unspecified_min", "double precision"),
            ("awake_min", "double precision"), ("in_bed_min", "double precision"), ("is_final", "boolean"),
        ]),
        ("daily_healthkit_check", [
            ("person", "text"), ("day", "date"), ("metric", "text"), ("warehouse_value", "double precision"),
            ("healthkit_value", "double precision"), ("difference", "double precision"),
        ]),
        ("activity_summaries", [
            ("person", "text"), ("day", "date"), ("active_energy_kcal", "double precision"),
            ("active_energy_goal_kcal", "double precision"), ("exercise_min", "double precision"),
            ("exercise_goal_min", "double precision"), ("stand_hours", "double precision"), ("stand_goal_hours", "double precision"),
        ]),
        ("hae_records", [
            ("person", "text"), ("received_at", "timestamp with time zone"), ("kind", "text"), ("item", "jsonb"),
        ]),
        ("coalesced_samples", [
            ("person", "text"), ("day", "date"), ("type", "text"), ("source", "text"), ("uuid", "uuid"),
            ("start_at", "timestamp with time zone"), ("end_at", "timestamp with time zone"),
            ("value", "double precision"), ("parts", "integer"), ("parts_total", "double precision"),
            ("counted", "boolean"),
        ]),
        ("deleted_samples", [
            ("person", "text"), ("day", "date"), ("type", "text"), ("source", "text"), ("uuid", "uuid"),
            ("start_at", "timestamp with time zone"), ("end_at", "timestamp with time zone"),
            ("value", "double precision"), ("deleted_at", "timestamp with time zone"),
            ("export_date", "timestamp with time zone"),
        ]),
        ("daily_summary", [
            ("person", "text"),
            ("day", "date"),
            ("is_partial", "boolean"),
            ("steps", "double precision"),
            ("distance_m", "double precision"),
            ("flights_climbed", "double precision"),
            ("active_energy_kcal", "double precision"),
            ("basal_energy_kcal", "double precision"),
            ("exercise_min", "double precision"),
            ("stand_min", "double precision"),
            ("sleep_min", "double precision"),
            ("heart_rate_min", "double precision"),
            ("heart_rate_mean", "double precision"),
            ("heart_rate_max", "double precision"),
            ("resting_heart_rate", "double precision"),
            ("walking_heart_rate", "double precision"),
            ("hrv_sdnn_ms", "double precision"),
            ("oxygen_saturation_pct", "double precision"),
            ("respiratory_rate", "double precision"),
            ("vo2_max", "double precision"),
            ("body_temperature_c", "double precision"),
            ("blood_pressure_systolic", "double precision"),
            ("blood_pressure_diastolic", "double precision"),
            ("body_mass_kg", "double precision"),
            ("height_m", "double precision"),
            ("body_mass_index", "double precision"),
            ("body_fat_pct", "double precision"),
            ("lean_body_mass_kg", "double precision"),
            ("workouts", "bigint"),
            ("workout_duration_s", "double precision"),
            ("unknown_samples", "bigint"),
        ]),
        ("freshness", [
            ("person", "text"),
            ("last_received_at", "timestamp with time zone"),
            ("last_export_id", "uuid"),
            ("last_basis", "text"),
            ("newest_sample_end_at", "timestamp with time zone"),
            ("hours_since_last_batch", "double precision"),
            ("stale_after", "interval"),
            ("is_stale", "boolean"),
            ("hint", "text"),
        ]),
        ("export_runs", [
            ("person", "text"),
            ("export_id", "uuid"),
            ("basis", "text"),
            ("generated_at", "timestamp with time zone"),
            ("occasion_start", "timestamp with time zone"),
            ("occasion_end", "timestamp with time zone"),
            ("batches_received", "bigint"),
            ("last_batch_sequence", "integer"),
            ("final_batch_sequence", "integer"),
            ("is_complete", "boolean"),
            ("first_received_at", "timestamp with time zone"),
            ("last_received_at", "timestamp with time zone"),
            ("samples", "bigint"),
            ("inserted", "bigint"),
            ("duplicates", "bigint"),
        ]),
        ("deliveries", [
            ("person", "text"),
            ("received_at", "timestamp with time zone"),
            ("origin", "text"),
            ("format", "text"),
            ("export_id", "uuid"),
            ("batch_sequence", "integer"),
            ("is_final", "boolean"),
            ("basis", "text"),
            ("window_start", "timestamp with time zone"),
            ("window_end", "timestamp with time zone"),
            ("samples", "integer"),
            ("inserted", "integer"),
            ("duplicates", "integer"),
            ("replaced", "integer"),
            ("quarantined", "integer"),
            ("file", "text"),
        ]),
        ("quarantine", [
            ("person", "text"),
            ("received_at", "timestamp with time zone"),
            ("export_id", "uuid"),
            ("batch_sequence", "integer"),
            ("position", "integer"),
            ("reason", "text"),
            ("raw", "text"),
        ]),
        ("unknown_types", [
            ("person", "text"),
            ("type", "text"),
            ("kind", "text"),
            ("samples", "bigint"),
            ("first_start_at", "timestamp with time zone"),
            ("last_start_at", "timestamp with time zone"),
        ]),
        ("settings", [
            ("person", "text"),
            ("time_zone", "text"),
            ("stale_after", "interval"),
        ]),
        ("sources", [
            ("person", "text"), ("source", "text"), ("name", "text"), ("named_by", "text"), ("samples", "bigint"),
            ("first_day", "date"), ("last_day", "date"),
        ]),
    ]

    static let functions = [
        "set_time_zone(person text, tz text)",
        "set_source_priority(person text, type text, sources text[])",
        "set_stale_after(person text, stale_after interval)",
        "set_source_name(person text, source text, name text)",
        "today(person text)",
        "is_partial(person text, day date)",
        "day_start(person text, day date)",
        "query_as_reader(query text, max_rows integer)",
    ]

    @Test("every public view has exactly its contract columns, in order, with their types, and nothing else is in schema health")
    func columnsAndTypes() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let rows = try c.query("""
                SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health'
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                ORDER BY c.relname, a.attnum
                """)
            var actual: [String: [(String, String)]] = [:]
            for row in rows { actual[row[0]!, default: []].append((row[1]!, row[2]!)) }
            #expect(Set(actual.keys) == Set(Self.views.map(\.name)))
            for view in Self.views {
                let got = actual[view.name] ?? []
                #expect(got.map(\.0) == view.columns.map(\.0), "columns of health.\(view.name)")
                #expect(got.map(\.1) == view.columns.map(\.1), "types of health.\(view.name)")
            }
            let kinds = try c.table("""
                SELECT DISTINCT c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'health'
                """)
            #expect(kinds.rows == [["v"]], "schema health holds views only")
            let functions = try c.table("""
                SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
                FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = 'health'
                ORDER BY 1
                """)
            #expect(functions.rows.map { $0[0]! } == Self.functions.sorted())
        }
    }

    @Test("every view, every column and every function of schema health carries a comment, and none promises up-to-the-second data")
    func comments() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let missing = try c.table("""
                SELECT c.relname, a.attname
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health'
                LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE coalesce(obj_description(c.oid, 'pg_class'), '') = ''
                   OR (a.attnum IS NOT NULL AND coalesce(col_description(c.oid, a.attnum), '') = '')
                """)
            #expect(missing.count == 0, "without comment: \(missing.rows)")
            let functions = try c.table("""
                SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace AND n.nspname = 'health'
                WHERE coalesce(obj_description(p.oid, 'pg_proc'), '') = ''
                """)
            #expect(functions.count == 0, "functions without comment: \(functions.rows)")
            let live = try c.table("""
                SELECT c.relname, a.attname, coalesce(col_description(c.oid, a.attnum), obj_description(c.oid, 'pg_class')) AS text
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health'
                LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
                WHERE obj_description(c.oid, 'pg_class') ~* '\\m(live|real-time|realtime)\\M'
                   OR col_description(c.oid, a.attnum) ~* '\\m(live|real-time|realtime)\\M'
                """)
            #expect(live.count == 0, "comments saying live: \(live.rows)")
            // §2: a comment states the time zone of every date and instant.
            let zoneless = try c.table("""
                SELECT c.relname, a.attname
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health'
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE a.atttypid IN ('timestamptz'::regtype, 'timestamp'::regtype, 'date'::regtype, 'date[]'::regtype,
                                     'timestamptz[]'::regtype)
                  AND col_description(c.oid, a.attnum) !~* '(timestamptz|\\mUTC\\M|local|time zone|\\moffset)'
                """)
            #expect(zoneless.count == 0, "dates and instants whose comment names no time zone: \(zoneless.rows)")
        }
    }

    @Test("a login granted health_reader reads every view, and is refused every health_store table, every write and every setter")
    func readerRole() throws {
        try TestPostgres.withDatabase { db in
            let admin = try db.connect()
            try Store(connection: admin).batch([
                Sample.quantity(Sample.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: 5),
            ])
            let role = "reader_" + db.name
            try admin.query("CREATE ROLE \(role) LOGIN PASSWORD 'reader-test'")
            try admin.query("GRANT health_reader TO \(role)")
            let reader = try PostgresConnection(connectionString: db.connectionString(user: role, password: "reader-test"))
            defer { reader.close(); _ = try? admin.query("DROP ROLE IF EXISTS \(role)") }

            for view in Self.views {
                #expect(throws: Never.self, "reading health.\(view.name)") {
                    try reader.query("SELECT * FROM health.\(view.name) LIMIT 5")
                }
            }
            #expect(try reader.query("SELECT steps FROM health.daily_summary").first?[0] == "5")

            let tables = try admin.table("""
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'health_store' AND c.relkind IN ('r', 'v', 'p') ORDER BY 1
                """).rows.map { $0[0]! }
            #expect(tables.contains("samples") && tables.contains("sample_rows") && tables.contains("rollup_source"))
            // On Citus the reader is given the tables the views read (docs/scaling.md, "Reading"):
            // Citus reads a view's shards as the reader. The samples are held in sample_rows and
            // series (health_store.samples is a view over them, not granted). Never tokens.
            let granted = try TestPostgres.readerGrantedTables(admin)
            #expect(!granted.contains("tokens") && !granted.contains("samples"))
            if TestPostgres.citusURL != nil {
                #expect(granted.isSuperset(of: ["sample_rows", "series", "rollup_source"]), "\(granted)")
            }
            for table in tables {
                if granted.contains(table) {
                    #expect(throws: Never.self, "reading health_store.\(table) on Citus") {
                        try reader.query("SELECT * FROM health_store.\(table) LIMIT 1")
                    }
                    continue
                }
                let error = #expect(throws: PostgresError.self, "reading health_store.\(table)") {
                    try reader.query("SELECT * FROM health_store.\(table) LIMIT 1")
                }
                #expect(error?.sqlState == "42501", "health_store.\(table)")
            }
            let writes = [
                "INSERT INTO health.samples (person, uuid, id, type, grp, kind, source, start_at, end_at, day, payload, first_received_at, last_received_at) VALUES ('x', gen_random_uuid(), 'i', 't', 'g', 'quantity', 's', now(), now(), current_date, '{}', now(), now())",
                "DELETE FROM health.samples",
                "UPDATE health.deliveries SET file = 'x'",
                "SELECT health.set_time_zone('p', 'Europe/Berlin')",
                "SELECT health.set_source_priority('p', 'HKQuantityTypeIdentifierStepCount', ARRAY['x'])",
                "SELECT health.set_stale_after('p', interval '1 hour')",
                "SELECT health.set_source_name('p', 'phone', 'My phone')",
                "SELECT health_store.rebuild_rollups('p')",
                "CREATE TABLE health.mine (x int)",
                // The assistant's query runs in a function of schema health; its owner is not
                // health_reader, so a reader may neither drop nor change it.
                "DROP FUNCTION health.query_as_reader(text, integer)",
                "ALTER FUNCTION health.query_as_reader(text, integer) SECURITY INVOKER",
                "ALTER FUNCTION health.query_as_reader(text, integer) RESET ALL",
                "COMMENT ON FUNCTION health.query_as_reader(text, integer) IS 'x'",
                "SET ROLE health_sql_reader",
            ]
            // Citus refuses a write through a view over its tables before checking privileges; a
            // view that is not a plain projection of one table (health.samples joins the series)
            // takes no write at all (55000).
            let refusals: Set<String?> = TestPostgres.citusURL == nil ? ["42501", "55000"] : ["42501", "55000", "0A000"]
            for sql in writes {
                let error = #expect(throws: PostgresError.self, "\(sql)") { try reader.query(sql) }
                #expect(refusals.contains(error?.sqlState), "\(sql)")
            }
            // Its owner has health_reader's rights (and reads through it), and the reader can call it.
            #expect(try db.scalar("SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE oid = 'health.query_as_reader(text, integer)'::regprocedure",
                                     as: String.self) == "health_sql_reader")
            #expect(try db.scalar("SELECT pg_has_role('health_sql_reader', 'health_reader', 'USAGE')", as: Bool.self) == true)
            #expect(try db.scalar("SELECT pg_has_role('\(role)', 'health_sql_reader', 'MEMBER')", as: Bool.self) == false)
            try reader.query("BEGIN READ ONLY")
            let rows = try reader.query("SELECT r::text FROM health.query_as_reader('SELECT steps FROM daily_summary', 10) AS r")
            try reader.query("ROLLBACK")
            #expect(rows.map { $0[0] } == [#"{"steps":5}"#])
        }
    }
}
