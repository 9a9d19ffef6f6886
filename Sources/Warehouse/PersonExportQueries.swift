import Foundation
import Postgres

/// The reads of `person export`, each streamed row by row inside the exporter's snapshot: one
/// row is one file's body, built by PostgreSQL from the stored rows as they are.
enum PersonExportQueries {
    /// healthd v1 bodies of the samples healthd, the Health app's export and Health Auto Export
    /// brought (a Stridee workout's own sample comes back with its body): per origin and
    /// exportId, in start order,
    /// `samplesPerBody` to a body — fewer when their payloads take `storedBytesPerBody` as stored
    /// ($3): the body is cut where either count runs over — each sample's stored payload as it
    /// is. (A sample written without an exportId, which no way in does, goes under the nil UUID.)
    static let sampleBodies = """
        WITH numbered AS (
          SELECT s.origin, s.export_id, s.payload, s.uuid, s.start_at, s.end_at,
                 (row_number() OVER run - 1) / $2 AS by_count, (sum(pg_column_size(s.payload)) OVER run - 1) / $3 AS by_size
          FROM health_store.samples s
          WHERE s.person = $1 AND s.origin IN ('healthd', 'export', 'hae')
          WINDOW run AS (PARTITION BY s.origin, s.export_id ORDER BY s.start_at, s.uuid)
        ), cut AS (
          SELECT n.origin, n.export_id, n.by_count, n.by_size, count(*) AS samples, min(n.start_at) AS first_start,
                 max(n.end_at) AS last_end, json_agg(n.payload ORDER BY n.start_at, n.uuid) AS payloads
          FROM numbered n GROUP BY n.origin, n.export_id, n.by_count, n.by_size
        ), bodies AS (
          SELECT c.*, dense_rank() OVER (PARTITION BY c.origin, c.export_id ORDER BY c.by_count, c.by_size) - 1 AS chunk FROM cut c
        ), stamped AS (
          SELECT b.*, date_trunc('second', b.first_start) AS window_start,
                 date_trunc('second', b.last_end) + interval '1 second' AS window_end,
                 max(b.chunk) OVER run AS last_chunk, min(b.first_start) OVER run AS run_start, max(b.last_end) OVER run AS run_end
          FROM bodies b WINDOW run AS (PARTITION BY b.origin, b.export_id)
        )
        SELECT s.origin, s.samples, json_build_object(
          'schemaVersion', 1, 'connectivityTest', false,
          'exportId', upper(coalesce(s.export_id, '00000000-0000-4000-8000-000000000000')::text),
          'generatedAt', health_store.reference_stamp(now()), 'batchSequence', s.chunk + 1,
          'isFinalBatch', s.chunk = s.last_chunk, 'basis', 'window',
          'windowStart', health_store.reference_stamp(s.window_start), 'windowEnd', health_store.reference_stamp(s.window_end),
          'occasionStart', health_store.reference_stamp(date_trunc('second', s.run_start)),
          'occasionEnd', health_store.reference_stamp(date_trunc('second', s.run_end) + interval '1 second'),
          'samples', s.payloads)::text
        FROM stamped s ORDER BY s.origin::text COLLATE "C" DESC, s.export_id, s.chunk
        """

    /// `healthkit.v1` bodies of the Stridee workouts: the header as sent, each stream as
    /// `[{t, v}]` under its body name (`heart_rate` → `heartRate`), the route the body brought.
    /// Streams and routes are gathered per workout in subqueries of their own, each filtered by
    /// the person, and joined by uuid: no lateral join, so on Citus the whole statement is
    /// routed to the person's worker as one task (docs/scaling.md).
    static let workoutBodies = """
        WITH streams AS (
          SELECT s.uuid, jsonb_object_agg(health_store.body_name(s.stream),
                   (SELECT jsonb_agg(jsonb_build_object('t', health_store.micro_stamp(x.t), 'v', x.v) ORDER BY x.i)
                    FROM unnest(s.t, s.v) WITH ORDINALITY AS x(t, v, i))) AS streams
          FROM health_store.workout_streams s WHERE s.person = $1
          GROUP BY s.uuid
        ), routes AS (
          SELECT r.uuid, jsonb_build_object('route', jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                   't', health_store.micro_stamp(p.t), 'lat', p.lat, 'lon', p.lon, 'altitude', p.altitude, 'speed', p.speed,
                   'course', p.course, 'horizontalAccuracy', p.horizontal, 'verticalAccuracy', p.vertical)) ORDER BY p.i)) AS route
          FROM health_store.workout_routes r,
               unnest(r.t, r.lat, r.lon, r.altitude_m, r.speed_mps, r.course_deg, r.horizontal_accuracy_m, r.vertical_accuracy_m)
                 WITH ORDINALITY AS p(t, lat, lon, altitude, speed, course, horizontal, vertical, i)
          WHERE r.person = $1 AND r.origin = 'stridee'
          GROUP BY r.uuid
        )
        SELECT w.uuid::text, encode(w.body_sha256, 'hex'),
               (w.header || coalesce(st.streams, '{}'::jsonb) || coalesce(rt.route, '{}'::jsonb))::text
        FROM health_store.stridee_workouts w
        LEFT JOIN streams st ON st.uuid = w.uuid
        LEFT JOIN routes rt ON rt.uuid = w.uuid
        WHERE w.person = $1
        ORDER BY w.start_at, w.uuid
        """

