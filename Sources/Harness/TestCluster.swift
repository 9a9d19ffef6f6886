import Foundation
import Postgres
import Synchronization
import Warehouse

/// How much a `TestCluster` trades durability for speed.
public enum ClusterDurability: String, Sendable, CaseIterable {
    /// `fsync`, `synchronous_commit` and `full_page_writes` off: what tests run with.
    case fast
    /// `fsync` and `full_page_writes` off, `synchronous_commit` on: a commit survives the
    /// postmaster being killed (fault tests), not the machine losing power.
    case processCrashSafe
    /// PostgreSQL's own defaults (`fsync`, `synchronous_commit`, `full_page_writes` on, every
    /// other setting as `initdb` wrote it), as the embedded cluster of `serve` runs: what a
    /// user runs, and what benchmarks measure by default.
    case `default`

    /// The server settings this mode adds to the ones every cluster gets.
    var settings: [String: String] {
        switch self {
        // fsync off loses nothing when only processes die (the OS keeps the page cache).
        case .fast: return ["fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "max_connections": "300"]
        case .processCrashSafe: return ["fsync": "off", "synchronous_commit": "on", "full_page_writes": "off", "max_connections": "300"]
        case .default: return [:]
        }
    }
}

/// A throwaway PostgreSQL cluster in a temporary folder, for tests and benchmarks.
///
/// Socket only; fsync off unless made with `durability: .default`. Made like a user's cluster
/// may be rather than like the embedded one: an ICU collation (`en-US`) and a server time zone
/// far from UTC, each changed by an environment variable (`localeVariable`,
/// `timeZoneVariable`). A watchdog process stops and removes it if the test process dies
/// without cleaning up; a normal exit stops and removes it too.
public final class TestCluster: @unchecked Sendable {
    public let cluster: LocalCluster
    public let root: URL
    public let port = 5432
    private let templateName = "health_template"
    private let lock = NSLock()
    private var counter = 0
    private var running = false

    /// The server's durability settings.
    public let durability: ClusterDurability

    /// Keeps `synchronous_commit` on, so a commit survives the postmaster being killed (for
    /// fault tests); otherwise commits are asynchronous, which is faster for everything else.
    public var durable: Bool { durability != .fast }

    /// Creates, starts and migrates a new cluster with fsync off; `durable` keeps
    /// `synchronous_commit` on (`.processCrashSafe`), otherwise `.fast`.
    public convenience init(durable: Bool = false) throws {
        try self.init(durability: durable ? .processCrashSafe : .fast)
    }

