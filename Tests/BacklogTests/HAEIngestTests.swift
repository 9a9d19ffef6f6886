import Foundation
import HealthPayload
import HTTPServer
import Postgres
import Receiver
import Testing
import TestSupport
import Warehouse

/// Health Auto Export's files (its iCloud Drive and Dropbox automations) through `ingest`: the
/// same JSON through a file and through `POST /hae` leaves the same rows.
@Suite("Health Auto Export files")
struct HAEIngestTests {
    /// The rows a body leaves, but when they arrived: samples, deliveries, records, streams, routes.
    static let queries = [
        "SELECT \(HTTPParityTests.sampleColumns), origin::text, value_min::text, value_max::text FROM health_store.samples ORDER BY person, uuid",
        // generated_at is when the body arrived (the app's body says nothing of when it was made),
        // and so is the window of a body without samples.
        """
        SELECT person, format, export_id::text, batch_sequence, is_final, basis,
               CASE WHEN samples > 0 THEN window_start::text END, CASE WHEN samples > 0 THEN window_end::text END,
               CASE WHEN samples > 0 THEN occasion_start::text END, CASE WHEN samples > 0 THEN occasion_end::text END,
               samples, inserted, duplicates, replaced, quarantined, origin::text, matched
        FROM health_store.deliveries ORDER BY export_id
        """,
        "SELECT person, kind, item::text FROM health_store.hae_records ORDER BY kind, item_sha256",
        "SELECT person, uuid::text, stream, t::text, v::text FROM health_store.workout_streams ORDER BY uuid, stream",
        "SELECT person, uuid::text, origin::text, points, t::text, lat::text, lon::text, distance_m FROM health_store.workout_routes ORDER BY uuid",
        "SELECT person, day::text, type, source, total::text FROM health_store.rollup_source ORDER BY day, type, source",
    ]

    @Test("the same files through ingest and through POST /hae give the same rows", arguments: [
        ("hae-metrics-summarized.good.json", "minutes"), ("hae-imperial-points.good.json", nil), ("hae-sleep-nights.good.json", "days"),
        ("hae-sleep-segments.good.json", nil), ("hae-workouts-v2.good.json", nil), ("hae-workouts-v1.good.json", nil),
        ("hae-records.good.json", nil), ("hae-bounds.partial.json", nil),
    ] as [(String, String?)])
    func sameRows(fixture: String, aggregation: String?) throws {
        let bytes = try Bodies.fixture(fixture)
        let folder = try TempFolder()
        defer { folder.remove() }
        _ = try folder.write(fixture, bytes)
        try TestPostgres.withDatabase(label: "hae_http") { httpDB in
            try TestPostgres.withDatabase(label: "hae_file") { fileDB in
                let pool = PostgresPool(connectionString: httpDB.connectionString, maxConnections: 2, waitLimit: 5)
                let server = HTTPServer(configuration: HTTPServerConfiguration(
                    address: try ListenAddress.parse("127.0.0.1:0"), maxBodyBytes: 4 << 20, connectionLimit: 4,
                    connectionTimeoutSeconds: 10), onHead: Receiver(pool: pool).admit)
                try server.start()
                defer {
                    server.stop(graceSeconds: 5)
                    pool.close()
                }
                var headers = [(name: "Content-Type", value: "application/json")]
                if let aggregation { headers.append(("automation-aggregation", aggregation)) }
                let answer = try HTTPTestClient.request(port: server.boundPort, method: "POST", path: "/hae", headers: headers, body: bytes)
                #expect(answer.status == 200)

                let summary = ingest(fileDB, [folder.path], haeAggregation: try HAEAggregation.parse(header: aggregation))
                #expect(summary.failures == [])
                #expect(summary.batches == 1 && summary.filesIngested == 1)
                let answered = (try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int]) ?? [:]
                #expect(summary.samples == answered["samples"] && summary.inserted == answered["inserted"])
                #expect(summary.quarantined == answered["quarantined"])
                for query in Self.queries {
                    #expect(try httpDB.query(query).texts == fileDB.query(query).texts, "\(query)")
                }
                #expect(try fileDB.scalar("SELECT count(*) FROM health_store.deliveries WHERE origin = 'hae' AND file LIKE '%\(fixture)'",
                                          as: Int.self) == 1)
                #expect(try fileDB.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
            }
        }
    }

    @Test("a file read again is skipped by the ledger, and with --force its samples are duplicates")
    func again() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        _ = try folder.write("export.json", try Bodies.fixture("hae-metrics-summarized.good.json"))
        try TestPostgres.withDatabase { db in
            #expect(ingest(db, [folder.path], haeAggregation: .minutes).inserted == 31)
            #expect(ingest(db, [folder.path], haeAggregation: .minutes).filesSkipped == 1)
            let forced = ingest(db, [folder.path], force: true, haeAggregation: .minutes)
            #expect(forced.inserted == 0 && forced.duplicates == 31)
        }
    }

    @Test("a file whose frame is refused fails, named with the JSON path, and stores nothing")
    func refused() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        _ = try folder.write("broken.json", try Bodies.fixture("hae-metrics-object.bad.json"))
        try TestPostgres.withDatabase { (db) throws in
            let summary = ingest(db, [folder.path])
            #expect(summary.filesFailed == 1)
            #expect(summary.failures.first?.message == "not a Health Auto Export body: data.metrics: not an array")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }
}
