import Foundation
import HealthPayload
import Postgres
import Warehouse

/// `health-warehouse source list|rename`: the sources a person's samples came from, and the
/// names shown for them (docs/views.md, `health.sources`).
struct SourceCommand: Command {
    static let name = "source"
    static let summary = "list a person's sources and their names, or rename one"
    static let help = """
        usage: health-warehouse source list [--person NAME] [--json] [database options]
               health-warehouse source rename SOURCE NEW-NAME [--person NAME] [database options]

        list    one row per source: source (the identifier every view keeps), name (the one
                shown), named_by (person: set by rename; export: learned from the Health app's
                export, whose twin of a pushed sample names its device; empty: none), samples,
                first_day, last_day; --json prints one JSON array of objects with those keys
        rename  shows SOURCE as NEW-NAME on the page and in health.sources (at most 1,024 bytes);
                a name learned from an export never overwrites it. An empty NEW-NAME ('')
                clears it, back to the learned name or the identifier.

        `--person` defaults to `default`. An unknown person or source is a usage error (exit 64).

        \(DatabaseOptions.help)
        """

    enum Action: Equatable {
        case list(json: Bool)
        case rename(source: String, name: String)
    }

    var action: Action
    var person: String
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["json"],
                                         options: DatabaseOptions.optionNames.union(["person"]))
        database = DatabaseOptions(parsed)
        person = parsed.value("person") ?? PersonName.defaultPerson
        do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
        let words = parsed.positionals
        switch words.first {
        case "list":
            guard words.count == 1 else { throw UsageError(message: "source list takes no arguments", command: Self.name) }
            action = .list(json: parsed.has("json"))
        case "rename":
            guard words.count == 3 else {
                throw UsageError(message: "source rename needs the source and its new name (quote names with spaces)", command: Self.name)
            }
            for (what, text) in [("the source", words[1]), ("the new name", words[2])] {
                if let excess = TextLimit.excess(text) { throw UsageError(message: "\(what) is \(excess)", command: Self.name) }
            }
            action = .rename(source: words[1], name: words[2])
        case let other?: throw UsageError(message: "unknown source action \"\(other)\"; use list or rename", command: Self.name)
        case nil: throw UsageError(message: "source needs an action: list or rename", command: Self.name)
        }
    }

    func run() throws -> Int32 {
        try database.withDatabase(migrate: true) { url in
            let pool = PostgresPool(connectionString: url, maxConnections: 1)
            defer { pool.close() }
            let sources = SourceStore(pool: pool)
            do {
                switch action {
                case .list(let json):
                    printList(try sources.list(person: person), json: json)
                case .rename(let source, let name):
                    try sources.rename(person: person, source: source, to: name)
                    printError(name.isEmpty ? "the name of \(source) for \(person) is cleared"
                                            : "\(source) of \(person) is shown as \(name)")
                }
            } catch let unknown as UnknownPersonError {
                throw UsageError(message: unknown.description, command: Self.name)
            } catch let unknown as UnknownSourceError {
                throw UsageError(message: unknown.description, command: Self.name)
            }
            return 0
        }
    }

    func printList(_ rows: [SourceListing], json: Bool) {
        if json {
            let objects = rows.map { row -> [String: Any] in
                ["source": row.source, "name": row.name, "named_by": row.namedBy as Any, "samples": row.samples,
                 "first_day": row.firstDay, "last_day": row.lastDay]
            }
            let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])) ?? Data("[]".utf8)
            printOutput(String(decoding: data, as: UTF8.self))
            return
        }
        printOutput("source\tname\tnamed_by\tsamples\tfirst_day\tlast_day")
        for row in rows {
            // Sources and names are what clients sent: a tab or line break in one is escaped, so
            // each source stays one line of six columns.
            let (source, name) = (Log.escapingControls(row.source), Log.escapingControls(row.name))
            printOutput("\(source)\t\(name)\t\(row.namedBy ?? "")\t\(row.samples)\t\(row.firstDay)\t\(row.lastDay)")
        }
    }
}
