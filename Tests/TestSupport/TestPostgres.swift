import Foundation
import Postgres
import Synchronization
import Warehouse

/// The PostgreSQL every test of this run shares: one throwaway cluster, started on first
/// use and removed at exit, or the server `HEALTH_WAREHOUSE_TEST_DATABASE_URL` names, or the
/// Citus coordinator `HEALTH_WAREHOUSE_TEST_CITUS_URL` names (docs/scaling.md).
public enum TestPostgres {
    /// Set by the environment to test against an existing server (needs CREATEDB).
    public static let externalURLVariable = "HEALTH_WAREHOUSE_TEST_DATABASE_URL"
    /// Set by the environment to run every test against a Citus coordinator (a superuser
    /// connection string to a database where its workers are registered).
    public static let citusURLVariable = "HEALTH_WAREHOUSE_TEST_CITUS_URL"

    /// Why the tests of serve's lock and statement timeouts do not run on Citus: a delegated
    /// store runs on the person's worker, where the writer pool's session settings do not reach
    /// (Citus does not carry a session's SET to its workers; docs/scaling.md).
    public static let workerTimeoutsReason = "a delegated store waits under the worker's timeouts; serve's session settings stay on the coordinator"

    /// How many sessions wait for a lock, for a test that holds a batch by taking the person lock
    /// in a session of its own: on Citus the delegated store waits on the person's worker (the
    /// lock is the person's row of `persons`, which the coordinator's session locked there), so
    /// the waits are counted on every node (docs/scaling.md).
    public static var lockWaitsSQL: String {
        citusURL == nil ? "SELECT count(*) FROM pg_locks WHERE NOT granted"
            : "SELECT sum(result::integer)::integer FROM run_command_on_workers('SELECT count(*) FROM pg_locks WHERE NOT granted')"
    }

    /// Creates or drops a trigger a test makes a batch fail with. On Citus a distributed table
    /// takes a trigger only with `citus.enable_unsafe_triggers` on in the session that makes it
    /// (Citus then makes it on every shard); one PostgreSQL takes it as it is.
    public static func triggerDDL(_ db: TestDatabase, _ sql: String) throws {
        let connection = try db.connect()
        defer { connection.close() }
        if citusURL != nil { try connection.query("SET citus.enable_unsafe_triggers TO on") }
        try connection.query(sql)
    }

    /// The coordinator's connection string when this run tests on Citus.
    public static var citusURL: String? {
        guard let url = ProcessInfo.processInfo.environment[citusURLVariable], !url.isEmpty else { return nil }
        return url
    }

    private static let shared: Result<Backend, any Error> = Result {
        let backend: Backend
        if let url = citusURL {
            backend = .citus(try CitusCoordinator(connectionString: url, prefix: "hw_citus_\(getpid())_", shardCount: 4))
        } else if let url = ProcessInfo.processInfo.environment[externalURLVariable], !url.isEmpty {
            backend = .external(try ExternalServer(connectionString: url))
        } else {
            backend = .cluster(try TestCluster())
        }
        atexit { TestPostgres.tearDown() }
        return backend
    }
    private static let failed = Atomic<Bool>(false)

    enum Backend {
        case cluster(TestCluster)
        case external(ExternalServer)
        case citus(CitusCoordinator)
    }

    /// The tables of health_store the reader may read: none on PostgreSQL; on Citus the ones
    /// the views read (docs/scaling.md, "Reading": Citus reads a view's shards as the reader).
    public static func readerGrantedTables(_ admin: PostgresConnection) throws -> Set<String> {
        guard citusURL != nil else { return [] }
        return Set(try admin.query(CitusLayout.viewTablesQuery).compactMap { $0[0] })
    }

    /// Makes `database` read-only for new sessions (`default_transaction_read_only`), or
    /// writable again; on Citus on every node, since a delegated call runs on a worker.
    public static func setReadOnly(_ database: TestDatabase, _ readOnly: Bool) throws {
        var urls = [database.connectionString]
        if case .citus(let coordinator) = try shared.get() {
            let info = try PostgresConnectionInfo(parsing: database.connectionString)
            urls += coordinator.workers.map { info.setting("host", to: $0.host).setting("port", to: String($0.port)).connectionString }
        }
        for url in urls {
            let connection = try PostgresConnection(connectionString: url)
            defer { connection.close() }
            try connection.query("SET default_transaction_read_only = off")
            try connection.query(readOnly ? "ALTER DATABASE \(database.name) SET default_transaction_read_only = on"
                                          : "ALTER DATABASE \(database.name) RESET default_transaction_read_only")
        }
    }

