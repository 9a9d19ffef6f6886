import Backlog
import Warehouse

/// How `ingest` runs.
public struct IngestOptions: Sendable {
    /// Whose data the files are (validated with `PersonName`).
    public var person: String
    /// The format of standard input, and of files named on the command line whose names do
    /// not say (`.json`, `.jsonl`, `.ndjson`, `.csv`, each optionally `.gz`).
    public var format: BacklogFormat?
    /// Read every file again, whatever the ledger says (duplicates are free: upsert on uuid).
    public var force: Bool

    /// Options for a run; the person is not checked here (the command does).
    public init(person: String = PersonName.defaultPerson, format: BacklogFormat? = nil, force: Bool = false) {
        self.person = person
        self.format = format
        self.force = force
    }
}
