import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// 0025_stridee_storage.sql on a database that already holds Stridee data.
@Suite("Stridee storage migration")
struct StrideeMigrationTests {
    @Test("wellness items held as jsonb before 0025 are the same items after it, read by the views; routes and streams unchanged")
    func upgradeKeepsItems() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            defer { c.close() }
            try Migrator(migrations: Migrator().versioned.filter { $0.version! <= 24 }).migrate(c)
            try c.query("""
                INSERT INTO health_store.wellness_items (person, kind, start_at, calendar_date, is_final, item, first_received_at, last_received_at)
                VALUES ('p', 'daily', '2026-09-30T22:00:00Z', '2026-10-01', true,
                        '{"kind":"daily","calendarDate":"2026-10-01","startTime":"2026-09-30T22:00:00Z","steps":8123,"note":"x"}', now(), now()),
                       ('p', 'hrv', '2026-10-01T01:00:00Z', '2026-10-01', true,
                        '{"kind":"hrv","calendarDate":"2026-10-01","startTime":"2026-10-01T01:00:00Z","samples":[{"t":"2026-10-01T01:00:00Z","v":48.2}]}', now(), now())
                """)
            try c.query("""
                INSERT INTO health_store.workout_streams (person, uuid, stream, t, v)
                VALUES ('p', '5d1e8c1a-2f7b-4e0c-9a43-71c6b0f8d2e4', 'heart_rate', ARRAY['2026-10-01T06:00:00Z'::timestamptz], ARRAY[112::float8])
                """)
            let before = try c.query("SELECT kind, item::text FROM health_store.wellness_items ORDER BY kind").map { [$0[0], $0[1]] }

            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == Migrator().versioned.compactMap(\.version).filter { $0 > 24 })
            if TestPostgres.citusURL != nil {
                // The older schema was left as the binary of its time left it; the upgrade laid it
                // out, its rows moved into the shards.
                #expect(try c.query("""
                    SELECT count(*) FROM pg_dist_partition
                    WHERE logicalrelid IN ('health_store.wellness_items'::regclass, 'health_store.workout_streams'::regclass)
                      AND partmethod = 'h'
                    """).first?[0] == "2")
            }
            let after = try c.query("SELECT kind, item::jsonb::text, pg_typeof(item)::text FROM health_store.wellness_items ORDER BY kind")
            #expect(after.map { [$0[0], $0[1]] } == before, "the same items, now json")
            #expect(after.allSatisfy { $0[2] == "json" })
            #expect(try c.query("SELECT fields->>'note' FROM health.wellness WHERE kind = 'daily'").first?[0] == "x")
            #expect(try c.query("SELECT metric, value FROM health.wellness_values ORDER BY metric").map { [$0[0], $0[1]] }
                    == [["hrv_sdnn_ms", "48.2"], ["steps", "8123"]])
            #expect(try c.query("SELECT value FROM health.workout_streams").first?[0] == "112")
            let compression = try c.query("""
                SELECT attname, attcompression FROM pg_attribute
                WHERE attrelid = 'health_store.workout_streams'::regclass AND attname IN ('t', 'v') ORDER BY attname
                """).map { $0[1] }
            #expect(compression == ["l", "l"], "lz4 where the server has it (Debian's and the Docker image's do)")
        }
    }
}
