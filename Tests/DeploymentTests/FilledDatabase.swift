import DemoData
import Foundation
import Hashing
import HealthPayload
import Postgres
import Synchronization
import TestSupport
import Warehouse

/// One database for the whole suite, filled once with `HealthHistory` through the real decode and
/// store pipeline, with the read-only login made by `deploy/postgres/reader-login.sh`, the
/// very script compose.yaml runs. Queries under test run as that login only.
final class FilledDatabase: @unchecked Sendable {
    static let readerLogin = "grafana_reader_\(getpid())"
    static let readerPassword = "reader-pw-\(getpid())"

    let database: TestDatabase
    let demo: HealthHistory
    /// Persons stored besides `demo.person`.
    let otherPerson = "alex"
    let stalePerson = "sam"

    private static let shared: Result<FilledDatabase, any Error> = Result { try FilledDatabase() }

    /// The filled database; built on first use.
    static func get() throws -> FilledDatabase { try shared.get() }

    /// A database of its own filled the same way (the page's browser test mints tokens in it,
    /// which the shared one must not have); `get()` gives the shared one.
    init(label: String = "deployment") throws {
        demo = HealthHistory()
        database = try TestPostgres.withDatabase(label: label, keep: true) { $0 }
        try fill()
        try Self.runReaderLoginScript(on: database, login: Self.readerLogin, password: Self.readerPassword)
    }

    private func fill() throws {
        let pool = PostgresPool(connectionString: database.connectionString, maxConnections: 2)
        defer { pool.close() }
        try database.query("SELECT health.set_time_zone($1, 'Europe/Berlin')", [demo.person])
        let store = BatchStore(pool: pool)
        for body in demo.bodies {
            guard case .batches(let batches) = try PayloadDecoder.decode(body.bytes, format: body.isCSV ? .csv : .json) else {
                throw DeploymentTestError("\(body.label) decoded as a probe")
            }
            try store.store(batches, person: demo.person, origin: .http, bodySHA256: SHA256.hash(body.bytes))
        }
        // The Stridee bodies through their decoders and store, as relay pushes (which connect).
        let stridee = StrideeStore(pool: pool)
        for body in demo.strideeBodies {
            switch body.endpoint {
            case .workouts:
                _ = try stridee.storeWorkout(try StrideeDecoder.decodeWorkout(body.bytes), person: demo.person, connect: true,
                                             bodySHA256: SHA256.hash(body.bytes))
            case .wellness:
                _ = try stridee.storeWellness(try StrideeDecoder.decodeWellness(body.bytes), person: demo.person, connect: true)
            }
        }
        // A second person with ten days of phone steps and no time zone: every query must keep
        // the two apart.
        var alex = SeededRandom(seed: 99)
        var samples: [String] = []
        for back in 1...10 {
            let day = Date().addingTimeInterval(Double(-back) * 86_400)
            let text = Self.utcStamp(day)
            samples.append(Bodies.quantity(uuid: alex.uuid(), source: "com.apple.health.ALEX-PHONE", start: text,
                                           value: "\(alex.int(4000...7999))"))
        }
        let alexBody = Bodies.json(samples: samples, exportId: alex.uuid())
        guard case .batches(let alexBatches) = try PayloadDecoder.decode(alexBody, format: .json) else { throw DeploymentTestError("probe") }
        try store.store(alexBatches, person: otherPerson, origin: .http, bodySHA256: SHA256.hash(alexBody))
        // A third person whose last batch arrived two days ago: stale.
        try database.query("""
            SELECT * FROM health_store.store_batch($1, 'http', false, 'json', NULL, $2::jsonb, $3::jsonb, '[]'::jsonb,
                                                   sha256('sam'::bytea), now() - interval '2 days', false)
            """, [stalePerson,
                  Envelope(exportId: "0B5E9A0C-1111-4222-8333-444455556666", generatedAt: "2026-01-01T00:00:00.000Z", batchSequence: 1,
                           isFinalBatch: true, basis: "anchor", windowStart: "2026-01-01T00:00:00.000Z", windowEnd: "2026-01-01T00:00:00.000Z",
                           occasionStart: "2026-01-01T00:00:00.000Z", occasionEnd: "2026-01-01T00:00:00.000Z").jsonText,
                  "[" + Bodies.quantity(uuid: "0B5E9A0C-1111-4222-8333-000000000001", start: "2026-01-01T00:00:00.000Z", value: "12") + "]"])
    }

