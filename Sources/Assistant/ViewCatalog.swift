import HealthPayload
import Postgres
import Warehouse

/// The views of schema `health` as the database describes them: their columns, types and
/// `COMMENT`s, read once as `health_reader`. The tools' output schemas and the resource
/// `health://views` are made from it, so neither can drift from the views themselves.
public struct ViewCatalog: Sendable {
    /// One column of a view.
    public struct Column: Sendable {
        public var name: String
        /// PostgreSQL's name of its type (`format_type`): `date`, `double precision`, `uuid[]`…
        public var type: String
        public var comment: String
    }

    /// One view: its name without the schema, its comment and its columns in order.
    public struct View: Sendable {
        public var name: String
        public var comment: String
        public var columns: [Column]
    }

    /// Every view of schema `health`, by name.
    public var views: [String: View]

    /// Reads the views on a reader connection.
    public static func load(_ connection: PostgresConnection) throws -> ViewCatalog {
        try connection.readingViews {
            var views: [String: View] = [:]
            for row in try connection.query("""
                SELECT c.relname::text, coalesce(obj_description(c.oid, 'pg_class'), ''), a.attname::text,
                       format_type(a.atttypid, a.atttypmod), coalesce(col_description(c.oid, a.attnum), '')
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'health'
                JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                WHERE c.relkind = 'v'
                ORDER BY c.relname COLLATE "C", a.attnum
                """) {
                let name: String = try row.decode(0), comment: String = try row.decode(1)
                let column = Column(name: try row.decode(2), type: try row.decode(3), comment: try row.decode(4))
                views[name, default: View(name: name, comment: comment, columns: [])].columns.append(column)
            }
            return ViewCatalog(views: views)
        }
    }

    /// The columns of view `name`; empty for a view this database does not have.
    public func columns(_ name: String) -> [Column] {
        views[name]?.columns ?? []
    }

    /// The JSON Schema of one row of view `name` as the tools give it (`row_to_json`): every
    /// column present, `null` when the view has none, each described by its comment.
    public func rowSchema(_ name: String) -> JSONValue {
        let columns = columns(name)
        return .object([
            ("type", .string("object")),
            ("description", .string("A row of health.\(name): \(views[name]?.comment ?? "")")),
            ("properties", .object(columns.map { ($0.name, Self.schema(of: $0)) })),
            ("required", .array(columns.map { .string($0.name) })),
        ])
    }

    /// A column's value schema: its JSON type (or any, for json and jsonb), or `null`.
    static func schema(of column: Column) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let type = jsonType(column.type) {
            members.append(("type", .array([.string(type), .string("null")])))
        }
        switch column.type {
        case "date": members.append(("format", .string("date")))
        case "timestamp with time zone": members.append(("format", .string("date-time")))
        case "interval": members.append(("format", .string("duration")))
        default: break
        }
        if column.type.hasSuffix("[]") { members.append(("items", .object([("type", .string("string"))]))) }
        members.append(("description", .string(column.comment)))
        return .object(members)
    }

    /// The JSON type `row_to_json` gives a PostgreSQL type; nil for json and jsonb (any JSON).
    static func jsonType(_ type: String) -> String? {
        switch type {
        case "double precision", "real", "numeric": return "number"
        case "integer", "bigint", "smallint": return "integer"
        case "boolean": return "boolean"
        case "json", "jsonb": return nil
        default: return type.hasSuffix("[]") ? "array" : "string"
        }
    }

    /// The resource `health://views`: every view with its comment and its columns' types and
    /// comments, as Markdown.
    public var markdown: String {
        var out = """
            # The views of schema health

            What every number means. Days are the person's local days (the person's time zone, or
            the offset written in each sample when none is set); a view has no row for a day
            without data (no data is not zero); `is_partial` marks a day not over yet.

            """
        for name in views.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let view = views[name]!
            out += "\n## health.\(name)\n\n\(view.comment)\n\n"
            for column in view.columns {
                out += "- `\(column.name)` (\(column.type)): \(column.comment)\n"
            }
        }
        return out
    }
}
