import Hashing
import Postgres
import Warehouse

/// What the ledger knows about one file (`health_store.ingested_files`).
public struct LedgerEntry: Sendable, Equatable {
    /// The file's size and modification time (ns since the epoch) when it was last read.
    public var size: Int64
    public var modifiedNanoseconds: Int64
    /// Everything before this offset is stored.
    public var ingestedBytes: Int64
    /// Line terminators before `ingestedBytes`.
    public var ingestedLines: Int64
    /// CSV records before `ingestedBytes`.
    public var ingestedRecords: Int64
    /// SHA-256 of bytes `[0, ingestedBytes)`.
    public var sha256: [UInt8]

    /// True when the file was read to its end and its size and modification time are unchanged.
    func isUnchanged(size: Int64, modified: Int64) -> Bool {
        self.size == size && modifiedNanoseconds == modified && ingestedBytes == size
    }
}

/// A ledger row to write: where a file now stands, with what this run stored from it.
struct LedgerUpdate: Sendable {
    var path: String
    var format: BacklogFormat
    var compressed: Bool
    var entry: LedgerEntry
    /// False for a file only touched (same content, new modification time): no new run is counted.
    var countsAsRun: Bool
}

/// Reads and writes `health_store.ingested_files`.
enum IngestLedger {
    /// Every ledger row of a person, by path.
    static func load(person: String, on connection: PostgresConnection) throws -> [String: LedgerEntry] {
        let rows = try connection.query("""
            SELECT path, size_bytes, mtime_ns, ingested_bytes, ingested_lines, ingested_records, encode(sha256, 'hex')
            FROM health_store.ingested_files WHERE person = $1
            """, [person])
        var out: [String: LedgerEntry] = [:]
        out.reserveCapacity(rows.count)
        for row in rows {
            out[try row.decode(0)] = LedgerEntry(
                size: try row.decode(1), modifiedNanoseconds: try row.decode(2), ingestedBytes: try row.decode(3),
                ingestedLines: try row.decode(4), ingestedRecords: try row.decode(5), sha256: Hex.bytes(try row.decode(6)))
        }
        return out
    }

    /// Writes a file's row inside the caller's transaction, adding `counts` to its totals.
    static func write(_ update: LedgerUpdate, person: String, batches: Int, counts: StoreCounts, on connection: PostgresConnection) throws {
        let e = update.entry
        try connection.query("""
            INSERT INTO health_store.ingested_files AS f (
              person, path, format, compressed, size_bytes, mtime_ns, ingested_bytes, ingested_lines, ingested_records,
              sha256, runs, batches, samples, inserted, duplicates, replaced, quarantined)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
            ON CONFLICT (person, path) DO UPDATE SET
              format = excluded.format, compressed = excluded.compressed, size_bytes = excluded.size_bytes,
              mtime_ns = excluded.mtime_ns, ingested_bytes = excluded.ingested_bytes,
              ingested_lines = excluded.ingested_lines, ingested_records = excluded.ingested_records,
              sha256 = excluded.sha256, runs = f.runs + excluded.runs, batches = f.batches + excluded.batches,
              samples = f.samples + excluded.samples, inserted = f.inserted + excluded.inserted,
              duplicates = f.duplicates + excluded.duplicates, replaced = f.replaced + excluded.replaced,
              quarantined = f.quarantined + excluded.quarantined,
              last_ingested_at = CASE WHEN excluded.runs > 0 THEN clock_timestamp() ELSE f.last_ingested_at END
            """, [person, update.path, update.format.rawValue, update.compressed, e.size, e.modifiedNanoseconds,
                  e.ingestedBytes, e.ingestedLines, e.ingestedRecords, PostgresBytea(e.sha256), update.countsAsRun ? 1 : 0,
                  batches, counts.samples, counts.inserted, counts.duplicates, counts.replaced, counts.quarantined])
    }
}