    static func utcStamp(_ date: Date) -> String {
        var t = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.000Z", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    // MARK: - The read-only login

    /// One run of the script at a time in this process: logins are the cluster's, and two tests
    /// altering the same one at once (the shared database's and a restore test's) failed with
    /// "tuple concurrently updated".
    private static let scriptRuns = Mutex(())

    /// Runs `deploy/postgres/reader-login.sh` with sh and psql against `database`, as compose's
    /// reader-login service does against the db service.
    @discardableResult
    static func runReaderLoginScript(on database: TestDatabase, login: String, password: String) throws -> String {
        try scriptRuns.withLock { _ in try runReaderLoginScriptAlone(on: database, login: login, password: password) }
    }

    private static func runReaderLoginScriptAlone(on database: TestDatabase, login: String, password: String) throws -> String {
        var environment = try Libpq.environment(of: database.connectionString)
        environment["READER_LOGIN"] = login
        environment["READER_PASSWORD"] = password
        environment["PATH"] = try Psql.binary().deletingLastPathComponent().path + ":/usr/bin:/bin"
        let result = try Run.program("/usr/bin/env", environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                                     + ["/bin/sh", Repository.url("deploy/postgres/reader-login.sh").path])
        guard result.status == 0 else { throw DeploymentTestError("reader-login.sh exited \(result.status): \(result.output)") }
        return result.output
    }

    /// The connection string of the read-only login.
    var readerConnectionString: String {
        Libpq.with(database.connectionString, user: Self.readerLogin, password: Self.readerPassword)
    }

    /// A connection as the read-only login.
    func connectAsReader() throws -> PostgresConnection {
        try PostgresConnection(connectionString: readerConnectionString)
    }
}

/// libpq connection strings: keyword/value (`host=… dbname=…`) or URI, read and changed by libpq
/// (`PostgresConnectionInfo`), never by hand.
enum Libpq {
    /// The same server and database with another user and password (the string unchanged
    /// when libpq cannot read it; connecting then says so).
    static func with(_ connectionString: String, user: String, password: String) -> String {
        guard let info = try? PostgresConnectionInfo(parsing: connectionString) else { return connectionString }
        return info.setting("user", to: user).setting("password", to: password).connectionString
    }

    /// libpq's PG* variables for a connection string, for programs that take no -d (the script).
    static func environment(of connectionString: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for parameter in try PostgresConnectionInfo(parsing: connectionString).parameters {
            values[parameter.keyword] = parameter.value
        }
        let names = ["host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD", "dbname": "PGDATABASE",
                     "sslmode": "PGSSLMODE"]
        var environment: [String: String] = [:]
        for (key, value) in values { if let name = names[key] { environment[name] = value } }
        return environment
    }
}

/// psql, from the same PostgreSQL installation the tests run.
enum Psql {
    static func binary() throws -> URL {
        let candidate = try ServerBinaries.locate().directory.appendingPathComponent("psql")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/psql") { return URL(fileURLWithPath: "/usr/bin/psql") }
        throw DeploymentTestError("psql not found beside \(candidate.path) nor at /usr/bin/psql; install the Debian package postgresql")
    }

    /// Runs a file as a user would (`psql -X -v person=… -f FILE`) and returns its rows as CSV.
    static func runFile(_ path: String, connectionString: String, variables: [String: String]) throws -> CSVTable {
        let arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv", "-d", connectionString]
            + variables.sorted { $0.key < $1.key }.flatMap { ["-v", "\($0.key)=\($0.value)"] }
            + ["-f", path]
        let result = try Run.program(try binary().path, arguments)
        guard result.status == 0 else { throw DeploymentTestError("psql -f \(path) exited \(result.status): \(result.output)") }
        return try CSVTable(result.output)
    }
}

/// Runs a program to completion (stdout and stderr together).
enum Run {
    static func program(_ path: String, _ arguments: [String]) throws -> ProcessRunner.Result {
        try ProcessRunner.run(path, arguments)
    }
}

/// An RFC 4180 document with a header row, as `psql --csv` prints it.
struct CSVTable {
    var columns: [String]
    var rows: [[String]]

    init(_ text: String) throws {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
                } else { field.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                record.append(field); field = ""
            } else if c == "\n" {
                record.append(field); records.append(record); record = []; field = ""
            } else if c != "\r" {
                field.append(c)
            }
        }
        if !field.isEmpty || !record.isEmpty { record.append(field); records.append(record) }
        guard let header = records.first else { throw DeploymentTestError("no CSV header in psql output: \(text)") }
        columns = header
        rows = Array(records.dropFirst())
        for row in rows where row.count != columns.count {
            throw DeploymentTestError("CSV row with \(row.count) fields under \(columns.count) columns: \(row)")
        }
    }

    /// The values of one column.
    func column(_ name: String) -> [String] {
        guard let i = columns.firstIndex(of: name) else { return [] }
        return rows.map { $0[i] }
    }

    /// Rows as dictionaries.
    var records: [[String: String]] {
        rows.map { Dictionary(uniqueKeysWithValues: zip(columns, $0)) }
    }
}
