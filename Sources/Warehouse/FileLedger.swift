import Foundation
import Hashing
import Postgres

/// The ledger of files read into the warehouse (`health_store.ingested_files`): one row per
/// person and file — a backlog file `ingest` read, or an export `import-apple-health` read —
/// saying how far it is stored, so that a re-run skips what is unchanged and goes on where an
/// earlier run ended. The one reader and writer of that table. The pipeline writes a row in
/// the transaction (and savepoint) of the batch it vouches for, so a row never claims what is
/// not stored.
public enum FileLedger {
    /// The table's `format`: how the file holds its data.
    public enum Format: String, Sendable {
        /// One healthd body (`.json`).
        case json
        /// One healthd body a line (`.jsonl`, `.ndjson`).
        case jsonl
        /// healthd CSV bodies appended, each with its header row (`.csv`).
        case csv
        /// The Health app's export (an archive, its folder, or export.xml).
        case appleExport = "apple-export"
    }

    /// Where a file stands. Each field is one column, with one meaning whoever read the file.
    public struct Position: Sendable, Equatable {
        /// `format`, and `compressed` (a `.gz` file, or an export in its zip archive).
        public var format: Format
        public var compressed: Bool
        /// `size_bytes` and `mtime_ns`: the file's size and modification time (ns since the
        /// epoch) when it was read.
        public var size: Int64
        public var modifiedNanoseconds: Int64
        /// `ingested_bytes`: every byte before this offset is stored; `size` once the whole
        /// file is. A file resumed by records rather than bytes (an export) has 0 until its end
        /// is stored.
        public var storedBytes: Int64
        /// `ingested_lines`: the lines the stored part reaches (its line ends, for a file
        /// stored up to a line end; an export's last stored element's line).
        public var storedLines: Int64
        /// `ingested_records`: the records stored, in file order (CSV records; an export's
        /// elements — Record, Workout, ActivitySummary and skipped ones).
        public var storedRecords: Int64
        /// `sha256`: the SHA-256 a re-run checks the file against before going on — of bytes
        /// `[0, storedBytes)` for a file read in parts (JSON lines, CSV), of the whole file for
        /// one read whole (JSON, `.gz`, an export).
        public var sha256: [UInt8]

        /// A position with every column given.
        public init(format: Format, compressed: Bool, size: Int64, modifiedNanoseconds: Int64, storedBytes: Int64,
                    storedLines: Int64, storedRecords: Int64, sha256: [UInt8]) {
            self.format = format
            self.compressed = compressed
            self.size = size
            self.modifiedNanoseconds = modifiedNanoseconds
            self.storedBytes = storedBytes
            self.storedLines = storedLines
            self.storedRecords = storedRecords
            self.sha256 = sha256
        }

        /// True once the whole file is stored.
        public var isComplete: Bool { storedBytes == size }
    }

    /// A row to write: a file and where it now stands.
    public struct Update: Sendable {
        /// The file's absolute path with symlinks resolved (the same text as its deliveries' `file`).
        public var path: String
        public var position: Position
        /// False for a file found unchanged (the same bytes with a new modification time): the
        /// row takes the new time, counts no run and keeps `last_ingested_at`.
        public var countsAsRun: Bool

        /// A row for `path` at `position`.
        public init(path: String, position: Position, countsAsRun: Bool = true) {
            self.path = path
            self.position = position
            self.countsAsRun = countsAsRun
        }
    }

    /// What a run stored from a file since its row was last written: added to the row's totals.
    public struct Totals: Sendable, Equatable {
        /// `runs`: 1 the first time a run writes the row (unless the file was only found unchanged).
        public var runs = 0
        /// `batches`: deliveries (batches through `store_batch`).
        public var batches = 0
        /// `samples`, `inserted`, `duplicates`, `replaced`, `quarantined`, `matched`.
        public var counts = StoreCounts()

        /// Totals of the given values.
        public init(runs: Int = 0, batches: Int = 0, counts: StoreCounts = StoreCounts()) {
            self.runs = runs
            self.batches = batches
            self.counts = counts
        }
    }

