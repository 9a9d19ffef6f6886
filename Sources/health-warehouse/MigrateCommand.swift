import Foundation
import Postgres
import Warehouse

/// `health-warehouse migrate [--status]`
struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply pending SQL migrations (--status lists them)"
    static let help = """
        usage: health-warehouse migrate [--status] [database options]

        Applies what is pending of the SQL compiled into this binary, in one transaction:
        versioned migrations (migrations/NNNN_*.sql, applied once, never edited) in order,
        then every repeatable definition file (migrations/repeatable/*.sql: the current
        functions and views) whose content changed since it was applied. Two processes at
        once apply each file once. Refuses, with exit 1 and nothing applied, when an applied
        versioned migration was edited or is missing.

          --status   list every file with when it was applied, `pending`, or `changed` (a
                     repeatable file re-applied by the next migrate), and change nothing

        \(DatabaseOptions.help)
        """

    var status: Bool
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["status"], options: DatabaseOptions.optionNames)
        guard parsed.positionals.isEmpty else {
            throw UsageError(message: "migrate takes no arguments, got \"\(parsed.positionals[0])\"", command: Self.name)
        }
        status = parsed.has("status")
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        try database.withConnection(migrate: false) { connection in
            let migrator = Migrator()
            if status {
                for entry in try migrator.status(connection) {
                    let when = entry.appliedAt.map { PostgresTimestamp.format($0) }
                        ?? (entry.changedSinceApplied ? "changed" : "pending")
                    printOutput("\(entry.migration.fileName)\t\(when)")
                }
                return 0
            }
            let applied = try migrator.migrate(connection)
            for migration in applied { printOutput("applied \(migration.fileName)") }
            printError(applied.isEmpty ? "migrations: nothing to apply (\(migrator.migrations.count) files applied)"
                                       : "migrations: applied \(applied.count) of \(migrator.migrations.count) files")
            return 0
        }
    }
}
