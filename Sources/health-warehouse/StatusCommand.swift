import Foundation
import Postgres
import Warehouse

/// `health-warehouse status`
struct StatusCommand: Command {
    static let name = "status"
    static let summary = "freshness, counts, migrations and settings at a glance"
    static let help = """
        usage: health-warehouse status [--json] [database options]

        Shows, for each person: samples held, deliveries, when the last batch arrived and the
        newest sample's end (never "live": the app delivers when iOS lets it), whether data is
        stale and the usual causes, time zone, quarantined samples, unknown types and
        incomplete export runs; and the migrations applied and pending.

          --json   print the same as one JSON object

        \(DatabaseOptions.help)
        """

    var json: Bool
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["json"], options: DatabaseOptions.optionNames)
        guard parsed.positionals.isEmpty else {
            throw UsageError(message: "status takes no arguments, got \"\(parsed.positionals[0])\"", command: Self.name)
        }
        json = parsed.has("json")
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        try database.withConnection(migrate: false) { connection in
            let migrations = try Migrator().status(connection)
            let pending = migrations.filter { $0.appliedAt == nil }
            guard pending.isEmpty else {
                if json {
                    printOutput("{\"migrations\":{\"applied\":\(migrations.count - pending.count),\"pending\":\(pending.count)},\"persons\":[]}")
                } else {
                    printOutput("migrations: \(migrations.count - pending.count) applied, \(pending.count) pending (run `health-warehouse migrate`)")
                }
                return 0
            }
            // One JSON document from the views, so text and --json say the same: each person's
            // object read by a query of that person alone (on Citus, one shard each).
            var persons: [String] = []
            for row in try connection.query("SELECT s.person FROM health.settings s ORDER BY s.person COLLATE \"C\"") {
                let person: String = try row.decode(0)
                persons.append(try connection.query(Self.personQuery, [person]).first?[0] ?? "{}")
            }
            let document = try connection.query("""
                SELECT json_build_object('migrations', json_build_object('applied', $1::int, 'pending', 0),
                                         'persons', $2::json)::text
                """, [migrations.count, "[" + persons.joined(separator: ",") + "]"])
            let text = document.first?[0] ?? "{}"
            if json {
                printOutput(text)
                return 0
            }
            printOutput(Self.render(text, migrations: migrations.count))
            return 0
        }
    }

    /// One person's object of the document, from the views, every subquery filtered by the person.
    static let personQuery = """
        SELECT json_build_object(
          'person', s.person,
          'time_zone', s.time_zone,
          'stale_after', s.stale_after::text,
          -- Held: what health_store.live_samples holds (Health's deletions left out), as GET /stats says.
          'samples', (SELECT count(*) FROM health_store.live_samples l WHERE l.person = $1),
          'deliveries', (SELECT count(*) FROM health.deliveries d WHERE d.person = $1),
          'last_received_at', f.last_received_at,
          'newest_sample_end_at', f.newest_sample_end_at,
          'hours_since_last_batch', round(f.hours_since_last_batch::numeric, 1),
          'is_stale', f.is_stale,
          'hint', f.hint,
          'quarantined', (SELECT count(*) FROM health.quarantine q WHERE q.person = $1),
          'unknown_types', (SELECT count(*) FROM health.unknown_types u WHERE u.person = $1),
          'incomplete_export_runs', (SELECT count(*) FROM health.export_runs r WHERE r.person = $1 AND NOT r.is_complete)
        )::text
        FROM health.settings s LEFT JOIN health.freshness f ON f.person = $1
        WHERE s.person = $1
        """

    /// The JSON document as lines for people.
    static func render(_ text: String, migrations: Int) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let persons = object["persons"] as? [[String: Any]] else { return text }
        var lines = ["migrations: \(migrations) applied, none pending"]
        if persons.isEmpty { lines.append("no data yet: point the app at `serve`, or load files with `ingest`") }
        for person in persons {
            func value(_ key: String) -> String {
                guard let v = person[key], !(v is NSNull) else { return "-" }
                return "\(v)"
            }
            lines.append("")
            lines.append("person \(value("person"))")
            lines.append("  samples held        \(value("samples")) from \(value("deliveries")) deliveries")
            lines.append("  last batch received \(value("last_received_at")) (\(value("hours_since_last_batch")) h ago)")
            lines.append("  newest sample ends  \(value("newest_sample_end_at"))")
            lines.append("  time zone           \(value("time_zone") == "-" ? "none set (days from each sample's written offset)" : value("time_zone"))")
            let stale = (person["is_stale"] as? Bool) == true
            lines.append("  stale               \(stale ? "yes, nothing for longer than \(value("stale_after"))" : "no (after \(value("stale_after")))")")
            if stale, let hint = person["hint"] as? String { lines.append("  hint                \(hint)") }
            lines.append("  quarantined samples \(value("quarantined")), unknown types \(value("unknown_types")), incomplete export runs \(value("incomplete_export_runs"))")
        }
        return lines.joined(separator: "\n")
    }
}