    private static let columns = "format, compressed, size_bytes, mtime_ns, ingested_bytes, ingested_lines, ingested_records, sha256"
    private static let selected = "format, compressed, size_bytes, mtime_ns, ingested_bytes, ingested_lines, ingested_records, encode(sha256, 'hex')"

    /// Every row of `person`, by path.
    public static func rows(person: String, on connection: PostgresConnection) throws -> [String: Position] {
        var out: [String: Position] = [:]
        for row in try connection.query("SELECT path, \(selected) FROM health_store.ingested_files WHERE person = $1", [person]) {
            out[try row.decode(0)] = try position(row, from: 1)
        }
        return out
    }

    /// The row of `path` for `person`, if there is one.
    public static func row(person: String, path: String, on connection: PostgresConnection) throws -> Position? {
        let rows = try connection.query("SELECT \(selected) FROM health_store.ingested_files WHERE person = $1 AND path = $2",
                                        [person, path])
        return try rows.first.map { try position($0, from: 0) }
    }

    /// Whether a reconciliation marked samples of `person` deleted after `path` was last read:
    /// receiving a sample again brings it back (CONTRACT.md §6), so a file unchanged since is
    /// read again rather than skipped.
    public static func reconciledSince(person: String, path: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("""
            SELECT EXISTS (SELECT 1 FROM health_store.ingested_files f
                           JOIN health_store.reconciliations r ON r.person = f.person
                           WHERE f.person = $1 AND f.path = $2 AND r.deleted > 0 AND r.reconciled_at > f.last_ingested_at)
            """, [person, path]).first?.decode(0, as: Bool.self) ?? false
    }

    private static func position(_ row: PostgresRow, from i: Int) throws -> Position {
        guard let format = Format(rawValue: try row.decode(i)) else {
            throw PostgresError(kind: .decoding, message: "health_store.ingested_files holds a format this version does not know")
        }
        return Position(format: format, compressed: try row.decode(i + 1), size: try row.decode(i + 2),
                        modifiedNanoseconds: try row.decode(i + 3), storedBytes: try row.decode(i + 4),
                        storedLines: try row.decode(i + 5), storedRecords: try row.decode(i + 6),
                        sha256: Hex.bytes(try row.decode(i + 7)))
    }

    /// Writes `update` for `person` inside the caller's transaction, adding `totals` to the row's;
    /// a run is noted at this process's clock (an instant is a parameter: docs/scaling.md).
    public static func write(_ update: Update, person: String, adding totals: Totals, on connection: PostgresConnection) throws {
        let p = update.position
        let c = totals.counts
        try connection.query("""
            INSERT INTO health_store.ingested_files AS f (
              person, path, \(columns), runs, batches, samples, inserted, duplicates, replaced, quarantined, matched)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
            ON CONFLICT (person, path) DO UPDATE SET
              format = excluded.format, compressed = excluded.compressed, size_bytes = excluded.size_bytes,
              mtime_ns = excluded.mtime_ns, ingested_bytes = excluded.ingested_bytes,
              ingested_lines = excluded.ingested_lines, ingested_records = excluded.ingested_records,
              sha256 = excluded.sha256, runs = f.runs + excluded.runs, batches = f.batches + excluded.batches,
              samples = f.samples + excluded.samples, inserted = f.inserted + excluded.inserted,
              duplicates = f.duplicates + excluded.duplicates, replaced = f.replaced + excluded.replaced,
              quarantined = f.quarantined + excluded.quarantined, matched = f.matched + excluded.matched,
              last_ingested_at = CASE WHEN $19 THEN $20::timestamptz ELSE f.last_ingested_at END
            """, [person, update.path, p.format.rawValue, p.compressed, p.size, p.modifiedNanoseconds, p.storedBytes,
                  p.storedLines, p.storedRecords, PostgresBytea(p.sha256), totals.runs, totals.batches, c.samples,
                  c.inserted, c.duplicates, c.replaced, c.quarantined, c.matched, update.countsAsRun, Date()])
    }
}
