import Postgres

/// How everything that shows a person's data reads the `health` views — the page under `/ui`
/// and the assistant's MCP server alike, so both say what the views say: connections whose
/// sessions are role `health_reader` and read-only, each answer read in one read-only
/// snapshot. Nothing read this way can write or reach `health_store`.
public enum ViewReading {
    /// What every reader connection is set to before its first query: role `health_reader`
    /// (`SET ROLE`, allowed for a superuser and for members of the role:
    /// deploy/postgres/owner-role.sh makes the warehouse's owner one), read-only
    /// transactions, and a bound on any one statement.
    public static let sessionSettings: [(name: String, value: String)] = [
        ("role", "health_reader"), ("default_transaction_read_only", "on"), ("statement_timeout", "15s"),
    ]

    /// A pool over `connectionString` whose sessions are set as `sessionSettings`. Use it for
    /// reading the views and nothing else.
    public static func pool(connectionString: String, maxConnections: Int = 3) -> PostgresPool {
        PostgresPool(connectionString: connectionString, maxConnections: maxConnections, waitLimit: 10,
                     sessionSettings: sessionSettings)
    }
}

extension PostgresConnection {
    /// Runs `body` inside one read-only, repeatable-read transaction as `health_reader`, whatever
    /// the session's own role (a reader pool sets it too; this holds even if something reset
    /// it), so every statement of `body` sees the same snapshot.
    /// A failure inside `body` rolls the transaction back, so the connection can serve again.
    public func readingViews<T>(_ body: () throws -> T) throws -> T {
        try execute(script: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL ROLE health_reader")
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
        try query("COMMIT")
        return value
    }
}
