import Foundation
import Pipeline
import Postgres
import Warehouse

/// `health-warehouse person list|export|import|delete` (docs/people.md).
struct PersonCommand: Command {
    static let name = "person"
    static let summary = "list the people held, export, import or delete one person's data"
    static let help = """
        usage: health-warehouse person list [--json] [database options]
               health-warehouse person export NAME --to DIR [database options]
               health-warehouse person import NAME --from DIR [database options]
               health-warehouse person delete NAME [--yes] [database options]

        list    one row per person: person, tokens (live), samples, first_day, last_day,
                last_received_at; --json prints one JSON array of objects with those keys
        export  writes everything held for NAME into DIR (absent or empty): healthd v1 JSON
                bodies of the samples (healthd/, apple-export/), Stridee healthkit.v1 workout
                bodies with streams and route (workouts/), healthkit.wellness.v1 bodies
                (wellness/), activity-summaries.json, settings.json and manifest.json (counts
                and the SHA-256 of every file). `ingest DIR/healthd` alone reads the healthd bodies.
        import  reads such a folder back whole as NAME (the manifest checked first: nothing is
                stored if a file is missing or changed); into an empty person it gives every
                view of NAME as it was
        delete  removes every row of NAME from every table in one transaction and prints the
                rows removed per table. Asks first on a terminal; elsewhere --yes is needed.
                A batch of NAME being received meanwhile lands before, or is refused (401).

        An unknown NAME is a usage error (exit 64).

        \(DatabaseOptions.help)
        """

    enum Action: Equatable {
        case list(json: Bool)
        case export(person: String, to: String)
        case importing(person: String, from: String)
        case delete(person: String, confirmed: Bool)
    }

    var action: Action
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["json", "yes"],
                                         options: DatabaseOptions.optionNames.union(["to", "from"]))
        database = DatabaseOptions(parsed)
        let words = parsed.positionals
        func person() throws -> String {
            guard words.count == 2 else { throw UsageError(message: "person \(words[0]) needs exactly one person's name", command: Self.name) }
            do { try PersonName.validate(words[1]) } catch { throw UsageError(message: "\(error)", command: Self.name) }
            return words[1]
        }
        func folder(_ option: String) throws -> String {
            guard let path = parsed.value(option), !path.isEmpty else {
                throw UsageError(message: "person \(words[0]) needs --\(option) DIR", command: Self.name)
            }
            return path
        }
        switch words.first {
        case "list":
            guard words.count == 1 else { throw UsageError(message: "person list takes no arguments, got \"\(words[1])\"", command: Self.name) }
            action = .list(json: parsed.has("json"))
        case "export": action = .export(person: try person(), to: try folder("to"))
        case "import": action = .importing(person: try person(), from: try folder("from"))
        case "delete": action = .delete(person: try person(), confirmed: parsed.has("yes"))
        case let other?: throw UsageError(message: "unknown person action \"\(other)\"; use list, export, import or delete", command: Self.name)
        case nil: throw UsageError(message: "person needs an action: list, export, import or delete", command: Self.name)
        }
    }

    func run() throws -> Int32 {
        if case .delete(_, false) = action, isatty(STDIN_FILENO) != 1 {
            throw UsageError(message: "person delete asks before it deletes; without a terminal, pass --yes", command: Self.name)
        }
        return try database.withDatabase(migrate: true) { url in
            let pool = PostgresPool(connectionString: url, maxConnections: 2)
            defer { pool.close() }
            do {
                return try perform(pool)
            } catch let unknown as UnknownPersonError {
                throw UsageError(message: unknown.description, command: Self.name)
            } catch let refused as PersonExportError {
                throw CommandFailure(message: refused.description, hint: nil)
            }
        }
    }

    func perform(_ pool: PostgresPool) throws -> Int32 {
        let people = PersonStore(pool: pool)
        switch action {
        case .list(let json):
            printList(try people.list(), json: json)
        case .export(let person, let to):
            let files = try PersonExporter(pool: pool).export(person: person, to: URL(fileURLWithPath: to))
            let count = { (kinds: Set<PersonFileKind>) in files.filter { kinds.contains($0.kind) }.reduce(0) { $0 + $1.items } }
            printError("exported \(person) to \(to): \(count([.healthd, .appleExport, .hae])) samples, \(count([.workout])) workouts, "
                       + "\(count([.wellness])) wellness items, \(count([.activitySummaries])) activity summaries in \(files.count + 1) files")
        case .importing(let person, let from):
            let summary = try PersonImporter(pool: pool).run(person: person, from: URL(fileURLWithPath: from))
            for failure in summary.failures { printError("error: \(failure)") }
            printError("imported \(from) as \(person): \(summary.samples) samples, \(summary.workouts) workouts, "
                       + "\(summary.wellnessItems) wellness items, \(summary.activitySummaries) activity summaries")
            return summary.failures.isEmpty ? 0 : 1
        case .delete(let person, let confirmed):
            guard try people.exists(person) else { throw UnknownPersonError(person: person) }
            if !confirmed, !(try Self.confirm(person, counts: try people.counts(person))) {
                printError("nothing deleted")
                return 1
            }
            let deleted = try people.delete(person)
            printOutput("table\trows")
            for (table, rows) in deleted { printOutput("\(table)\t\(rows)") }
            printError("deleted every row of \(person): \(deleted.reduce(0) { $0 + $1.rows }) rows in \(deleted.count) tables")
        }
        return 0
    }

    func printList(_ rows: [PersonListing], json: Bool) {
        if json {
            let objects = rows.map { row -> [String: Any] in
                ["person": row.person, "tokens": row.tokens, "samples": row.samples, "first_day": row.firstDay as Any,
                 "last_day": row.lastDay as Any, "last_received_at": row.lastReceivedAt as Any]
            }
            let data = (try? JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])) ?? Data("[]".utf8)
            printOutput(String(decoding: data, as: UTF8.self))
            return
        }
        printOutput("person\ttokens\tsamples\tfirst_day\tlast_day\tlast_received_at")
        for row in rows {
            // Names follow PersonName's rule (no control characters); the rest are numbers and dates.
            printOutput("\(row.person)\t\(row.tokens)\t\(row.samples)\t\(row.firstDay ?? "")\t\(row.lastDay ?? "")\t\(row.lastReceivedAt ?? "")")
        }
    }

    /// Shows what would go and asks for the person's name on the terminal.
    static func confirm(_ person: String, counts: [(table: String, rows: Int)]) throws -> Bool {
        let held = counts.filter { $0.rows > 0 }.map { "\($0.table) \($0.rows)" }.joined(separator: ", ")
        printError("person delete removes every row of \(person): \(held)", "type the name \(person) to delete, anything else to keep:")
        return readLine()?.trimmingCharacters(in: .whitespaces) == person
    }
}