    /// Gives `body` a new, fully migrated database of its own. When `body` throws, the
    /// server log's path is printed and the log kept after the run.
    /// `migrated: false` gives an empty database instead. On Citus the database is dropped when
    /// `body` is done, unless `keep` (a database `body` hands out for later tests).
    public static func withDatabase<T>(label: String = #function, migrated: Bool = true, keep: Bool = false,
                                       _ body: (TestDatabase) throws -> T) throws -> T {
        let database: TestDatabase
        var dropAfter: CitusCoordinator?
        switch try shared.get() {
        case .cluster(let cluster): database = try cluster.freshDatabase(label: label, migrated: migrated)
        case .external(let server): database = try server.freshDatabase(label: label, migrated: migrated)
        case .citus(let server):
            database = try server.freshDatabase(label: label, migrated: migrated)
            dropAfter = keep ? nil : server
        }
        defer { dropAfter?.drop(database.name) }
        do {
            return try body(database)
        } catch {
            failed.store(true, ordering: .relaxed)
            FileHandle.standardError.write(Data("test failed: \(error)\nPostgreSQL log: \(keptLogPath)\n".utf8))
            throw error
        }
    }

    /// Where the server log is kept when a test failed.
    static var keptLogPath: String { NSTemporaryDirectory() + "health-warehouse-test-\(getpid())-postgres.log" }

    static func tearDown() {
        guard case .success(let backend) = shared else { return }
        switch backend {
        case .cluster(let cluster):
            if failed.load(ordering: .relaxed) {
                try? FileManager.default.copyItem(at: cluster.cluster.logFile, to: URL(fileURLWithPath: keptLogPath))
            }
            cluster.destroy()
        case .external(let server):
            server.dropAll()
        case .citus(let server):
            server.dropAll()
        }
    }
}

/// An existing server given by URL: a migrated template database, copied per test, all
/// dropped at exit.
final class ExternalServer: @unchecked Sendable {
    let connectionString: String
    let prefix = "hw_test_\(getpid())_"
    private let lock = NSLock()
    private var made: [String] = []
    private var counter = 0

    init(connectionString: String) throws {
        self.connectionString = connectionString
        let admin = try PostgresConnection(connectionString: connectionString)
        defer { admin.close() }
        try admin.query("CREATE DATABASE \(prefix)template")
        made.append("\(prefix)template")
        let template = try PostgresConnection(connectionString: Self.with(connectionString, database: "\(prefix)template"))
        defer { template.close() }
        try Migrator().migrate(template)
    }

    /// Databases are made one at a time: Citus updates shared catalog rows when it creates one on
    /// every node and registers nodes in it ("tuple concurrently updated" otherwise).
    private let making = NSLock()

    func freshDatabase(label: String, migrated: Bool) throws -> TestDatabase {
        try making.withLock { try make(migrated: migrated) }
    }

    private func make(migrated: Bool) throws -> TestDatabase {
        let name: String = lock.withLock {
            counter += 1
            let n = "\(prefix)\(counter)"
            made.append(n)
            return n
        }
        let admin = try PostgresConnection(connectionString: connectionString)
        defer { admin.close() }
        try admin.query("CREATE DATABASE \(name) TEMPLATE \(migrated ? prefix + "template" : "template0")")
        return TestDatabase(name: name, connectionString: try Self.with(connectionString, database: name), cluster: nil)
    }

    func dropAll() {
        guard let admin = try? PostgresConnection(connectionString: connectionString) else { return }
        defer { admin.close() }
        for name in lock.withLock({ made }).reversed() {
            _ = try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    /// The same server with another database, the string read and rewritten by libpq.
    static func with(_ connectionString: String, database: String) throws -> String {
        try CitusCoordinator.with(connectionString, database: database)
    }
}