    /// Creates, starts and migrates a new cluster with the given durability settings.
    public init(durability: ClusterDurability) throws {
        self.durability = durability
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        var template = Array(base.appendingPathComponent("hw-test-XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError.notStarted(logFile: "mkdtemp failed") }
        root = URL(fileURLWithPath: String(cString: made))
        cluster = LocalCluster(dataDirectory: root.appendingPathComponent("data"),
                               socketDirectory: root.appendingPathComponent("socket"),
                               logFile: root.appendingPathComponent("server.log"),
                               binaries: try ServerBinaries.locate())
        if geteuid() == 0, let pw = getpwnam(LocalCluster.superuser) {
            chown(root.path, pw.pointee.pw_uid, pw.pointee.pw_gid)
        }
        try cluster.initialize(locale: Self.locale)
        startWatchdog()
        try start()
        try migrateTemplate()
    }

    /// Starts the server (again, after `stop` or `kill`).
    public func start() throws {
        let common = ["log_min_messages": "warning", "timezone": Self.serverTimeZone]
        try cluster.start(port: port, listenAddresses: "", settings: durability.settings.merging(common) { mode, _ in mode })
        lock.withLock { running = true }
    }

    /// Names the default collation of test clusters: `C` for the C locale, anything else an
    /// ICU locale (`tr-TR`); unset, `en-US` by ICU, as a user's cluster may well be.
    public static let localeVariable = "HEALTH_WAREHOUSE_TEST_LOCALE"
    /// Names the server's `timezone` of test clusters; unset, `Pacific/Kiritimati` (UTC+14):
    /// far from UTC, so a date taken in the server's zone instead of the rule's shows.
    public static let timeZoneVariable = "HEALTH_WAREHOUSE_TEST_TIME_ZONE"

    /// The locale test clusters are made with (`localeVariable`).
    public static var locale: LocalCluster.Locale {
        switch ProcessInfo.processInfo.environment[localeVariable] {
        case nil, "": return .icu("en-US")
        case "C", "POSIX": return .c
        case let name?: return .icu(name)
        }
    }

    /// The server time zone of test clusters (`timeZoneVariable`).
    public static var serverTimeZone: String {
        let named = ProcessInfo.processInfo.environment[timeZoneVariable] ?? ""
        return named.isEmpty ? "Pacific/Kiritimati" : named
    }

    /// Stops the server (fast shutdown).
    public func stop() throws {
        try cluster.stop()
        lock.withLock { running = false }
    }

    /// Kills the postmaster with SIGKILL, as a crash would; `start` recovers.
    public func kill() throws {
        guard let server = cluster.runningServer() else { return }
        Foundation.kill(server.pid, SIGKILL)
        // Children notice the postmaster is gone and exit; wait for the pid file's server to go.
        for _ in 0..<200 where Foundation.kill(server.pid, 0) == 0 { usleep(20_000) }
        // Orphaned backends hold the shared memory; give them a moment to exit.
        usleep(300_000)
        lock.withLock { running = false }
    }

    /// The libpq connection string of a database of this cluster.
    public func connectionString(database: String) -> String {
        cluster.connectionString(database: database, port: port)
    }

    /// A new database made from the migrated template.
    /// `migrated: false` gives an empty database instead.
    public func freshDatabase(label: String = "test", migrated: Bool = true) throws -> TestDatabase {
        let name: String = lock.withLock {
            counter += 1
            return "t\(counter)_" + label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30)
        }
        let admin = try PostgresConnection(connectionString: connectionString(database: "postgres"))
        defer { admin.close() }
        // CREATE DATABASE cannot take parameters; the name is made above from letters and digits only.
        try admin.query("CREATE DATABASE \(name) TEMPLATE \(migrated ? templateName : "template0")")
        return TestDatabase(name: name, connectionString: connectionString(database: name), cluster: self)
    }

    /// Stops the server and removes every file.
    public func destroy() {
        if lock.withLock({ running }) { try? cluster.stop(mode: "immediate") }
        try? FileManager.default.removeItem(at: root)
    }

    private func migrateTemplate() throws {
        let admin = try PostgresConnection(connectionString: connectionString(database: "postgres"))
        try admin.query("CREATE DATABASE \(templateName)")
        admin.close()
        let connection = try PostgresConnection(connectionString: connectionString(database: templateName))
        defer { connection.close() }
        try Migrator().migrate(connection)
    }

    /// A shell that outlives us: when this process is gone, it stops the server and removes
    /// the folder, so a crashed test run leaves nothing behind.
    private func startWatchdog() {
        let pgctl = cluster.binaries.directory.appendingPathComponent("pg_ctl").path
        let asServerUser = geteuid() == 0 ? "/usr/sbin/runuser -u \(LocalCluster.superuser) -- " : ""
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(asServerUser)\(pgctl) -D '\(cluster.dataDirectory.path)' -m immediate stop >/dev/null 2>&1
            rm -rf '\(root.path)'
            """
        try? ProcessRunner.startDetached("/bin/sh", ["-c", script])
    }
}

/// One database for one test.
public struct TestDatabase: Sendable {
    /// The database's name.
    public let name: String
    /// Its libpq connection string.
    public let connectionString: String
    /// The throwaway cluster it lives in; nil on a server given by URL.
    public let cluster: TestCluster?

    /// A database of a cluster, or of a server given by URL.
    public init(name: String, connectionString: String, cluster: TestCluster?) {
        self.name = name
        self.connectionString = connectionString
        self.cluster = cluster
    }

    /// The same database as another login (libpq reads and rewrites the string); unchanged
    /// when libpq cannot read it, and connecting then says so.
    public func connectionString(user: String, password: String) -> String {
        guard let info = try? PostgresConnectionInfo(parsing: connectionString) else { return connectionString }
        return info.setting("user", to: user).setting("password", to: password).connectionString
    }

    /// Opens a new connection to this database.
    public func connect() throws -> PostgresConnection {
        try PostgresConnection(connectionString: connectionString)
    }

    /// Runs one statement on a short-lived connection and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> PostgresRows {
        let connection = try connect()
        defer { connection.close() }
        return try connection.query(sql, parameters)
    }

    /// The first column of the first row, decoded.
    public func scalar<T: PostgresDecodable>(_ sql: String, _ parameters: [(any PostgresBindable)?] = [], as type: T.Type = T.self) throws -> T? {
        let rows = try query(sql, parameters)
        guard let first = rows.first else { return nil }
        return try first.decodeIfPresent(0, as: type)
    }
}
