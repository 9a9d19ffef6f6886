import Postgres

/// The warehouse's catalog of types (`health_store.catalog`), as the mapping needs it: each
/// known type's group, kind, unit and rule. Read from the database, so the export lands in
/// the same units every healthd sample of the type has.
public struct ExportCatalog: Sendable {
    /// One known type.
    public struct Entry: Sendable, Equatable {
        public var group: String
        public var kind: String
        /// The unit healthd sends the type's values in; nil for sleep and workouts.
        public var unit: String?
        public var rule: String

        public init(group: String, kind: String, unit: String?, rule: String) {
            self.group = group
            self.kind = kind
            self.unit = unit
            self.rule = rule
        }
    }

    /// By type identifier.
    public var entries: [String: Entry]

    /// A catalog of the given entries.
    public init(entries: [String: Entry]) {
        self.entries = entries
    }

    /// The catalog held by the database.
    public static func load(on connection: PostgresConnection) throws -> ExportCatalog {
        var entries: [String: Entry] = [:]
        for row in try connection.query("SELECT type, grp, kind, unit, rule FROM health_store.catalog") {
            entries[try row.decode(0)] = Entry(group: try row.decode(1), kind: try row.decode(2), unit: try row.decodeIfPresent(3), rule: try row.decode(4))
        }
        return ExportCatalog(entries: entries)
    }

    subscript(_ type: String) -> Entry? { entries[type] }
}
