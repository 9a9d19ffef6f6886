import Postgres
import Warehouse

/// An export's row in the ingest ledger (`health_store.ingested_files`, format `apple-export`):
/// the same table `ingest` keeps its files in, read and written the way an import needs. A row
/// is written in the transaction of every batch, so it never claims what is not stored.
enum ExportLedger {
    /// Where an earlier import of the same path stands.
    struct Entry: Equatable {
        var size: Int64
        var modifiedNanoseconds: Int64
        /// Elements of the document stored, in document order.
        var items: Int
        /// True once an import reached the document's end.
        var complete: Bool
        /// SHA-256 of the whole file (the archive, or export.xml), as 64 lowercase hex digits.
        var sha256: String
    }

    /// The row of `path` for `person`, if any.
    static func load(person: String, path: String, on connection: PostgresConnection) throws -> Entry? {
        let rows = try connection.query("""
            SELECT size_bytes, mtime_ns, ingested_records, ingested_bytes = size_bytes, encode(sha256, 'hex')
            FROM health_store.ingested_files WHERE person = $1 AND path = $2 AND format = 'apple-export'
            """, [person, path])
        guard let row = rows.first else { return nil }
        return Entry(size: try row.decode(0), modifiedNanoseconds: try row.decode(1), items: try row.decode(2),
                     complete: try row.decode(3), sha256: try row.decode(4))
    }

    /// Records in the caller's transaction where the import of `path` stands, adding one batch
    /// and its counts to the totals (`newRun`: the first batch of a run counts a run).
    static func write(person: String, path: String, archive: Bool, entry: Entry, line: Int, newRun: Bool, counts: StoreCounts,
                      on connection: PostgresConnection) throws {
        try connection.query("""
            INSERT INTO health_store.ingested_files AS f (
              person, path, format, compressed, size_bytes, mtime_ns, ingested_bytes, ingested_lines, ingested_records,
              sha256, runs, batches, samples, inserted, duplicates, replaced, quarantined, matched)
            VALUES ($1, $2, 'apple-export', $3, $4, $5, $6, $7, $8, decode($9, 'hex'), $10, 1, $11, $12, $13, $14, 0, $15)
            ON CONFLICT (person, path) DO UPDATE SET
              format = excluded.format, compressed = excluded.compressed, size_bytes = excluded.size_bytes,
              mtime_ns = excluded.mtime_ns, ingested_bytes = excluded.ingested_bytes,
              ingested_lines = excluded.ingested_lines, ingested_records = excluded.ingested_records,
              sha256 = excluded.sha256, runs = f.runs + excluded.runs, batches = f.batches + 1,
              samples = f.samples + excluded.samples, inserted = f.inserted + excluded.inserted,
              duplicates = f.duplicates + excluded.duplicates, replaced = f.replaced + excluded.replaced,
              matched = f.matched + excluded.matched, last_ingested_at = clock_timestamp()
            """, [person, path, archive, entry.size, entry.modifiedNanoseconds, entry.complete ? entry.size : 0, line, entry.items,
                  entry.sha256, newRun ? 1 : 0, counts.samples, counts.inserted, counts.duplicates,
                  counts.replaced, counts.matched])
    }

    /// Records a new modification time for an export found unchanged by its hash.
    static func touch(person: String, path: String, modifiedNanoseconds: Int64, on connection: PostgresConnection) throws {
        try connection.query("UPDATE health_store.ingested_files SET mtime_ns = $3 WHERE person = $1 AND path = $2",
                             [person, path, modifiedNanoseconds])
    }
}