    /// The routes the Health app's export and Health Auto Export brought (of workouts that are
    /// samples), one row each as stored, without the person: `health_store.restore_route` takes it back.
    static let storedRoutes = """
        SELECT r.uuid::text, (to_jsonb(r) - 'person')::text, r.origin::text
        FROM health_store.workout_routes r WHERE r.person = $1 AND r.origin IN ('export', 'hae') ORDER BY r.origin, r.uuid
        """

    /// The streams of workouts without a Stridee body (Health Auto Export's heart rate, power and
    /// cadence), one row each as stored, without the person: `health_store.restore_stream` takes it back.
    static let haeStreams = """
        SELECT s.uuid::text || '-' || s.stream, (to_jsonb(s) - 'person')::text
        FROM health_store.workout_streams s
        WHERE s.person = $1
          AND NOT EXISTS (SELECT 1 FROM health_store.stridee_workouts b WHERE b.person = s.person AND b.uuid = s.uuid)
        ORDER BY s.uuid, s.stream
        """

    /// What Health Auto Export's workouts filled in workouts of other ways in, the rows as stored
    /// without the person: `health_store.restore_workout_fills` takes them back.
    static let haeFills = """
        SELECT count(*), coalesce(json_agg(to_jsonb(f) - 'person' ORDER BY f.uuid), '[]')::text
        FROM health_store.workout_fills f WHERE f.person = $1
        """

    /// Health Auto Export bodies of the items of its other arrays (`health.hae_records`),
    /// `itemsPerBody` to a body: `{"data": {"symptoms": [...], ...}}`, each item as held.
    static let haeRecords = """
        SELECT sum(y.n)::integer, json_build_object('data', json_object_agg(y.kind, y.items))::text
        FROM (SELECT x.chunk, x.kind, count(*) AS n, json_agg(x.item ORDER BY x.item_sha256) AS items
              FROM (SELECT r.kind, r.item, r.item_sha256,
                           (row_number() OVER (ORDER BY r.kind COLLATE "C", r.item_sha256) - 1) / $2 AS chunk
                    FROM health_store.hae_records r WHERE r.person = $1) x
              GROUP BY x.chunk, x.kind) y
        GROUP BY y.chunk ORDER BY y.chunk
        """

    /// `healthkit.wellness.v1` bodies: each item as sent, `itemsPerBody` to a body, fewer when
    /// they take `storedBytesPerBody` as stored ($3).
    static let wellnessBodies = """
        SELECT count(*), json_build_object('items', json_agg(x.item ORDER BY x.kind COLLATE "C", x.start_at))::text
        FROM (SELECT w.item, w.kind, w.start_at, (row_number() OVER run - 1) / $2 AS by_count,
                     (sum(pg_column_size(w.item)) OVER run - 1) / $3 AS by_size
              FROM health_store.wellness_items w WHERE w.person = $1
              WINDOW run AS (ORDER BY w.kind COLLATE "C", w.start_at)) x
        GROUP BY x.by_count, x.by_size ORDER BY x.by_count, x.by_size
        """

    /// The activity summaries as `health_store.store_activity_summaries` takes them back.
    static let activitySummaries = """
        SELECT count(*), coalesce(json_agg(to_jsonb(a) - '{person,first_received_at,last_received_at}'::text[] ORDER BY a.day),
                                  '[]')::text
        FROM health_store.activity_summaries a WHERE a.person = $1
        """

