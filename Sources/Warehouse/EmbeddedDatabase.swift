import Foundation
import Glibc
import Hashing
import Postgres

/// The PostgreSQL cluster a command runs when given no database URL: in a folder of its own
/// (`--data-dir`), created on first use, started by the first command that needs it and
/// stopped by the last one still using it.
///
/// Layout of the data folder (mode 0700):
/// - `postgres/`: the cluster (`PGDATA`), whose Unix socket also lives there;
/// - `postgres.log`: the server log;
/// - `port`: the TCP port on 127.0.0.1, kept so psql and Grafana find it again;
/// - `password`: the password of user `postgres` for TCP connections (created 0600);
/// - `users/`: one file per process using the cluster, `flock`ed for that process's life;
/// - `.lock`: taken while a process starts, joins, leaves or stops the cluster.
///
/// Whoever leaves and finds no live user left stops the cluster, whichever process started
/// it: `serve` keeps answering after the `ingest` that started the cluster ends. A user that
/// crashed leaves its file behind, but not its lock, so it counts as gone; if it was the
/// last one, the cluster runs on until the next command uses it and leaves.
///
/// Over the socket (a folder only its owner can enter) connections are trusted; over TCP they
/// need the password, so other users of the machine cannot get in.
public final class EmbeddedDatabase: @unchecked Sendable {
    /// The folder given by `--data-dir`.
    public let directory: URL
    /// The database the warehouse lives in.
    public static let databaseName = "health"
    let cluster: LocalCluster
    // Guards `membership`: close() may run on the signal thread while the command's own
    // thread runs it too.
    private let lock = NSLock()
    private var membership: UserFile?

    public init(directory: URL) throws {
        self.directory = directory.standardizedFileURL
        let pgdata = self.directory.appendingPathComponent("postgres")
        cluster = LocalCluster(dataDirectory: pgdata, socketDirectory: pgdata,
                               logFile: self.directory.appendingPathComponent("postgres.log"),
                               binaries: try ServerBinaries.locate())
    }

    /// What a command needs: how to connect, and the line to show a user.
    public struct Session: Sendable {
        /// libpq connection string over the Unix socket (values quoted: paths may hold spaces).
        public var connectionString: String
        /// `psql "host=… port=… user=postgres dbname=health"`, quoted for a POSIX shell.
        public var psqlCommand: String
        /// The TCP port on 127.0.0.1.
        public var port: Int
        /// True when this process started the server.
        public var startedHere: Bool
    }

    /// Joins the cluster's users, then creates it if needed and starts it, or reuses the one
    /// already running for this folder (say, under `serve`).
    public func open() throws -> Session {
        try makeDataDirectory()
        let folderLock = try FileLock(path: directory.appendingPathComponent(".lock").path)
        defer { folderLock.unlock() }
        let user = try UserFile(in: usersDirectory)
        do {
            let session = try startOrReuse()
            lock.withLock { membership = user }
            return session
        } catch {
            user.leave()
            throw error
        }
    }

    /// Leaves the cluster's users; the last live user stops the server. Idempotent.
    public func close() {
        guard let user = lock.withLock({ () -> UserFile? in
            defer { membership = nil }
            return membership
        }) else { return }
        let folderLock = try? FileLock(path: directory.appendingPathComponent(".lock").path)
        defer { folderLock?.unlock() }
        user.leave()
        if UserFile.liveUsers(in: usersDirectory) == 0 {
            try? cluster.stop()
        }
    }

    /// `users/`: one locked file per live user.
    var usersDirectory: URL { directory.appendingPathComponent("users") }

