import Foundation
import Postgres
import Warehouse

/// A Citus coordinator given by URL (docs/scaling.md): a new database on demand (Citus copies no
/// template with shards in it), made on every node, the workers registered in it, migrated (so
/// distributed by person), all dropped by `dropAll`. The tests (`HEALTH_WAREHOUSE_TEST_CITUS_URL`)
/// and the benchmark's citus section use it.
public final class CitusCoordinator: @unchecked Sendable {
    let connectionString: String
    let prefix: String
    /// Shards per table when a database is migrated; nil: Citus' own `citus.shard_count`.
    let shardCount: Int?
    let coordinator: (host: String, port: Int)
    /// The workers registered in the coordinator's database given, host and port.
    public let workers: [(host: String, port: Int)]
    private let lock = NSLock()
    private var made: [String] = []
    private var counter = 0

    /// `connectionString`: a superuser's, to a database of the coordinator in which the workers
    /// are registered. Databases made are named `prefix` and a number.
    public init(connectionString: String, prefix: String, shardCount: Int? = nil) throws {
        self.connectionString = connectionString
        self.prefix = prefix
        self.shardCount = shardCount
        let admin = try PostgresConnection(connectionString: connectionString)
        defer { admin.close() }
        let nodes = try admin.query("SELECT nodename, nodeport, groupid = 0 FROM pg_dist_node WHERE noderole = 'primary' ORDER BY groupid")
        var coordinator: (String, Int)?
        var workers: [(String, Int)] = []
        for row in nodes {
            let node = (try row.decode(0, as: String.self), try row.decode(1, as: Int.self))
            if try row.decode(2, as: Bool.self) { coordinator = node } else { workers.append(node) }
        }
        guard let coordinator, !workers.isEmpty else {
            throw ClusterError.notStarted(logFile: "the Citus URL must name a database of the coordinator in which its workers are registered")
        }
        self.coordinator = coordinator
        self.workers = workers
    }

    /// Databases are made one at a time: Citus updates shared catalog rows when it creates one on
    /// every node and registers nodes in it ("tuple concurrently updated" otherwise).
    private let making = NSLock()

    /// A new database on every node, the workers registered in it, migrated unless told not to.
    public func freshDatabase(label: String, migrated: Bool) throws -> TestDatabase {
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
        // CREATE DATABASE cannot take parameters; the name is made above from letters and digits only.
        try admin.query("SET citus.enable_create_database_propagation = on")
        // Citus keeps a maintenance daemon connected to every database holding the extension,
        // template1 included, and CREATE DATABASE refuses a template someone is connected to.
        // The daemon is started again when needed.
        let daemons = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'template1' AND pid <> pg_backend_pid()"
        try admin.query(daemons)
        try admin.query("SELECT run_command_on_workers($1)", [daemons])
        try admin.query("CREATE DATABASE \(name)")
        let url = try Self.with(connectionString, database: name)
        let connection = try PostgresConnection(connectionString: url)
        defer { connection.close() }
        try connection.query("SELECT citus_set_coordinator_host($1, $2)", [coordinator.host, coordinator.port])
        for worker in workers {
            try connection.query("SELECT citus_add_node($1, $2)", [worker.host, worker.port])
        }
        if migrated {
            if let shardCount { try connection.query("SELECT set_config('citus.shard_count', $1, false)", [String(shardCount)]) }
            try Migrator().migrate(connection)
        }
        return TestDatabase(name: name, connectionString: url, cluster: nil)
    }

    /// Drops one database this made, on every node, as soon as its test is done: each database
    /// keeps a Citus maintenance daemon, with its connections, on every node while it exists, and
    /// a whole test run's hundreds of them used up the nodes' worker processes and connections.
    public func drop(_ name: String) {
        guard lock.withLock({ made.contains(name) }) else { return }
        dropping([name])
    }

    /// Drops every database this made.
    public func dropAll() {
        dropping(lock.withLock({ made }).reversed())
    }

    /// Drops the named databases on every node (propagated), forgetting each one dropped. A
    /// worker may still be closing the last sessions of a propagated drop: each is tried again.
    private func dropping(_ names: [String]) {
        guard let admin = try? PostgresConnection(connectionString: connectionString) else { return }
        defer { admin.close() }
        _ = try? admin.query("SET citus.enable_create_database_propagation = on")
        for name in names {
            for attempt in 0..<5 {
                if (try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")) != nil {
                    lock.withLock { made.removeAll { $0 == name } }
                    break
                }
                usleep(UInt32(200_000 * (attempt + 1)))
            }
        }
    }

    /// The same server with another database, the string read and rewritten by libpq.
    public static func with(_ connectionString: String, database: String) throws -> String {
        try PostgresConnectionInfo(parsing: connectionString).setting("dbname", to: database).connectionString
    }
}
