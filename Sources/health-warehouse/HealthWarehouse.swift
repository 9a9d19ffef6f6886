import Foundation
import HealthPayload
import Postgres
import Warehouse

/// `health-warehouse`: dispatches to one command and maps its outcome to an exit code
/// (0 success, 1 failure, 64 usage).
@main
enum HealthWarehouse {
    static let commands: [any Command.Type] = [
        ServeCommand.self, MigrateCommand.self, IngestCommand.self, TokenCommand.self,
        SetTimeZoneCommand.self, StatusCommand.self, GenerateCommand.self, ImportAppleHealthCommand.self, PersonCommand.self,
        SourceCommand.self,
        MCPCommand.self,
    ]

    static var help: String {
        let width = commands.map { $0.name.count }.max() ?? 0
        let list = commands.map { "  " + $0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }
        return """
            health-warehouse: stores Apple Health batches from the healthd app in PostgreSQL, with per-day views.

            usage: health-warehouse COMMAND [options]

            Commands:
            \(list.joined(separator: "\n"))

            Run `health-warehouse COMMAND --help` for a command's options.
            With neither --database-url nor DATABASE_URL, commands run an embedded PostgreSQL
            under --data-dir (default ./health-warehouse-data).
            Exit codes: 0 success, 1 failure (named on stderr), 64 usage.
            """
    }

    static func main() {
        Shutdown.shared.install()
        var arguments = Array(CommandLine.arguments.dropFirst())
        // --parse-only checks a command line without running it (used to test compose.yaml).
        let parseOnly = arguments.first == "--parse-only"
        if parseOnly { arguments.removeFirst() }
        let status = run(arguments, parseOnly: parseOnly)
        // A signal arrived: its thread is cleaning up (stopping the embedded cluster) and
        // exits with 128 + the signal; the work just failed because of that, so wait for it.
        while Shutdown.shared.isExiting { sleep(1) }
        exit(status)
    }

    static func run(_ arguments: [String], parseOnly: Bool) -> Int32 {
        guard let name = arguments.first else {
            printUsage(help)
            return 64
        }
        if name == "--help" || name == "-h" || name == "help" {
            printOutput(help)
            return 0
        }
        guard let type = commands.first(where: { $0.name == name }) else {
            return fail(UsageError(message: "unknown command \"\(name)\"", command: nil))
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            printOutput(type.help)
            return 0
        }
        do {
            let command = try type.init(arguments: rest)
            if parseOnly {
                printOutput("ok: \(name)")
                return 0
            }
            return try command.run()
        } catch {
            return fail(error)
        }
    }

    /// Prints `error: …` and one hint line on stderr; returns the exit code.
    static func fail(_ error: any Error) -> Int32 {
        switch error {
        case let usage as UsageError:
            printError("error: \(usage.message)", "hint: \(usage.hint)")
            return 64
        case let failure as CommandFailure:
            printError("error: \(failure.message)")
            if let hint = failure.hint { printError("hint: \(hint)") }
            return failure.status
        case let postgres as PostgresError:
            printError("error: \(postgres)", "hint: " + (postgres.isTransient
                ? "check that PostgreSQL is running and the connection settings (--database-url, DATABASE_URL, PG* variables) are right"
                : "see the PostgreSQL log for details"))
        case let migration as MigrationError:
            printError("error: \(migration)", "hint: `health-warehouse migrate --status` lists applied and pending migrations")
        case let cluster as ClusterError:
            printError("error: \(cluster)", "hint: pass --database-url to use an existing PostgreSQL instead")
        default:
            printError("error: \(error)", "hint: run with --help for usage")
        }
        return 1
    }
}
