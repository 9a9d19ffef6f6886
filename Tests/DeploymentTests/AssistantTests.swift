import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The assistant's MCP server (`health-warehouse mcp` over stdio, `serve --mcp` over HTTP)
/// driven by the official Python SDK (mcp/client.py, `pip install mcp`), its answers compared
/// with the views read as SQL and with what the demo history says happened.
@Suite("The assistant's MCP server with the official Python SDK", .serialized)
struct AssistantTests {
    /// The demo history's person, another person, a stale one; tokens are minted per test.
    static let filled: Result<FilledDatabase, any Error> = Result { try FilledDatabase(label: "mcp") }

    var filled: FilledDatabase { get throws { try Self.filled.get() } }

    @Test("over stdio every tool gives the views' numbers for --person alone, each result passing its outputSchema in the SDK; the resource lists every view")
    func stdioTools() throws {
        let filled = try filled, db = filled.database, me = filled.demo.person
        let days = filled.demo.days
        let (from, to) = (days[0], days[days.count - 1])
        let workoutDay = filled.demo.overlappingRunDay
        let out = try MCPClient.run(stdio: ["--person", me, "--database-url", db.connectionString], steps: [
            ["list": "tools"], ["list": "resources"], ["read": "health://views"],
            ["call": "summary", "arguments": ["from": from, "to": to]],
            ["call": "day", "arguments": ["date": workoutDay]],
            ["call": "readings", "arguments": ["metric": "heart_rate_bpm", "from": from, "to": to]],
            ["call": "sleep", "arguments": ["from": from, "to": to]],
            ["call": "workouts", "arguments": ["from": from, "to": to]],
            ["call": "trend", "arguments": ["metric": "steps", "from": from, "to": to, "bucket": "week"]],
            ["call": "freshness", "arguments": [:]],
            ["call": "metrics", "arguments": [:]],
        ])
        #expect(MCPServerVersions.contains(out.protocolVersion))
        let tools = try out.tools(0)
        #expect(tools.map(\.name) == ["summary", "day", "readings", "sleep", "workouts", "trend", "freshness", "metrics"])
        for tool in tools { #expect(tool.hasInputSchema && tool.hasOutputSchema, "\(tool.name) lacks a schema") }
        let resources = try #require(out.step(1)["resources"] as? [[String: Any]])
        #expect(resources.map { $0["uri"] as? String } == ["health://views"])
        let viewsText = try #require(((out.step(2)["contents"] as? [[String: Any]])?.first)?["text"] as? String)
        for view in ["daily_summary", "daily_totals", "daily_sleep", "workouts", "freshness", "catalog"] {
            #expect(viewsText.contains("## health.\(view)"), "health://views lacks \(view)")
        }
        #expect(viewsText.contains("`asleep_min` (double precision): Minutes asleep"))

        let summary = try out.rows(3, person: me)
        try MCPCompare.rows(summary, db.query("""
            SELECT day::text, is_partial, steps, sleep_min, resting_heart_rate, workouts FROM health.daily_summary
            WHERE person = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day
            """, [me, from, to]), "summary")
        // Independently of the views: steps are the winning source's own total, never phone + watch.
        for row in summary where row["is_partial"] as? Bool == false {
            let day = try #require(row["day"] as? String)
            if let sources = filled.demo.steps[day], let steps = row["steps"] as? Double {
                #expect(abs(steps - (sources.values.max() ?? -1)) < 1e-6, "steps of \(day)")
            }
        }
        try checkDay(out.structured(4), db: db, person: me, day: workoutDay, overlapping: filled.demo.overlappingRun)
        try MCPCompare.rows(try out.rows(5, person: me), db.query("""
            SELECT day::text, min, mean, max, samples FROM health.daily_readings
            WHERE person = $1 AND metric = 'heart_rate_bpm' AND day BETWEEN $2::date AND $3::date ORDER BY day
            """, [me, from, to]), "readings")
        let sleep = try out.rows(6, person: me)
        try MCPCompare.rows(sleep, db.query("""
            SELECT day::text, source, asleep_min, deep_min, in_bed_min FROM health.daily_sleep
            WHERE person = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day
            """, [me, from, to]), "sleep")
        #expect(!sleep.isEmpty)
        let workouts = try out.rows(7, person: me)
        try MCPCompare.rows(workouts, db.query("""
            SELECT uuid::text, day::text, activity_name, duration_s, heart_rate_mean, route_distance_m FROM health.workouts
            WHERE person = $1 AND day BETWEEN $2::date AND $3::date ORDER BY start_at, uuid
            """, [me, from, to]), "workouts")
        #expect(workouts.contains { $0["heart_rate_mean"] is Double && $0["route_distance_m"] is Double },
                "a workout with its heart rate and route length")
        try checkTrend(try out.rows(8, person: me), summary: summary)
        let freshness = try out.structured(9)
        #expect(freshness["person"] as? String == me)
        #expect(freshness["last_export_id"] as? String == (try db.scalar("SELECT last_export_id FROM health.freshness WHERE person = $1", [me], as: String.self)))
        #expect(freshness["is_stale"] as? Bool == false)
        let metrics = try out.rows(10, person: me)
        #expect(metrics.count == 24 && metrics.first?["metric"] as? String == "steps" && metrics.first?["rule"] as? String == "total")
        for index in 3...10 { try out.expectTextIsStructured(index) }
    }

