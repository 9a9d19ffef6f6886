import Foundation
import HealthPayload
import Postgres

/// How a batch reached us; recorded on its delivery row.
public enum DeliveryOrigin: Sendable, Equatable {
    /// A POST to the receiver.
    case http
    /// A saved body read by `ingest`, with the file's path.
    case file(path: String)
    /// A batch of the Health app's export read by `import-apple-health`, with the export's path.
    case export(path: String)
    /// Health Auto Export's samples as `person export` wrote them (healthd's shape), with the
    /// file's path: they keep their origin (a body the app sends goes through `HAEStore`).
    case hae(path: String)

    var name: String {
        switch self {
        case .http: return "http"
        case .file: return "file"
        case .export: return "export"
        case .hae: return "hae"
        }
    }

    var path: String? {
        switch self {
        case .http: return nil
        case .file(let path), .export(let path), .hae(let path): return path
        }
    }

    /// The delivery's format: the batch's own, but an export's is its XML.
    func format(of batch: Batch) -> String {
        if case .export = self { return "xml" }
        return batch.format.rawValue
    }
}

/// What storing one or more batches did.
public struct StoreCounts: Sendable, Equatable {
    /// Samples in the body, quarantined ones included.
    public var samples = 0
    /// Samples new to this person.
    public var inserted = 0
    /// Samples already held with the same content, and repeats within the batch.
    public var duplicates = 0
    /// Samples held before whose content changed: the newer copy replaced the older.
    public var replaced = 0
    /// Samples that broke the contract, kept apart with the reason.
    public var quarantined = 0
    /// Records of an export not stored because a pushed sample equal to them is held (always 0 for healthd batches).
    public var matched = 0

    public init(samples: Int = 0, inserted: Int = 0, duplicates: Int = 0, replaced: Int = 0, quarantined: Int = 0, matched: Int = 0) {
        self.samples = samples
        self.inserted = inserted
        self.duplicates = duplicates
        self.replaced = replaced
        self.quarantined = quarantined
        self.matched = matched
    }

    /// The sum of two counts, field by field.
    public static func + (a: StoreCounts, b: StoreCounts) -> StoreCounts {
        StoreCounts(samples: a.samples + b.samples, inserted: a.inserted + b.inserted, duplicates: a.duplicates + b.duplicates,
                    replaced: a.replaced + b.replaced, quarantined: a.quarantined + b.quarantined, matched: a.matched + b.matched)
    }

    /// Adds `b` to `a`, field by field.
    public static func += (a: inout StoreCounts, b: StoreCounts) {
        a = a + b
    }

    /// `{"samples": n, "inserted": i, "duplicates": d, "replaced": r, "quarantined": q}`
    public var jsonText: String {
        "{\"samples\":\(samples),\"inserted\":\(inserted),\"duplicates\":\(duplicates),\"replaced\":\(replaced),\"quarantined\":\(quarantined)}"
    }
}

/// Stores decoded batches: the one write path of samples, shared by the receiver, `ingest` and
/// `import-apple-health`.
///
/// Everything happens in PostgreSQL's `health_store.store_batch`, one call per batch: the
/// samples are upserted on (person, uuid) in one statement, the delivery and quarantine rows
/// written and the rollups of the touched days refreshed. The receiver stores a body's batches
/// in a transaction of their own (`store(_:person:origin:bodySHA256:)`); the pipeline stores
/// several batches per transaction, each in a savepoint (`BatchGroup`), and the rollups are
/// then refreshed once, just before its commit.
public struct BatchStore: Sendable {
    let pool: PostgresPool

    /// A store writing through `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Stores every batch of one body in one transaction: all of them or none. A body of one
    /// batch is one statement, a transaction of its own (on Citus, one call on the person's
    /// worker: docs/scaling.md).
    ///
    /// With `holdingCredential` (the receiver) `store_batch` checks the request's credential again
    /// under the person lock (`health_store.hold_person`) in the statement that stores: a person
    /// deleted since the request's head was read gets nothing stored, and the error
    /// `CredentialHold.isRevoked` knows.
    @discardableResult
    public func store(_ batches: [Batch], person: String, origin: DeliveryOrigin, bodySHA256: [UInt8],
                      holdingCredential: Bool = false) throws -> StoreCounts {
        func store(_ batch: Batch, on connection: PostgresConnection) throws -> StoreCounts {
            try Self.store(batch, person: person, origin: origin, bodySHA256: bodySHA256, holdingCredential: holdingCredential, on: connection)
        }
        if batches.count == 1 {
            return try pool.withConnection { try store(batches[0], on: $0) }
        }
        return try pool.withTransaction { connection in
            try batches.reduce(StoreCounts()) { total, batch in total + (try store(batch, on: connection)) }
        }
    }

    /// Stores one batch on a connection, inside the caller's transaction if one is open; the
    /// batch is received now, by this process's clock. `deferRollups` is for a `BatchGroup`: the
    /// rollups wait for its commit (`health_store.flush_rollups`).
    public static func store(_ batch: Batch, person: String, origin: DeliveryOrigin, bodySHA256: [UInt8],
                             holdingCredential: Bool = false, deferRollups: Bool = false,
                             on connection: PostgresConnection) throws -> StoreCounts {
        let row = try connection.query("""
            SELECT samples, inserted, duplicates, replaced, quarantined, matched
            FROM health_store.store_batch($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10::timestamptz, $11)
            """, [person, origin.name, holdingCredential, origin.format(of: batch), origin.path, batch.envelope.jsonText,
                  PostgresBinaryText(batch.samplesJSON), quarantineJSON(batch.quarantined), PostgresBytea(bodySHA256), Date(),
                  deferRollups])
        guard let first = row.first else { return StoreCounts() }
        return StoreCounts(samples: try first.decode(0), inserted: try first.decode(1), duplicates: try first.decode(2),
                           replaced: try first.decode(3), quarantined: try first.decode(4), matched: try first.decode(5))
    }

    /// `[{"position": 3, "reason": "…", "raw": "…"}, …]`
    static func quarantineJSON(_ samples: [QuarantinedSample]) -> String {
        var out = "["
        for (i, sample) in samples.enumerated() {
            if i > 0 { out += "," }
            out += "{\"position\":\(sample.position),\"reason\":"
            JSONString.append(quoting: sample.reason, to: &out)
            out += ",\"raw\":"
            JSONString.append(quoting: sample.raw, to: &out)
            out += "}"
        }
        return out + "]"
    }
}
