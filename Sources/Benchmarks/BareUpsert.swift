import DemoData
import Foundation
import Harness
import HealthPayload
import Postgres

/// The issue's baseline for the HTTP path: each body upserted into a plain logged table by one
/// bare statement, `INSERT … SELECT FROM jsonb_array_elements … ON CONFLICT`, keyed on
/// (person, uuid) with the sample object as jsonb; each statement its own transaction, sent by
/// libpq over the same Unix socket `serve` uses. No decoding in Swift, no typed columns, no
/// delivery row, no rollups: PostgreSQL's own cost of taking the same bytes.
enum BareUpsert {
    static let table = """
        CREATE TABLE bare_samples (
          person text NOT NULL,
          uuid   uuid NOT NULL,
          sample jsonb NOT NULL,
          PRIMARY KEY (person, uuid)
        )
        """

    /// A JSON body's samples are `->'samples'` of the body; a CSV body is handed over as the
    /// JSON array the decoder builds (PostgreSQL cannot split CSV), decoded before the clock.
    static func statement(_ format: PayloadFormat) -> String {
        """
        INSERT INTO bare_samples (person, uuid, sample)
        SELECT $1, (s->>'uuid')::uuid, s FROM jsonb_array_elements(\(format == .json ? "($2::jsonb)->'samples'" : "$2::jsonb")) AS s
        ON CONFLICT (person, uuid) DO UPDATE SET sample = EXCLUDED.sample
        """
    }

    /// What the statement is given for `body`: a JSON body itself; a CSV body's samples as the
    /// JSON array the decoder builds (decode before starting a clock).
    static func parameter(_ body: [UInt8], format: PayloadFormat) throws -> [UInt8] {
        guard format == .csv else { return body }
        guard case .batches(let batches) = try PayloadDecoder.decode(body, format: .csv), let batch = batches.first else {
            throw BenchmarkError.usage("a generated CSV body did not decode")
        }
        return batch.samplesJSON
    }

    /// Sends every body from `clients` connections at once, client k as person `client<k+1>`,
    /// into a fresh plain database, each person first sent `history` untimed (then the table
    /// vacuumed and analyzed); checks each person ends with the distinct samples.
    static func run(_ bodies: ReceiverBodies, clients: Int, cluster: TestCluster, history: ReceiverBodies? = nil) throws -> Timings {
        let database = try cluster.freshDatabase(label: "bare\(clients)", migrated: false)
        defer { try? dropDatabase(database, cluster: cluster) }
        try database.query(table)
        let parameters = try bodies.bodies.map { try parameter($0, format: bodies.format) }
        let sql = statement(bodies.format)
        if let history {
            let connection = try database.connect()
            defer { connection.close() }
            for k in 0..<clients {
                for body in history.bodies {
                    try connection.query(sql, ["client\(k + 1)", PostgresBinaryText(try parameter(body, format: history.format))])
                }
            }
            try settleDatabase(database)
        }
        try checkpoint(cluster)
        let (parts, seconds) = try onThreads(clients) { k in
            let connection = try database.connect()
            defer { connection.close() }
            var timings = Timings()
            for body in parameters {
                let t0 = monotonicSeconds()
                try connection.query(sql, ["client\(k + 1)", PostgresBinaryText(body)])
                timings.milliseconds.append((monotonicSeconds() - t0) * 1000)
                timings.samples += DemoGenerator.maxSamplesPerBatch
            }
            return timings
        }
        for k in 0..<clients {
            let rows = try database.scalar("SELECT count(*) FROM bare_samples WHERE person = $1", ["client\(k + 1)"], as: Int.self) ?? 0
            guard rows == bodies.distinct else {
                throw BenchmarkError.usage("bare upsert: client\(k + 1) holds \(rows) rows, expected \(bodies.distinct)")
            }
        }
        return Timings.merged(parts, seconds: seconds)
    }
}

/// A `CHECKPOINT` before a timed phase, so no phase pays for the dirty pages of the one before.
func checkpoint(_ cluster: TestCluster) throws {
    let admin = try PostgresConnection(connectionString: cluster.connectionString(database: "postgres"))
    defer { admin.close() }
    try admin.query("CHECKPOINT")
}

/// Drops a benchmark database once its figures and checks are taken (the disk is shared too).
func dropDatabase(_ database: TestDatabase, cluster: TestCluster) throws {
    let admin = try PostgresConnection(connectionString: cluster.connectionString(database: "postgres"))
    defer { admin.close() }
    // The name was made by TestCluster from letters, digits and underscores.
    try admin.query("DROP DATABASE IF EXISTS \(database.name) WITH (FORCE)")
}
