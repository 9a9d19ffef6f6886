import Foundation
import Postgres
import Testing
import TestSupport
@testable import Warehouse

/// What `migrate` does on a Citus coordinator (docs/scaling.md). Runs only when the suite runs
/// on Citus (`HEALTH_WAREHOUSE_TEST_CITUS_URL`); otherwise each test says it did not run.
@Suite("Citus layout", .enabled(if: TestPostgres.citusURL != nil,
                                 "HEALTH_WAREHOUSE_TEST_CITUS_URL is not set: the Citus part did not run"))
struct CitusLayoutTests {
    typealias S = Sample

    @Test("every person-keyed table is distributed by person in one co-location group; the shared tables are reference tables")
    func tablesDistributed() throws {
        try TestPostgres.withDatabase { db in
            let rows = try db.connect().table("""
                SELECT c.relname, p.partmethod::text
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
                WHERE n.nspname = 'health_store' AND c.relkind = 'r' AND c.relname NOT LIKE 'schema\\_%'
                ORDER BY 1
                """).rows
            let method = Dictionary(uniqueKeysWithValues: rows.map { ($0[0]!, $0[1] ?? "local") })
            for reference in ["catalog", "rules", "tokens", "wellness_metrics", "stream_kinds"] {
                #expect(method[reference] == "n", "\(reference) is a reference table")
            }
            let byPerson = try db.connect().table("""
                SELECT c.relname, column_to_column_name(p.logicalrelid, p.partkey), p.colocationid
                FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid WHERE p.partmethod = 'h' ORDER BY 1
                """).rows
            #expect(byPerson.count >= 20)
            #expect(byPerson.allSatisfy { $0[1] == "person" }, "\(byPerson)")
            #expect(Set(byPerson.map { $0[2] }).count == 1, "one co-location group: \(byPerson)")
            for table in ["sample_rows", "series", "rollup_source", "rollup_day_type", "rollup_day", "deliveries", "settings", "persons"] {
                #expect(method[table] == "h", "\(table) is distributed")
            }
            #expect(method.values.allSatisfy { $0 != "local" }, "no table of health_store left on the coordinator alone: \(method)")
        }
    }

    @Test("store_batch is delegated to the person's worker; one person's day query touches one shard")
    func oneShard() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let delegated = try c.table("""
                SELECT objid::regprocedure::text FROM pg_dist_object
                WHERE classid = 'pg_proc'::regclass AND distribution_argument_index IS NOT NULL ORDER BY 1
                """).rows.compactMap { $0[0] }
            #expect(delegated.contains { $0.hasPrefix("health_store.store_batch(") })
            #expect(delegated.contains { $0.hasPrefix("health_store.store_workout(") })
            let store = Store(connection: c)
            try store.batch([S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-10T08:00:00.000+01:00", value: 1200)])
            for view in ["daily_summary", "daily_totals", "daily_sleep", "daily_readings", "daily_body", "daily_workouts",
                         "daily_source_totals", "workouts"] {
                let plan = try c.table("EXPLAIN SELECT * FROM health.\(view) WHERE person = 'p'").rows.compactMap { $0[0] }.joined(separator: "\n")
                #expect(plan.contains("Task Count: 1"), "health.\(view) for one person is one task:\n\(plan)")
            }
            #expect(try c.table("SELECT steps FROM health.daily_summary WHERE person = 'p'").rows == [["1200"]])
        }
    }

    @Test("every query of person export is one task on the person's worker (no lateral join keeps Citus from routing it)")
    func personExportRouted() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            for (index, statement) in PersonExportQueries.statements(person: "p").enumerated() {
                // EXPLAIN takes no parameters: the statement is prepared and its execution explained.
                let types = statement.parameters.map { $0 is String ? "text" : "int" }.joined(separator: ", ")
                try c.query("PREPARE export_\(index)(\(types)) AS \(statement.sql)")
                let values = statement.parameters.map { $0 is String ? "'p'" : "\($0!)" }.joined(separator: ", ")
                let plan = try c.table("EXPLAIN EXECUTE export_\(index)(\(values))").rows.compactMap { $0[0] }.joined(separator: "\n")
                #expect(plan.contains("Task Count: 1") && !plan.contains("Task Count: 4"), "statement \(index) is one task:\n\(plan)")
            }
        }
    }
}
