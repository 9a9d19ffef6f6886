import Postgres

/// One source of a person as `source list` shows it (`health.sources`).
public struct SourceListing: Sendable, Equatable {
    /// The identifier every view names the source by.
    public var source: String
    /// The name shown for it (the identifier itself when it has none).
    public var name: String
    /// `person` (set with `source rename`), `export` (learned from the Health app's export), or
    /// nil (no name: the identifier).
    public var namedBy: String?
    /// Samples counted, and the first and last local day with one.
    public var samples: Int
    public var firstDay: String
    public var lastDay: String
}

/// The person has no sample of the source named.
public struct UnknownSourceError: Error, CustomStringConvertible, Equatable {
    public var person: String
    public var source: String

    public init(person: String, source: String) {
        self.person = person
        self.source = source
    }

    public var description: String {
        "person \"\(person.prefix(80))\" has no source \"\(source.prefix(200))\": `health-warehouse source list` shows the sources held"
    }
}

/// The sources of a person and the names shown for them (docs/views.md, `health.sources`): read,
/// and a name set or cleared through `health.set_source_name`.
public struct SourceStore: Sendable {
    let pool: PostgresPool

    /// A store over `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Every source of `person`, in byte order; throws `UnknownPersonError` when nothing of them is held.
    public func list(person: String) throws -> [SourceListing] {
        guard try PersonStore(pool: pool).exists(person) else { throw UnknownPersonError(person: person) }
        return try pool.withConnection { connection in
            try connection.query("""
                SELECT source, name, named_by, samples, first_day::text, last_day::text
                FROM health.sources WHERE person = $1 ORDER BY source COLLATE "C"
                """, [person]).map { row in
                SourceListing(source: try row.decode(0), name: try row.decode(1), namedBy: row[2], samples: try row.decode(3),
                              firstDay: try row.decode(4), lastDay: try row.decode(5))
            }
        }
    }

    /// Shows `source` of `person` as `name` (nil or empty: clears the name set, back to the
    /// learned one or the identifier). Throws `UnknownPersonError` or `UnknownSourceError`.
    public func rename(person: String, source: String, to name: String?) throws {
        guard try PersonStore(pool: pool).exists(person) else { throw UnknownPersonError(person: person) }
        do {
            try pool.withTransaction { connection in
                try connection.query("SELECT health.set_source_name($1, $2, $3)", [person, source, name])
            }
        } catch let error as PostgresError where error.sqlState == "P0002" {
            throw UnknownSourceError(person: person, source: source)
        }
    }
}
