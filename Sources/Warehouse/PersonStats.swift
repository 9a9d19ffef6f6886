import Foundation
import Postgres

/// A person's counts, as `GET /stats` answers them.
public enum PersonStats {
    /// `{"person", "samples", "deliveries", "duplicates", "last_received_at", "newest_sample_end_at"}`,
    /// times in ISO 8601 UTC or `null`.
    public static func jsonText(person: String, on connection: PostgresConnection) throws -> String {
        // Samples held: what health_store.live_samples holds (Health's deletions left out).
        let row = try connection.query("""
            WITH d AS (
              SELECT count(*) AS deliveries, coalesce(sum(duplicates), 0) AS duplicates
              FROM health_store.deliveries WHERE person = $1
            ),
            h AS (SELECT count(*) AS samples FROM health_store.live_samples WHERE person = $1)
            SELECT json_build_object(
              'person', $1::text,
              'samples', h.samples,
              'deliveries', d.deliveries,
              'duplicates', d.duplicates,
              -- What health.freshness says: a batch or a Stridee push (health_store.note_receipt), and
              -- the newest sample end noted by the write path, samples Health deleted left out.
              'last_received_at', to_char(p.last_received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              'newest_sample_end_at', to_char(p.newest_end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
            FROM d CROSS JOIN h LEFT JOIN health_store.persons p ON p.person = $1
            """, [person])
        return row.first?[0] ?? "{}"
    }

    /// True when the database answers a trivial query.
    public static func isDatabaseUp(_ connection: PostgresConnection) -> Bool {
        (try? connection.query("SELECT 1")) != nil
    }
}
