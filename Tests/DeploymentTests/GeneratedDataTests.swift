import Foundation
import Postgres
import Testing
import TestSupport

/// The path a new user takes to try the dashboard: `generate` writes a month of demo bodies,
/// `ingest` loads them (as compose's backlog profile does), and then every ready query and
/// every dashboard query answers, as the read-only login, with its declared columns.
@Suite("generate + ingest, then every query")
struct GeneratedDataTests {
    final class Generated: @unchecked Sendable {
        let database: TestDatabase
        let reader: String
        /// The Stridee bodies `generate --stridee-out` wrote, by file name, as pushed.
        private(set) var strideeBodies: [String: [UInt8]] = [:]
        static let login = "gen_reader_\(getpid())"

        private static let shared: Result<Generated, any Error> = Result { try Generated() }
        static func get() throws -> Generated { try shared.get() }

        private init() throws {
            database = try TestPostgres.withDatabase(label: "generated", keep: true) { $0 }
            let folder = NSTemporaryDirectory() + "hw-generated-\(getpid())"
            let strideeFolder = folder + "-stridee"
            defer {
                try? FileManager.default.removeItem(atPath: folder)
                try? FileManager.default.removeItem(atPath: strideeFolder)
            }
            let (start, days) = Self.window()
            let generate = try CLIProcess.run(["generate", "--start", start, "--days", String(days), "--out", folder, "--seed", "7",
                                               "--stridee-out", strideeFolder])
            guard generate.status == 0 else { throw DeploymentTestError("generate: \(generate.stderr)") }
            let ingest = try CLIProcess.run(["ingest", "--person", "me", "--database-url", database.connectionString, folder])
            guard ingest.status == 0 else { throw DeploymentTestError("ingest: \(ingest.stderr)") }
            strideeBodies = try Self.push(strideeFolder, to: database)
            try FilledDatabase.runReaderLoginScript(on: database, login: Self.login, password: "pw")
            reader = Libpq.with(database.connectionString, user: Self.login, password: "pw")
        }

        /// About the last 30 days up to today (so the queries' "last weeks" see them), starting on
        /// a Sunday: the simulator draws by weekday, so whatever day the tests run, the same
        /// days of data come out (every wellness kind, runs with routes), never a luckless month.
        static func window() -> (start: String, days: Int) {
            let today = Int(floor(Date().timeIntervalSince1970 / 86_400))
            var first = today - 30
            // 1970-01-01 was a Thursday: (day + 3) % 7 is 6 on a Sunday. (Seed 7 from a Sunday
            // gives runs in the first weeks; from a Monday it happens to give none.)
            while (first + 3) % 7 != 6 { first -= 1 }
            var t = time_t(first * 86_400)
            var parts = tm()
            gmtime_r(&t, &parts)
            let start = String(format: "%04d-%02d-%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
            return (start, today - first)
        }

        /// Pushes every Stridee body of `folder` to a real `serve` on the relay paths of person
        /// `me` (the push connects them), as an app's backend would; returns them by name.
        static func push(_ folder: String, to database: TestDatabase) throws -> [String: [UInt8]] {
            let mint = try CLIProcess.run(["token", "create", "--person", "me", "--database-url", database.connectionString])
            guard mint.status == 0 else { throw DeploymentTestError("token create: \(mint.stderr)") }
            let token = mint.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            var bodies: [String: [UInt8]] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
                let endpoint = name.contains("-workout-") ? "workouts" : "wellness"
                let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/v1/accounts/me/apple/\(endpoint)",
                                                        headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                                                        body: bytes, timeout: 60)
                guard answer.status == 202 else { throw DeploymentTestError("\(name): \(answer.status) \(answer.bodyText)") }
                bodies[name] = bytes
            }
            return bodies
        }
    }

    /// Files whose answer depends on something going wrong, which demo data need not contain.
    static let mayBeEmpty: Set<String> = ["export_runs_incomplete.sql", "quarantine_reasons.sql", "unknown_types_seen.sql",
                                          "workouts_overlapping.sql", "deliveries_duplicates.sql"]

    @Test("every sql/ file runs over generated data as the read-only login", arguments: ReadyQueryTests.files)
    func readyQuery(file: String) throws {
        let generated = try Generated.get()
        let table = try Psql.runFile(Repository.url("sql/" + file).path, connectionString: generated.reader,
                                     variables: ["person": "me", "days": "40", "weeks": "8"])
        #expect(table.columns == ReadyQueryTests.expectedColumns[file])
        if !Self.mayBeEmpty.contains(file) {
            #expect(!table.rows.isEmpty, "\(file) answered no rows over a month of demo data")
        }
    }

    @Test("every dashboard query runs over generated data as the read-only login", arguments: GrafanaTests.queries)
    func dashboardQuery(query: GrafanaTests.Query) throws {
        let generated = try Generated.get()
        let connection = try PostgresConnection(connectionString: generated.reader)
        defer { connection.close() }
        let now = Date(), from = now.addingTimeInterval(-40 * 86_400)
        // The workout a user would choose to see both panels: the newest with a route and a heart
        // rate (the variable's default is the newest with either, an indoor one on some days).
        let withBoth = try connection.query("""
            SELECT uuid::text FROM health.workouts WHERE person = 'me' AND route_points > 0 AND heart_rate_max IS NOT NULL
            ORDER BY start_at DESC LIMIT 1
            """).first?[0]
        let workout = try withBoth ?? GrafanaTests.defaultWorkout(connection, person: "me", from: from, to: now)
        let rows = try connection.query(try GrafanaTests.expand(query.sql, person: "me", from: from, to: now, workout: workout))
        let optional = ["Incomplete export runs: details", "Quarantined samples by reason", "Unknown types: details"]
        if !optional.contains(query.panel) {
            #expect(!rows.isEmpty, "\(query.panel) answered no rows over a month of demo data")
        }
    }
}