    /// `day`: each part is the view's rows of that day.
    func checkDay(_ day: [String: Any], db: TestDatabase, person: String, day date: String, overlapping: (watch: String, app: String)) throws {
        #expect(day["person"] as? String == person && day["day"] as? String == date)
        let summary = try #require(day["summary"] as? [String: Any])
        #expect(summary["day"] as? String == date)
        let totals = try #require(day["totals"] as? [[String: Any]])
        try MCPCompare.rows(totals, db.query("""
            SELECT metric, source, value FROM health.daily_totals WHERE person = $1 AND day = $2::date ORDER BY metric COLLATE "C"
            """, [person, date]), "day.totals")
        let uuids = try #require(day["workouts"] as? [[String: Any]]).compactMap { $0["uuid"] as? String }
        #expect(Set(uuids).isSuperset(of: [overlapping.watch.lowercased(), overlapping.app.lowercased()]), "both overlapping workouts, each once")
        for key in ["readings", "body", "coalesced", "deleted", "quarantined"] { #expect(day[key] is [Any], "day.\(key)") }
        #expect(day["sleep"] is [String: Any] || day["sleep"] is NSNull)
    }

    /// `trend`: each week's mean is the mean of that week's complete days in `summary`.
    func checkTrend(_ trend: [[String: Any]], summary: [[String: Any]]) throws {
        var weeks: [String: [Double]] = [:]
        for row in summary where row["is_partial"] as? Bool == false {
            guard let day = row["day"] as? String, let steps = row["steps"] as? Double, let date = MCPCompare.date(day) else { continue }
            var calendar = Calendar(identifier: .iso8601)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let monday = calendar.date(from: calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date))!
            weeks[MCPCompare.text(monday), default: []].append(steps)
        }
        #expect(!trend.isEmpty && trend.count == weeks.count)
        for row in trend {
            let start = try #require(row["start"] as? String)
            let values = try #require(weeks[start], "week \(start)")
            #expect(row["days"] as? Int == values.count)
            #expect(abs((row["mean"] as? Double ?? -1) - values.reduce(0, +) / Double(values.count)) < 1e-6, "mean of week \(start)")
        }
    }

    @Test("bad arguments are results with isError naming the argument; an unknown tool is a protocol error; the person is never an argument")
    func badArguments() throws {
        let filled = try filled
        let out = try MCPClient.run(stdio: ["--person", filled.demo.person, "--database-url", filled.database.connectionString], steps: [
            ["call": "summary", "arguments": ["from": "2026-13-01", "to": "2026-12-31"]],
            ["call": "summary", "arguments": ["from": "2026-03-01", "to": "2026-02-01"]],
            ["call": "summary", "arguments": ["from": "2010-01-01", "to": "2026-01-01"]],
            ["call": "readings", "arguments": ["metric": "steps", "from": "2026-01-01", "to": "2026-01-31"]],
            ["call": "trend", "arguments": ["metric": "steps", "from": "2026-01-01", "to": "2026-01-31", "bucket": "year"]],
            ["call": "summary", "arguments": ["from": "2026-01-01", "to": "2026-01-31", "person": filled.otherPerson]],
            ["call": "day", "arguments": [:]],
            ["call": "day", "arguments": ["date": 20260101]],
            ["call": "sql", "arguments": ["query": "SELECT 1"]],
        ])
        let expected = ["from: \"2026-13-01\" is not a date", "to: 2026-02-01 is before from", "to: the range from 2010-01-01 to 2026-01-01 is 5845 days",
                        "metric: \"steps\" is not one of heart_rate_bpm", "bucket: \"year\" is not one of week, month",
                        "person: is not an argument", "date: is required", "date: must be a string"]
        for (index, start) in expected.enumerated() {
            let step = try out.step(index)
            #expect(step["isError"] as? Bool == true, "step \(index)")
            #expect(MCPClient.text(step).hasPrefix(start), "step \(index): \(MCPClient.text(step))")
        }
        #expect((try out.step(8)["exception"] as? String)?.contains("Unknown tool: sql") == true, "sql is not offered without --allow-sql")
    }

