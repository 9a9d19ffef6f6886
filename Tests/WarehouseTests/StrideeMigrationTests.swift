import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// Migrations over a database that already holds Stridee data: 0025_stridee_storage.sql, and
/// 0103_last_received.sql (a Stridee push is a receipt).
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

    @Test("0103: each person's last receipt, Stridee pushes included, is what freshness, /stats and person list say after it; the last batch only when it was the last receipt")
    func upgradeNotesLastReceipts() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let c = try db.connect()
            defer { c.close() }
            try Migrator(migrations: Migrator().versioned.filter { $0.version! <= 102 }).migrate(c)
            // h: two healthd batches; s: Stridee alone; m: a batch, then a Stridee push.
            try c.query("INSERT INTO health_store.persons (person) VALUES ('h'), ('s'), ('m')")
            try c.query("""
                INSERT INTO health_store.deliveries (person, received_at, origin, format, export_id, batch_sequence, is_final, basis,
                  window_start, window_end, occasion_start, occasion_end, generated_at, samples, inserted, duplicates, replaced,
                  quarantined, body_sha256)
                SELECT d.person, d.at::timestamptz, 'http', 'json', d.run::uuid, 1, true, d.basis, '2026-11-01Z', '2026-11-02Z',
                       '2026-11-01Z', '2026-11-02Z', '2026-11-02Z', 0, 0, 0, 0, 0, '\\x00'
                FROM (VALUES ('h', '2026-11-02T08:00:00Z', '6c7f1e22-1b3d-4a5e-9f00-000000000001', 'window'),
                             ('h', '2026-11-02T09:00:00Z', '6c7f1e22-1b3d-4a5e-9f00-000000000002', 'anchor'),
                             ('m', '2026-11-02T10:00:00Z', '6c7f1e22-1b3d-4a5e-9f00-000000000003', 'anchor')) d (person, at, run, basis)
                """)
            try c.query("""
                UPDATE health_store.persons p SET last_delivery_id = (SELECT max(d.delivery_id) FROM health_store.deliveries d WHERE d.person = p.person)
                """)
            try c.query("""
                INSERT INTO health_store.stridee_workouts (person, uuid, activity_type, server_type, start_at, end_at, duration_s, header,
                                                           body_sha256, first_received_at, last_received_at)
                VALUES ('s', '5d1e8c1a-2f7b-4e0c-9a43-71c6b0f8d2e4', 37, 'RUNNING', '2026-11-01T06:00:00Z', '2026-11-01T06:30:00Z', 1800,
                        '{}', '\\x01', '2026-11-02T07:00:00Z', '2026-11-02T11:00:00Z')
                """)
            try c.query("""
                INSERT INTO health_store.wellness_items (person, kind, start_at, calendar_date, is_final, item, first_received_at, last_received_at)
                VALUES ('s', 'daily', '2026-10-31T23:00:00Z', '2026-11-01', true, '{}', '2026-11-02T10:30:00Z', '2026-11-02T10:30:00Z'),
                       ('m', 'daily', '2026-10-31T23:00:00Z', '2026-11-01', true, '{}', '2026-11-02T12:00:00Z', '2026-11-02T12:00:00Z')
                """)

            try Migrator().migrate(c)
            let fresh = try c.query("""
                SELECT person, to_char(last_received_at AT TIME ZONE 'UTC', 'HH24:MI'), last_export_id::text, last_basis
                FROM health.freshness ORDER BY person
                """).map { [$0[0], $0[1], $0[2], $0[3]] }
            #expect(fresh == [["h", "09:00", "6c7f1e22-1b3d-4a5e-9f00-000000000002", "anchor"], ["m", "12:00", nil, nil], ["s", "11:00", nil, nil]])
            let listed = try c.query("SELECT person, to_char(last_received_at AT TIME ZONE 'UTC', 'HH24:MI') FROM health_store.people() ORDER BY person")
                .map { [$0[0], $0[1]] }
            #expect(listed == [["h", "09:00"], ["m", "12:00"], ["s", "11:00"]])
            for (person, at) in [("h", "09:00"), ("m", "12:00"), ("s", "11:00")] {
                let stats = try JSONSerialization.jsonObject(with: Data(try PersonStats.jsonText(person: person, on: c).utf8)) as? [String: Any]
                #expect(stats?["last_received_at"] as? String == "2026-11-02T\(at):00.000Z", "\(person)")
            }
        }
    }
}