    private func startOrReuse() throws -> Session {
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
            return session(port: chosen, startedHere: true)
        }
    }

    /// The data folder, mode 0700. As root the cluster runs as user `postgres`, which must
    /// enter it, so it is handed to that user (root enters anyway).
    private func makeDataDirectory() throws {
        let path = directory.path
        if mkdir(path, 0o700) != 0 && errno == ENOENT {
            // Parents as any folder is made (the server user may need to pass through them);
            // only the data folder itself is private.
            try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
            _ = mkdir(path, 0o700)
        }
        try cluster.handToServerUser(directory)
        var info = stat()
        if stat(path, &info) == 0, info.st_uid == geteuid() || LocalCluster.isRoot {
            chmod(path, 0o700)
        }
        if mkdir(usersDirectory.path, 0o700) != 0 && errno != EEXIST {
            throw ClusterError.commandFailed(command: "mkdir \(usersDirectory.path)", status: errno, output: String(cString: strerror(errno)))
        }
    }

    private func session(port: Int, startedHere: Bool) -> Session {
        let conninfo = cluster.connectionInfo(database: Self.databaseName, port: port).connectionString
        return Session(connectionString: conninfo, psqlCommand: "psql " + Self.shellQuoted(conninfo), port: port,
                       startedHere: startedHere)
    }

    /// `text` as one word for a POSIX shell: in double quotes when nothing in it is special
    /// there (the usual case, and what people expect to see), else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        if !text.contains(where: { "\"$`\\!".contains($0) }) {
            return "\"" + text + "\""
        }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private func initialize() throws {
        // A fresh random password for TCP; the socket needs none.
        var bytes = [UInt8](repeating: 0, count: 24)
        var generator = SystemRandomNumberGenerator()
        for i in bytes.indices { bytes[i] = generator.next() }
        let password = SHA256.hexString(bytes)
        try Self.writeSecret(password + "\n", to: directory.appendingPathComponent("password").path)

        // The C locale whatever the user's environment says: initdb fails on a locale the
        // machine lacks, and nothing the warehouse does depends on the collation anyway.
        try cluster.initialize(locale: .c, extraArguments: ["--auth-local=trust", "--auth-host=scram-sha-256"])
        // initdb's --pwfile would need the file readable by the server user; set it over the
        // socket instead, once, while the server runs on no TCP port.
        try cluster.start(port: 5432, listenAddresses: "")
        defer { try? cluster.stop() }
        let connection = try PostgresConnection(info: cluster.connectionInfo(database: "postgres", port: 5432))
        defer { connection.close() }
        // ALTER ROLE takes no parameters: pass the password as a session setting.
        try connection.query("SELECT set_config('health.password', $1, false)", [password])
        try connection.query("DO $$ BEGIN EXECUTE format('ALTER ROLE postgres PASSWORD %L', current_setting('health.password')); END $$")
        try connection.query("CREATE DATABASE \(Self.databaseName)")
    }

    /// Creates `path` with mode 0600 from the start (`O_CREAT|O_EXCL`: never an existing
    /// file or a symlink's target) and writes `text`. A file left by an earlier attempt that
    /// never got as far as a cluster is replaced.
    static func writeSecret(_ text: String, to path: String) throws {
        let bytes = Array(text.utf8)
        do {
            do {
                try PrivateFile.create(path, bytes)
            } catch let error as PrivateFileError where error.code == EEXIST {
                unlink(path)
                try PrivateFile.create(path, bytes)
            }
        } catch let error as PrivateFileError {
            throw ClusterError.commandFailed(command: "\(error.step) \(path)", status: error.code, output: String(cString: strerror(error.code)))
        }
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
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return rc == 0
    }
}

/// One process's membership of an embedded cluster's users: a file in `users/`, `flock`ed
/// for as long as the process uses the cluster. The kernel drops the lock when the process
/// dies, however it dies, so a file whose lock can be taken belongs to nobody.
final class UserFile: @unchecked Sendable {
    let path: String
    private var fd: Int32

    /// Creates and locks a new file in `directory`. Close-on-exec, so a server started
    /// meanwhile (pg_ctl, postgres) never inherits it and keeps it locked.
    init(in directory: URL) throws {
        var attempt = 0
        while true {
            var random = SystemRandomNumberGenerator()
            let candidate = directory.appendingPathComponent("\(getpid())-\(random.next() as UInt32)").path
            let fd = Glibc.open(candidate, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd < 0 && errno == EEXIST && attempt < 5 {
                attempt += 1
                continue
            }
            guard fd >= 0 else {
                throw ClusterError.commandFailed(command: "create \(candidate)", status: errno, output: String(cString: strerror(errno)))
            }
            while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
            self.path = candidate
            self.fd = fd
            return
        }
    }

    /// Removes the file and drops the lock (idempotent).
    func leave() {
        guard fd >= 0 else { return }
        unlink(path)
        Glibc.close(fd)
        fd = -1
    }

    /// The users of `directory` whose process still lives; files of the dead are removed.
    static func liveUsers(in directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var live = 0
        for name in names {
            let path = directory.appendingPathComponent(name).path
            let fd = Glibc.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { Glibc.close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                // Nobody holds it: its process is gone.
                unlink(path)
            } else if errno == EWOULDBLOCK {
                live += 1
            }
        }
        return live
    }
}

/// An exclusive `flock` on a file, so two commands starting at once on one data folder
/// do not both create or start the cluster. Close-on-exec: a server started while it is
/// held must not inherit it.
struct FileLock {
    let fd: Int32

    init(path: String) throws {
        fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
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
