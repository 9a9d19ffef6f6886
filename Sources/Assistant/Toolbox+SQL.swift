import HealthPayload
import Postgres

extension Toolbox {
    /// The most rows `sql` answers; a query with more is refused, not cut short.
    static let sqlRowLimit = 1_000
    /// How long one `sql` query may run.
    static let sqlTimeout = "5s"

    static func sql(_ reader: AssistantReader) -> Tool {
        let output: JSONValue = .object([
            ("type", .string("object")),
            ("properties", .object([
                ("person", Schema.typed("string", "The person this server reads for (the query itself may read every person's rows).")),
                ("rows", .object([("type", .string("array")), ("items", .object([("type", .string("object"))]))])),
            ])),
            ("required", .array([.string("person"), .string("rows")])),
        ])
        return Tool(name: "sql", title: "A query of your own",
                    description: """
                        One read-only SELECT over the views of schema health (unqualified names are theirs; read the \
                        resource health://views for what every column means), run as the reader role: every \
                        person's rows, nothing else (no other schema, no writes), at most \(sqlRowLimit) rows and \
                        \(sqlTimeout) — aggregate in the query rather than fetching samples. Prefer the other tools: \
                        they already apply the views' rules.
                        """,
                    arguments: [("query", Schema.string("One SELECT (or WITH … SELECT) statement."))],
                    outputSchema: output) { arguments, person in
            let query = try sqlQuery(try arguments.string("query"))
            return rows(person, try runSQL(query, reader: reader, person: person))
        }
    }

    /// The query as it is run: one statement beginning with SELECT, WITH, VALUES or TABLE
    /// (after comments and parentheses), a final `;` dropped.
    static func sqlQuery(_ text: String) throws(ArgumentError) -> String {
        var query = Substring(text)
        while let last = query.last, last.isWhitespace || last == ";" { query.removeLast() }
        var rest = query[...]
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "(" }
            if rest.hasPrefix("--") {
                rest = rest.drop { $0 != "\n" }
            } else if rest.hasPrefix("/*"), let close = rest.range(of: "*/") {
                rest = rest[close.upperBound...]
            } else {
                break
            }
        }
        let word = rest.prefix { $0.isLetter }.lowercased()
        guard !word.isEmpty || !rest.isEmpty else { throw ArgumentError("query", "is empty") }
        guard ["select", "with", "values", "table"].contains(word) else {
            throw ArgumentError("query", "only one read-only SELECT is allowed, not \(word.isEmpty ? "that" : word.uppercased())")
        }
        return String(query)
    }

    /// Runs `query` through `health.query_as_reader` (as `health_sql_reader`, with
    /// `health_reader`'s rights, which the query cannot switch away from) with the time and row limits: a JSON array's text.
    static func runSQL(_ query: String, reader: AssistantReader, person: String) throws -> String {
        do {
            return try reader.read(person: person) { connection in
                let guarded: Bool? = try connection.query("""
                    SELECT p.prosecdef AND p.proowner = (SELECT r.oid FROM pg_roles r WHERE r.rolname = 'health_sql_reader')
                    FROM pg_proc p WHERE p.oid = to_regprocedure('health.query_as_reader(text, integer)')
                    """).first?.decodeIfPresent(0)
                guard guarded == true else {
                    throw ArgumentError("query", "cannot run: health.query_as_reader is missing or no longer runs as health_sql_reader "
                                        + "(make it again: psql -f migrations/repeatable/75_assistant.sql)")
                }
                try connection.execute(script: "SET LOCAL statement_timeout = '\(sqlTimeout)'")
                let rows = try connection.query("SELECT r::text FROM health.query_as_reader($1, $2) AS r", [query, sqlRowLimit])
                guard rows.count <= sqlRowLimit else {
                    throw ArgumentError("query", "gives more than \(sqlRowLimit) rows; aggregate or add a LIMIT")
                }
                return "[" + (try rows.map { AssistantReader.oneLine(try $0.decode(0, as: String.self)) }).joined(separator: ",") + "]"
            }
        } catch let error as PostgresError where error.kind == .server {
            if error.sqlState == "57014" { throw ArgumentError("query", "ran past \(sqlTimeout) and was cancelled") }
            throw ArgumentError("query", error.message + (error.sqlState == "42601" ? " (one SELECT statement only)" : ""))
        }
    }
}
