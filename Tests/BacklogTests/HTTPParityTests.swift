import Backlog
import Civil
import DemoData
import Foundation
import HealthPayload
import HTTPServer
import Postgres
import Receiver
import Testing
import TestSupport
import Warehouse

/// Files are only another way for a body to arrive (docs/architecture.md): the same bodies over HTTP
/// and from files must leave the same rows.
@Suite("HTTP and file ingest agree")
struct HTTPParityTests {
    /// Every column of health_store.samples but the received times, which differ by design.
    static let sampleColumns = """
        person, uuid::text, id, type, grp, kind, source, start_at::text, end_at::text, day::text, value::text, unit,
        category_name, activity_type::text, activity_name, duration_s::text, distance_m::text, energy_kcal::text,
        payload::text, export_id::text
        """
    /// Delivery columns that do not depend on how or when the batch arrived.
    static let deliveryColumns = """
        person, format, export_id::text, batch_sequence, is_final, basis, window_start::text, window_end::text,
        occasion_start::text, occasion_end::text, generated_at::text, samples, inserted, duplicates, replaced, quarantined
        """

    @Test("the same generated bodies over HTTP and from files give identical samples and delivery counts", arguments: [PayloadFormat.json, .csv])
    func sameRows(format: PayloadFormat) throws {
        let bodies = DemoGenerator(.init(start: CivilDate("2026-10-23")!, days: 4, format: format, seed: 11)).bodies()
        #expect(bodies.count > 10)
        let folder = try TempFolder()
        defer { folder.remove() }
        // JSON: one file per body. CSV: every body appended to one file, as a proxy saving bodies would.
        if format == .json {
            for body in bodies { try folder.write(body.fileName, body.bytes) }
        } else {
            try folder.write("all.csv", bodies.flatMap(\.bytes))
        }

        try TestPostgres.withDatabase(label: "parity_http") { httpDB in
            try TestPostgres.withDatabase(label: "parity_file") { fileDB in
                let pool = PostgresPool(connectionString: httpDB.connectionString, maxConnections: 2, waitLimit: 5)
                let server = HTTPServer(configuration: HTTPServerConfiguration(
                    address: try ListenAddress.parse("127.0.0.1:0"), maxBodyBytes: 4 << 20, connectionLimit: 4,
                    connectionTimeoutSeconds: 10), handler: Receiver(pool: pool).handle)
                try server.start()
                defer {
                    server.stop(graceSeconds: 5)
                    pool.close()
                }
                for body in bodies {
                    let answer = try HTTPTestClient.request(port: server.boundPort, method: "POST", path: "/",
                                                            headers: [("Content-Type", format == .json ? "application/json" : "text/csv; charset=utf-8")],
                                                            body: body.bytes)
                    #expect(answer.status == 200)
                }

                let summary = ingest(fileDB, [folder.path])
                #expect(summary.failures == [])
                #expect(summary.batches == bodies.count)
                #expect(summary.samples == bodies.reduce(0) { $0 + $1.sampleCount })

                let order = "ORDER BY person, uuid"
                let viaHTTP = try httpDB.query("SELECT \(Self.sampleColumns) FROM health_store.samples \(order)").texts
                let viaFile = try fileDB.query("SELECT \(Self.sampleColumns) FROM health_store.samples \(order)").texts
                #expect(viaHTTP.count > 1000)
                #expect(viaHTTP.count == viaFile.count)
                #expect(viaHTTP == viaFile)

                let deliveriesHTTP = try httpDB.query("SELECT \(Self.deliveryColumns) FROM health_store.deliveries ORDER BY delivery_id").texts
                let deliveriesFile = try fileDB.query("SELECT \(Self.deliveryColumns) FROM health_store.deliveries ORDER BY delivery_id").texts
                #expect(deliveriesHTTP == deliveriesFile)
                #expect(try fileDB.scalar("SELECT count(*) FROM health_store.deliveries WHERE origin = 'file' AND file IS NOT NULL", as: Int.self) == bodies.count)
                #expect(try httpDB.scalar("SELECT count(*) FROM health_store.deliveries WHERE origin = 'http' AND file IS NULL", as: Int.self) == bodies.count)
            }
        }
    }

}

extension PostgresRows {
    /// Every row as its columns' text.
    var texts: [[String?]] {
        let width = columns.count
        return map { row in (0..<width).map { row[$0] } }
    }
}
