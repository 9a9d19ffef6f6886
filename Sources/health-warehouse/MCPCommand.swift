import Assistant
import Foundation
import Postgres
import Warehouse

/// `health-warehouse mcp [--person P] [--allow-sql]`
struct MCPCommand: Command {
    static let name = "mcp"
    static let summary = "the assistant's MCP server over stdio: a person's days as the views count them"
    static let help = """
        usage: health-warehouse mcp [--person NAME] [--allow-sql] [database options]

        A Model Context Protocol server on standard input and output (JSON-RPC 2.0, one message
        a line; protocol revisions 2025-11-25, 2025-06-18 and 2025-03-26) for an assistant on
        this machine, such as Claude Desktop: it starts the command itself (docs/assistant.md).
        Its tools read the health views for one person, as role health_reader in read-only
        transactions: summary, day, readings, sleep, workouts, trend, freshness, metrics; the
        resource health://views says what every column means. Nothing is ever written. Logs go
        to standard error; it stops when its input closes.

          --person NAME   whose data (default `default`)
          --allow-sql     also offer `sql`: one read-only SELECT over schema health as
                          health_reader (every person's rows), 5 s and 1,000 rows at most

        serve --mcp offers the same tools (never sql) over HTTP at /mcp, for the person of the
        token a client sends.

        \(DatabaseOptions.help)
        """

    var person: String
    var allowSQL: Bool
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["allow-sql"],
                                         options: DatabaseOptions.optionNames.union(["person"]))
        guard parsed.positionals.isEmpty else {
            throw UsageError(message: "mcp takes no arguments, got \"\(parsed.positionals[0])\"", command: Self.name)
        }
        person = parsed.value("person") ?? PersonName.defaultPerson
        do { try PersonName.validate(person) } catch { throw UsageError(message: "\(error)", command: Self.name) }
        allowSQL = parsed.has("allow-sql")
        database = DatabaseOptions(parsed)
    }

    func run() throws -> Int32 {
        try database.withDatabase(migrate: true) { url in
            let pool = ViewReading.pool(connectionString: url, maxConnections: 1)
            defer { pool.close() }
            let reader: AssistantReader
            do {
                reader = try AssistantReader(pool: pool)
            } catch {
                throw CommandFailure(message: "cannot read the views as health_reader: \(error)",
                                     hint: "the login needs to be a member of health_reader: GRANT health_reader TO <login>")
            }
            let server = MCPServer(toolbox: Toolbox(reader: reader, allowSQL: allowSQL), version: BuildInfo.version)
            Log.event("mcp.ready", ["person": person, "sql": allowSQL])
            StdioTransport.serve(server, person: person)
            return 0
        }
    }
}
