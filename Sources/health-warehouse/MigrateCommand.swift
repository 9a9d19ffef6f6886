import Foundation
import Postgres
import Warehouse

/// `health-warehouse migrate [--status]`
struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "apply pending SQL migrations (--status lists them)"
    static let help = """
        usage: health-warehouse migrate [--status] [database options]

        Applies the pending migrations compiled into this binary, in order, each in one
        transaction, under an advisory lock (two processes at once apply each file once).
        Refuses, with exit 1, when an applied migration was edited or is missing.

          --status   list applied and pending migrations (version, name, applied time) and
                     change nothing

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
                    let when = entry.appliedAt.map { PostgresTimestamp.format($0) } ?? "pending"
                    printOutput("\(entry.migration.fileName)\t\(when)")
                }
                return 0
            }
            let applied = try migrator.migrate(connection)
            for migration in applied { printOutput("applied \(migration.fileName)") }
            printError(applied.isEmpty ? "migrations: nothing to apply (\(migrator.migrations.count) applied)"
                                       : "migrations: applied \(applied.count) of \(migrator.migrations.count)")
            return 0
        }
    }
}
