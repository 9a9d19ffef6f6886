import HealthPayload
import Warehouse

/// How a backlog file holds its bodies, decided by its name.
public enum BacklogFormat: String, Sendable, CaseIterable {
    /// `.json`: the whole file is one JSON body.
    case json
    /// `.jsonl` / `.ndjson`: one JSON body a line.
    case jsonLines = "jsonl"
    /// `.csv`: one or many CSV bodies appended, each led by its header row.
    case csv

    /// The ledger's name for it (`health_store.ingested_files.format`).
    public var ledgerFormat: FileLedger.Format {
        switch self {
        case .json: return .json
        case .jsonLines: return .jsonl
        case .csv: return .csv
        }
    }

    /// The decoder's format for one body.
    public var payloadFormat: PayloadFormat {
        self == .csv ? .csv : .json
    }

    /// The format and compression a file name states (`x.csv.gz` → csv, compressed), or nil.
    public static func of(fileName name: String) -> (format: BacklogFormat, compressed: Bool)? {
        var lower = name.lowercased()
        var compressed = false
        if lower.hasSuffix(".gz") {
            compressed = true
            lower.removeLast(3)
        }
        if lower.hasSuffix(".json") { return (.json, compressed) }
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return (.jsonLines, compressed) }
        if lower.hasSuffix(".csv") { return (.csv, compressed) }
        return nil
    }

    /// `--format` values: `json`, `jsonl` (also `ndjson`), `csv`.
    public init?(option text: String) {
        switch text.lowercased() {
        case "json": self = .json
        case "jsonl", "ndjson": self = .jsonLines
        case "csv": self = .csv
        default: return nil
        }
    }
}
