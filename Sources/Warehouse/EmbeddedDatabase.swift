import Foundation
import Glibc
import Postgres

/// The PostgreSQL cluster a command runs when given no database URL: in a folder of its own
/// (`--data-dir`), created on first use, started for the command and stopped after it.
///
/// Layout of the data folder:
/// - `postgres/`: the cluster (`PGDATA`), whose Unix socket also lives there;
/// - `postgres.log`: the server log;
/// - `port`: the TCP port on 127.0.0.1, kept so psql and Grafana find it again;
/// - `password`: the password of user `postgres` for TCP connections (mode 0600).
///
/// Over the socket (a folder only its owner can enter) connections are trusted; over TCP they
/// need the password, so other users of the machine cannot get in.
public final class EmbeddedDatabase: @unchecked Sendable {
    /// The folder given by `--data-dir`.
    public let directory: URL
    /// The database the warehouse lives in.
    public static let databaseName = "health"
    let cluster: LocalCluster
    private var startedHere = false
    private var port = 0

    public init(directory: URL) throws {
        self.directory = directory.standardizedFileURL
        let pgdata = self.directory.appendingPathComponent("postgres")
        cluster = LocalCluster(dataDirectory: pgdata, socketDirectory: pgdata,
                               logFile: self.directory.appendingPathComponent("postgres.log"),
                               binaries: try ServerBinaries.locate())
    }

    /// What a command needs: how to connect, and the line to show a user.
    public struct Session: Sendable {
        /// libpq connection string over the Unix socket.
        public var connectionString: String
        /// `psql "host=… port=… user=postgres dbname=health"`.
        public var psqlCommand: String
        /// The TCP port on 127.0.0.1.
        public var port: Int
        /// True when this process started the server (and will stop it).
        public var startedHere: Bool
    }

    /// Creates the cluster if needed and starts it, or reuses one already running for this
    /// folder (say, under `serve`).
    public func open() throws -> Session {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lock = try FileLock(path: directory.appendingPathComponent(".lock").path)
        defer { lock.unlock() }

        if let running = cluster.runningServer() {
            return session(port: running.port, startedHere: false)
        }
        if !cluster.isInitialized {
            try initialize()
        }
        // Another program may take the port between choosing and starting: try again.
        var attempt = 0
        while true {
            let chosen = try choosePort()
            do {
                try cluster.start(port: chosen, listenAddresses: "127.0.0.1")
            } catch where attempt < 5 && !Self.isFree(port: chosen) {
                attempt += 1
                continue
            }
            startedHere = true
            port = chosen
            return session(port: chosen, startedHere: true)
        }
    }

    /// Stops the server if this process started it.
    public func close() {
        guard startedHere else { return }
        startedHere = false
        try? cluster.stop()
    }

    private func session(port: Int, startedHere: Bool) -> Session {
        let conninfo = cluster.connectionString(database: Self.databaseName, port: port)
        return Session(connectionString: conninfo, psqlCommand: "psql \"\(conninfo)\"", port: port, startedHere: startedHere)
    }

    private func initialize() throws {
        // A fresh random password for TCP; the socket needs none.
        var bytes = [UInt8](repeating: 0, count: 24)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = generator.next() }
        let password = SHA256.hexString(bytes)
        let passwordFile = directory.appendingPathComponent("password")
        try Data((password + "\n").utf8).write(to: passwordFile)
        chmod(passwordFile.path, 0o600)

        try cluster.initialize(extraArguments: ["--auth-local=trust", "--auth-host=scram-sha-256"])
        // initdb's --pwfile would need the file readable by the server user; set it over the
        // socket instead, once, while the server runs on no TCP port.
        try cluster.start(port: 5432, listenAddresses: "")
        defer { try? cluster.stop() }
        let connection = try PostgresConnection(connectionString: cluster.connectionString(database: "postgres", port: 5432))
        defer { connection.close() }
        // ALTER ROLE takes no parameters: pass the password as a session setting.
        try connection.query("SELECT set_config('health.password', $1, false)", [password])
        try connection.query("DO $$ BEGIN EXECUTE format('ALTER ROLE postgres PASSWORD %L', current_setting('health.password')); END $$")
        try connection.query("CREATE DATABASE \(Self.databaseName)")
    }

    /// The port kept in `port` if still free, else the first free one from 54320 up.
    private func choosePort() throws -> Int {
        let file = directory.appendingPathComponent("port")
        if let text = try? String(contentsOf: file, encoding: .utf8), let kept = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)),
           Self.isFree(port: kept) {
            return kept
        }
        for candidate in 54320..<54420 where Self.isFree(port: candidate) {
            try Data("\(candidate)\n".utf8).write(to: file)
            return candidate
        }
        throw ClusterError.commandFailed(command: "choosing a port", status: 1, output: "no free TCP port in 54320-54419 on 127.0.0.1")
    }

    static func isFree(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return rc == 0
    }
}

/// An exclusive `flock` on a file, so two commands starting at once on one data folder
/// do not both create or start the cluster.
struct FileLock {
    let fd: Int32

    init(path: String) throws {
        fd = open(path, O_CREAT | O_RDWR, 0o600)
        guard fd >= 0 else {
            throw ClusterError.commandFailed(command: "open \(path)", status: errno, output: String(cString: strerror(errno)))
        }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
    }

    func unlock() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
