import HealthPayload
import Postgres
import Warehouse

/// The assistant's reader of the `health` views: a reader pool (`ViewReading`: role
/// `health_reader`, read-only sessions), each tool call one read-only snapshot for one
/// person, rows turned into JSON by PostgreSQL itself (`json_agg`, `row_to_json`: dates
/// `YYYY-MM-DD`, instants ISO 8601 in the person's time zone, numbers as numbers, `NULL` as
/// `null`), and the catalog of views read once.
public final class AssistantReader: Sendable {
    let pool: PostgresPool
    /// The views' columns and comments.
    public let catalog: ViewCatalog
    /// The catalog's metrics (`health.catalog.metric`) and their rules, in its order.
    let metrics: [(metric: String, rule: String)]

    /// Reads the catalog of views on `pool`, which must be a reader pool (`ViewReading.pool`).
    public init(pool: PostgresPool) throws {
        self.pool = pool
        (catalog, metrics) = try pool.withConnection { connection in
            let catalog = try ViewCatalog.load(connection)
            let metrics = try connection.readingViews {
                try connection.query("SELECT metric, rule FROM health.catalog").map { (try $0.decode(0, as: String.self), try $0.decode(1, as: String.self)) }
            }
            return (catalog, metrics)
        }
    }

    /// Runs `body` in one read-only snapshot as `health_reader`, with instants written in
    /// `person`'s time zone (UTC when none is set) and intervals as ISO 8601 durations.
    func read<T>(person: String, _ body: (PostgresConnection) throws -> T) throws -> T {
        try pool.withConnection { connection in
            try connection.readingViews {
                try connection.query("""
                    SELECT set_config('TimeZone', coalesce((SELECT s.time_zone FROM health.settings s WHERE s.person = $1), 'UTC'), true),
                           set_config('IntervalStyle', 'iso_8601', true)
                    """, [person])
                return try body(connection)
            }
        }
    }

    /// The JSON text of the one value `sql` selects for `person` (`$1`), after `parameters`; nil
    /// when it selects no row or `NULL`.
    func json(person: String, _ sql: String, _ parameters: [(any PostgresBindable)?]) throws -> String? {
        try read(person: person) { connection in
            let all: [(any PostgresBindable)?] = [person] + parameters
            let text: String? = try connection.query(sql, all).first?.decodeIfPresent(0)
            return text.map(Self.oneLine)
        }
    }

    /// JSON text from PostgreSQL on one line: `json_agg` puts a line break between elements,
    /// and a JSON string never holds a raw one, so dropping them all keeps the value (and
    /// every stdio message one line).
    static func oneLine(_ json: String) -> String {
        String(decoding: json.utf8.filter { $0 != 0x0A }, as: UTF8.self)
    }

    /// The rows of view `view` for `person` whose `day` lies in `range`, with `filter` (SQL on
    /// the view's alias `v`, parameters from `$4`) and in `order`: a JSON array's text.
    func rows(_ view: String, person: String, range: (from: String, to: String), filter: String = "",
              _ parameters: [(any PostgresBindable)?] = [], order: String = "v.day") throws -> String {
        try json(person: person, """
            SELECT coalesce(json_agg(v ORDER BY \(order)), '[]')::text FROM health.\(view) v
            WHERE v.person = $1 AND v.day BETWEEN $2::date AND $3::date \(filter)
            """, [range.from, range.to] + parameters) ?? "[]"
    }
}
