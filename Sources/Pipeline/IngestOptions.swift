import Backlog
import HealthPayload
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
    /// What each point of a Health Auto Export file stands for, as the automation that wrote it
    /// groups (`--hae-aggregation`); nil: points in time.
    public var haeAggregation: HAEAggregation?

    /// Options for a run; the person is not checked here (the command does).
    public init(person: String = PersonName.defaultPerson, format: BacklogFormat? = nil, force: Bool = false,
                haeAggregation: HAEAggregation? = nil) {
        self.person = person
        self.format = format
        self.force = force
        self.haeAggregation = haeAggregation
    }
}
