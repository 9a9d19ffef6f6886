import Foundation
import Postgres
import Synchronization
import Warehouse

/// The PostgreSQL every test of this run shares: one throwaway cluster, started on first
/// use and removed at exit, or the server `HEALTH_WAREHOUSE_TEST_DATABASE_URL` names.
public enum TestPostgres {
    /// Set by the environment to test against an existing server (needs CREATEDB).
    public static let externalURLVariable = "HEALTH_WAREHOUSE_TEST_DATABASE_URL"

    private static let shared: Result<Backend, any Error> = Result {
        let backend: Backend
        if let url = ProcessInfo.processInfo.environment[externalURLVariable], !url.isEmpty {
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
    }

    /// Gives `body` a new, fully migrated database of its own. When `body` throws, the
    /// server log's path is printed and the log kept after the run.
    /// `migrated: false` gives an empty database instead.
    public static func withDatabase<T>(label: String = #function, migrated: Bool = true, _ body: (TestDatabase) throws -> T) throws -> T {
        let database: TestDatabase
        switch try shared.get() {
        case .cluster(let cluster): database = try cluster.freshDatabase(label: label, migrated: migrated)
        case .external(let server): database = try server.freshDatabase(label: label, migrated: migrated)
        }
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

    func freshDatabase(label: String, migrated: Bool) throws -> TestDatabase {
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
        try PostgresConnectionInfo(parsing: connectionString).setting("dbname", to: database).connectionString
    }
}