    /// Every statement `write` streams, with its parameters for `person` (the Citus test holds
    /// each to one task).
    static func statements(person: String) -> [(sql: String, parameters: [(any PostgresBindable)?])] {
        [(sampleBodies, [person, PersonExporter.samplesPerBody, PersonExporter.storedBytesPerBody]), (workoutBodies, [person]),
         (storedRoutes, [person]), (haeStreams, [person]), (haeRecords, [person, PersonExporter.itemsPerBody]),
         (wellnessBodies, [person, PersonExporter.itemsPerBody, PersonExporter.storedBytesPerBody]), (activitySummaries, [person]),
         (haeFills, [person])]
    }

    /// Writes every file but the settings and the manifest.
    static func write(person: String, on connection: PostgresConnection, into writer: FolderWriter) throws -> [PersonExportFile] {
        var files: [PersonExportFile] = []
        var bodies = 0
        try stream(sampleBodies, [person, PersonExporter.samplesPerBody, PersonExporter.storedBytesPerBody], on: connection) { row in
            bodies += 1
            let kind: PersonFileKind = row[0] == "export" ? .appleExport : row[0] == "hae" ? .hae : .healthd
            files.append(try writer.write(String(format: "\(kind.rawValue)/%06d.json", bodies), kind: kind, items: try row.decode(1),
                                          Array(try row.decode(2, as: String.self).utf8)))
        }
        try stream(workoutBodies, [person], on: connection) { row in
            files.append(try writer.write("workouts/\(try row.decode(0, as: String.self)).json", kind: .workout, items: 1,
                                          Array(try row.decode(2, as: String.self).utf8), storedSHA256: row[1]))
        }
        try stream(storedRoutes, [person], on: connection) { row in
            let folder = row[2] == "hae" ? "hae" : "apple-export"
            files.append(try writer.write("\(folder)/routes/\(try row.decode(0, as: String.self)).json",
                                          kind: row[2] == "hae" ? .haeRoute : .appleExportRoute,
                                          items: 1, Array(try row.decode(1, as: String.self).utf8)))
        }
        try stream(haeStreams, [person], on: connection) { row in
            files.append(try writer.write("hae/streams/\(try row.decode(0, as: String.self)).json", kind: .haeStream,
                                          items: 1, Array(try row.decode(1, as: String.self).utf8)))
        }
        bodies = 0
        try stream(haeRecords, [person, PersonExporter.itemsPerBody], on: connection) { row in
            bodies += 1
            files.append(try writer.write(String(format: "hae/records/%06d.json", bodies), kind: .haeRecords, items: try row.decode(0),
                                          Array(try row.decode(1, as: String.self).utf8)))
        }
        bodies = 0
        try stream(wellnessBodies, [person, PersonExporter.itemsPerBody, PersonExporter.storedBytesPerBody], on: connection) { row in
            bodies += 1
            files.append(try writer.write(String(format: "wellness/%06d.json", bodies), kind: .wellness, items: try row.decode(0),
                                          Array(try row.decode(1, as: String.self).utf8)))
        }
        let deletions = try connection.query("SELECT health_store.person_deletions($1)::text", [person]).first!
        files.append(try writer.write("deletions.json", kind: .deletions, items: 1, Array(try deletions.decode(0, as: String.self).utf8)))
        let summaries = try connection.query(activitySummaries, [person]).first!
        files.append(try writer.write("activity-summaries.json", kind: .activitySummaries, items: try summaries.decode(0),
                                      Array(try summaries.decode(1, as: String.self).utf8)))
        // Last: read back after every workout they fill.
        let fills = try connection.query(haeFills, [person]).first!
        if try fills.decode(0, as: Int.self) > 0 {
            files.append(try writer.write("hae/fills.json", kind: .haeFills, items: try fills.decode(0),
                                          Array(try fills.decode(1, as: String.self).utf8)))
        }
        return files
    }

    /// Runs `sql`, calling `each` on every row as it arrives (one row held at a time). Not a
    /// cursor: PostgreSQL plans a cursor's query without parallel workers, and the samples'
    /// sort is the export's largest cost (docs/benchmarks.md, "People").
    static func stream(_ sql: String, _ parameters: [(any PostgresBindable)?], on connection: PostgresConnection,
                       _ each: (PostgresRow) throws -> Void) throws {
        try connection.forEachRow(sql, parameters, each)
    }
}
