import Foundation
import Hashing
import HealthPayload
import Postgres

/// What storing a Health Auto Export body did: the counts of its samples (workouts included),
/// and how many workouts it held.
public struct HAECounts: Sendable, Equatable {
    /// Samples by outcome, as the delivery row counts them (`matched`: a twin of a sample of a
    /// way in that wins, held already, so not stored).
    public var samples: StoreCounts
    /// Workouts in the body (stored or held already), not counting quarantined ones.
    public var workouts: Int

    /// Creates counts.
    public init(samples: StoreCounts = StoreCounts(), workouts: Int = 0) {
        self.samples = samples
        self.workouts = workouts
    }

    /// `{"samples", "inserted", "duplicates", "replaced", "quarantined", "workouts"}`: a matched
    /// sample is a duplicate here (held already), so the four outcomes add up to `samples`.
    public var jsonText: String {
        let s = samples
        return "{\"samples\":\(s.samples),\"inserted\":\(s.inserted),\"duplicates\":\(s.duplicates + s.matched)"
            + ",\"replaced\":\(s.replaced),\"quarantined\":\(s.quarantined),\"workouts\":\(workouts)}"
    }
}

/// Stores decoded Health Auto Export bodies (`migrations/repeatable/37_hae.sql`): a body's
/// metric samples a chunk at a time through `store_samples`, each workout with its streams and
/// route, then its delivery row, quarantine and other arrays, all in the caller's transaction.
/// The receiver and `ingest` both store through it.
public enum HAEStore {
    /// Metric samples per statement: each chunk's JSON is written out only when it is stored, so
    /// a 64 MiB body never holds its samples' JSON whole (docs/health-auto-export.md).
    public static let chunkSamples = 2000

    /// Stores one body of `person` in a transaction of its own, the rollups refreshed once
    /// before the commit. With `holdingCredential` (the receiver) the credential is checked
    /// again under the person lock by the first statement that stores (`CredentialHold`).
    public static func store(_ body: HAEBody, person: String, bodySHA256: [UInt8], holdingCredential: Bool = false,
                             pool: PostgresPool) throws -> HAECounts {
        try pool.withTransaction { connection in
            let counts = try store(body, person: person, file: nil, bodySHA256: bodySHA256, holdingCredential: holdingCredential,
                                   deferRollups: true, on: connection)
            try connection.query("SELECT health_store.flush_rollups($1)", [person])
            return counts
        }
    }

    /// Stores one body on `connection`, inside the caller's transaction; `file` is the path it
    /// was read from (nil for a request). With `deferRollups` the rollups wait for
    /// `health_store.flush_rollups` (the caller's, before its commit).
    public static func store(_ body: HAEBody, person: String, file: String?, bodySHA256: [UInt8], holdingCredential: Bool = false,
                             deferRollups: Bool, on connection: PostgresConnection) throws -> HAECounts {
        let export = exportId(bodySHA256)
        let receivedAt = Date()
        var counts = HAECounts()
        var start = 0
        while start < body.metricSampleCount {
            let range = start..<min(start + chunkSamples, body.metricSampleCount)
            counts.samples += try stored(connection.query("""
                SELECT n_inserted, n_replaced, n_matched
                FROM health_store.store_hae_samples($1::text, $2::boolean, $3::jsonb, $4::uuid, $5::timestamptz, $6::boolean)
                """, [person, holdingCredential, PostgresBinaryText(body.samplesJSON(range)), export, receivedAt, deferRollups]),
                sent: range.count)
            start = range.upperBound
        }
        for workout in body.workouts {
            counts.samples += try store(workout, person: person, export: export, holdingCredential: holdingCredential,
                                        receivedAt: receivedAt, deferRollups: deferRollups, on: connection)
            counts.workouts += 1
        }
        counts.samples.quarantined = body.quarantined.count
        counts.samples.duplicates += body.repeatedSamples
        counts.samples.samples = body.sampleCount
        try recordDelivery(body, counts.samples, person: person, file: file, export: export, bodySHA256: bodySHA256,
                           holdingCredential: holdingCredential, receivedAt: receivedAt, on: connection)
        return counts
    }

    /// One workout with its streams and route.
    static func store(_ workout: HAEWorkout, person: String, export: String, holdingCredential: Bool, receivedAt: Date,
                      deferRollups: Bool, on connection: PostgresConnection) throws -> StoreCounts {
        var parameters: [(any PostgresBindable)?] = [person, holdingCredential, PostgresBinaryText(workout.sampleJSON)]
        var streams: [String] = []
        for var named in workout.streams {
            let n = parameters.count
            streams.append("ROW($\(n + 1), $\(n + 2), $\(n + 3))::health_store.workout_stream")
            parameters.append(named.name)
            parameters += StrideeStore.arrayParameters(&named.stream)
        }
        let route = StrideeStore.routeRow(workout.route, after: &parameters)
        let n = parameters.count
        parameters += [export, receivedAt, deferRollups]
        return try stored(connection.query("""
            SELECT n_inserted, n_replaced, n_matched
            FROM health_store.store_hae_workout($1::text, $2::boolean, $3::jsonb, ARRAY[\(streams.joined(separator: ", "))]::health_store.workout_stream[],
                                                \(route), $\(n + 1)::uuid, $\(n + 2)::timestamptz, $\(n + 3)::boolean)
            """, parameters), sent: 1)
    }

    /// The delivery row with the body's totals, its quarantine and its other arrays' items.
    static func recordDelivery(_ body: HAEBody, _ counts: StoreCounts, person: String, file: String?, export: String,
                               bodySHA256: [UInt8], holdingCredential: Bool, receivedAt: Date,
                               on connection: PostgresConnection) throws {
        var window: [String?] = [nil, nil]
        if let (start, end) = body.window {
            window = [start, end].map { stamp in
                var text: [UInt8] = []
                stamp.appendReferenceText(to: &text)
                return String(decoding: text, as: UTF8.self)
            }
        }
        try connection.query("""
            SELECT health_store.store_hae_delivery($1::text, $2::boolean, $3::health_store.delivery_origin, $4::text, $5::uuid,
                                                   $6::timestamptz, $7::timestamptz, $8::integer, $9::integer, $10::integer,
                                                   $11::integer, $12::jsonb, $13::jsonb, $14::bytea, $15::timestamptz)
            """, [person, holdingCredential, "hae", file, export, window[0], window[1],
                  counts.samples - counts.quarantined, counts.inserted, counts.replaced, counts.matched,
                  BatchStore.quarantineJSON(body.quarantined), PostgresBinaryText(body.recordsJSON()),
                  PostgresBytea(bodySHA256), receivedAt])
    }

    /// What a storing statement answered, for `sent` samples: the rest of them are duplicates.
    static func stored(_ rows: PostgresRows, sent: Int) throws -> StoreCounts {
        guard let row = rows.first else { return StoreCounts() }
        let inserted: Int = try row.decode(0), replaced: Int = try row.decode(1), matched: Int = try row.decode(2)
        return StoreCounts(samples: sent, inserted: inserted, duplicates: sent - inserted - replaced - matched,
                           replaced: replaced, matched: matched)
    }

    /// The exportId of a body: a name-based uuid of its SHA-256, so a retried body is one run.
    static func exportId(_ bodySHA256: [UInt8]) -> String {
        var out: [UInt8] = []
        UUIDv5.appendText(bodySHA256.withUnsafeBytes { UUIDv5.value(namespace: HAEBody.namespace, name: $0) }, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
