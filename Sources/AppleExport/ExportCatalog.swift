/// The warehouse's catalog of types (`health_store.catalog`), as the mapping needs it: each
/// known type's group, kind, unit and rule. Given by the caller from the database, so the
/// export lands in the same units every healthd sample of the type has.
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

    subscript(_ type: String) -> Entry? { entries[type] }
}