    @Test("sql (--allow-sql) reads the views as health_reader and refuses writes, health_store, other schemas, switching role, long queries and huge results")
    func sqlRefusals() throws {
        let filled = try filled, db = filled.database
        let before = try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self)
        let started = Date()
        let out = try MCPClient.run(stdio: ["--person", filled.demo.person, "--allow-sql", "--database-url", db.connectionString], steps: [
            ["call": "sql", "arguments": ["query": "SELECT person, count(*) AS days FROM daily_summary GROUP BY person ORDER BY person COLLATE \"C\";"]],
            ["call": "sql", "arguments": ["query": "SELECT g FROM generate_series(1, 1000) g"]],
            ["call": "sql", "arguments": ["query": "DELETE FROM health.samples"]],
            ["call": "sql", "arguments": ["query": "WITH d AS (DELETE FROM health.samples RETURNING 1) SELECT count(*) FROM d"]],
            ["call": "sql", "arguments": ["query": "SELECT count(*) FROM health_store.samples"]],
            ["call": "sql", "arguments": ["query": "SELECT token_sha256 FROM health_store.tokens"]],
            ["call": "sql", "arguments": ["query": "SELECT relname FROM pg_catalog.pg_class"]],
            ["call": "sql", "arguments": ["query": "SELECT * FROM information_schema.tables"]],
            ["call": "sql", "arguments": ["query": "SELECT set_config('role', 'none', true), query_to_xml('SELECT * FROM health_store.tokens', true, false, '')"]],
            ["call": "sql", "arguments": ["query": "SELECT 1; DELETE FROM health.samples"]],
            ["call": "sql", "arguments": ["query": "SELECT pg_sleep(30)"]],
            ["call": "sql", "arguments": ["query": "SELECT g FROM generate_series(1, 5000) g"]],
        ])
        #expect(Date().timeIntervalSince(started) < 25, "the 30 s sleep was cut at 5 s")
        let persons = try out.rows(0, person: filled.demo.person)
        try MCPCompare.rows(persons, db.query("SELECT person, count(*) AS days FROM health.daily_summary GROUP BY person ORDER BY person COLLATE \"C\""), "sql")
        #expect(persons.count >= 2, "sql reads every person's rows: the owner's own database")
        #expect(try out.rows(1, person: filled.demo.person).count == 1000)
        // On Citus health_reader may use schema health_store, to read the tables the views read
        // (docs/scaling.md, "Reading"): the view and the table refuse it instead.
        let onCitus = TestPostgres.citusURL != nil
        let refusals = [(2, "only one read-only SELECT"), (3, "data-modifying"),
                        (4, onCitus ? "permission denied for view samples" : "permission denied for schema health_store"),
                        (5, onCitus ? "permission denied for table tokens" : "permission denied for schema health_store"),
                        (6, "pg_catalog.pg_class"), (7, "only the views of schema health"),
                        (8, "cannot set parameter \"role\""), (9, "syntax error"), (10, "ran past 5s"), (11, "more than 1000 rows")]
        for (index, words) in refusals {
            let step = try out.step(index)
            #expect(step["isError"] as? Bool == true, "step \(index)")
            #expect(MCPClient.text(step).hasPrefix("query: ") && MCPClient.text(step).contains(words), "step \(index): \(MCPClient.text(step))")
        }
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == before, "nothing written")
    }

    @Test("over HTTP (serve --mcp) the token decides the person for every tool, sql is never offered, and revoking the token ends the session")
    func httpSessions() throws {
        let filled = try filled, db = filled.database
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
        defer { pool.close() }
        let tokens = TokenStore(pool: pool)
        let me = try tokens.create(person: filled.demo.person, label: "assistant")
        let alex = try tokens.create(person: filled.otherPerson, label: "assistant")
        let (serve, port) = try CLIProcess.startServe(["--mcp", "--database-url", db.connectionString])
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        let url = "http://127.0.0.1:\(port)/mcp"
        let days = filled.demo.days
        let range: [String: Any] = ["from": days[0], "to": days[days.count - 1]]
        let calls: [[String: Any]] = [
            ["list": "tools"], ["call": "summary", "arguments": range], ["call": "sleep", "arguments": range],
            ["call": "workouts", "arguments": range], ["call": "readings", "arguments": range.merging(["metric": "heart_rate_bpm"]) { a, _ in a }],
            ["call": "trend", "arguments": range.merging(["metric": "steps", "bucket": "month"]) { a, _ in a }],
            ["call": "day", "arguments": ["date": days[days.count - 2]]], ["call": "freshness", "arguments": [:]],
            ["call": "sql", "arguments": ["query": "SELECT 1"]],
        ]
        for (token, person) in [(me.token, filled.demo.person), (alex.token, filled.otherPerson)] {
            let out = try MCPClient.run(http: url, token: token, steps: calls)
            #expect(try out.tools(0).map(\.name).contains("sql") == false)
            for index in 1...5 {
                let rows = try out.rows(index, person: person)
                #expect(rows.allSatisfy { $0["person"] as? String == person }, "step \(index) holds only \(person)'s rows")
            }
            try MCPCompare.rows(try out.rows(1, person: person), db.query("""
                SELECT day::text, steps FROM health.daily_summary WHERE person = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day
                """, [person, days[0], days[days.count - 1]]), "summary of \(person)")
            #expect(try out.structured(6)["person"] as? String == person && out.structured(7)["person"] as? String == person)
            #expect((try out.step(8)["exception"] as? String)?.contains("Unknown tool: sql") == true)
        }
        let revoked = try MCPClient.run(http: url, token: me.token, steps: [
            ["call": "freshness", "arguments": [:]],
            ["run": [CLIProcess.binaryPath, "token", "revoke", "\(me.id)", "--database-url", db.connectionString]],
            ["call": "freshness", "arguments": [:]],
        ])
        #expect(try revoked.structured(0)["person"] as? String == filled.demo.person)
        #expect(try revoked.step(1)["status"] as? Int == 0)
        #expect(try revoked.step(2)["exception"] != nil, "the revoked token's session answers nothing more")
        try rawHTTP(port: port, token: alex.token, other: try tokens.create(person: filled.demo.person, label: "raw").token)
    }

    /// The transport's rules, request by request, on a raw connection.
    func rawHTTP(port: Int, token: String, other: String) throws {
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#
        let ping = #"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
        #expect(try MCPClient.post(port: port, body: initialize, token: nil).status == 401)
        let get = try MCPClient.request(port: port, method: "GET", body: nil, headers: [("Authorization", "Bearer \(token)")])
        #expect(get.status == 405 && get.header("Allow") == "POST, DELETE")
        #expect(try MCPClient.post(port: port, body: ping, token: token).status == 400, "a request before initialize")
        #expect(try MCPClient.post(port: port, body: initialize, token: token, extra: [("Origin", "http://evil.example")]).status == 403)
        let opened = try MCPClient.post(port: port, body: initialize, token: token)
        #expect(opened.status == 200 && opened.bodyText.contains(#""protocolVersion":"2025-03-26""#))
        let session = try #require(opened.header("Mcp-Session-Id"))
        #expect(try MCPClient.post(port: port, body: ping, token: token, extra: [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "1999-01-01")])
                    .status == 400, "a revision no one agreed on")
        let pinged = try MCPClient.post(port: port, body: ping, token: token, extra: [("Mcp-Session-Id", session)])
        #expect(pinged.status == 200 && pinged.bodyText == #"{"jsonrpc":"2.0","id":2,"result":{}}"#)
        let note = #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        #expect(try MCPClient.post(port: port, body: note, token: token, extra: [("Mcp-Session-Id", session)]).status == 202)
        #expect(try MCPClient.post(port: port, body: ping, token: other, extra: [("Mcp-Session-Id", session)]).status == 404,
                "another person's token cannot use the session")
        let ended = try MCPClient.request(port: port, method: "DELETE", body: nil, headers: [("Authorization", "Bearer \(token)"), ("Mcp-Session-Id", session)])
        #expect(ended.status == 200)
        #expect(try MCPClient.post(port: port, body: ping, token: token, extra: [("Mcp-Session-Id", session)]).status == 404)
    }
}

/// The protocol revisions the server speaks.
let MCPServerVersions = ["2025-11-25", "2025-06-18", "2025-03-26"]
