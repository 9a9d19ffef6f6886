import Foundation
import Postgres

/// A PostgreSQL cluster in a folder of its own, run with the server programs of this machine.
///
/// `initdb` refuses to run as root, so as root every server program runs as user
/// `postgres` through `runuser`, and the folders it writes are handed to that user.
public final class LocalCluster: @unchecked Sendable {
    /// The cluster's data folder (`PGDATA`).
    public let dataDirectory: URL
    /// Where the server puts its Unix socket.
    public let socketDirectory: URL
    /// The server log.
    public let logFile: URL
    /// The server programs this cluster runs.
    public let binaries: ServerBinaries

    /// The superuser name made by `initdb`; connections use it with trust authentication
    /// over the socket (or loopback TCP), which only this machine can reach.
    public static let superuser = "postgres"

    public init(dataDirectory: URL, socketDirectory: URL, logFile: URL, binaries: ServerBinaries) {
        self.dataDirectory = dataDirectory
        self.socketDirectory = socketDirectory
        self.logFile = logFile
        self.binaries = binaries
    }

    static var isRoot: Bool { geteuid() == 0 }

    /// True once `initdb` has made the data folder.
    public var isInitialized: Bool {
        FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path)
    }

    /// The default collation and character classes a new cluster gets from `initdb`.
    ///
    /// Nothing the warehouse does depends on it (every order and comparison of text that
    /// matters names `COLLATE "C"`, and no SQL lowers, capitalizes or matches text by the
    /// database's rules); the tests run on an ICU collation to hold that true.
    public enum Locale: Sendable, Equatable {
        /// The C locale: byte order, ASCII character classes.
        case c
        /// An ICU collation for the database's default (`en-US`, `tr-TR`, …), with the C.UTF-8
        /// locale for the server's own `lc_*` settings.
        case icu(String)

        /// The `initdb` arguments that make it.
        var initdbArguments: [String] {
            switch self {
            case .c: return ["--locale=C"]
            case .icu(let name): return ["--locale-provider=icu", "--icu-locale=\(name)", "--locale=C.UTF-8"]
            }
        }
    }

    /// Makes the data folder with `initdb` (UTF-8, the given locale). Authentication is
    /// `trust` unless `extraArguments` say otherwise (`--auth-host=…`).
    public func initialize(locale: Locale = .c, extraArguments: [String] = ["-A", "trust"]) throws {
        try makeDirectoryForServer(dataDirectory, mode: 0o700)
        try makeDirectoryForServer(socketDirectory, mode: 0o700)
        try makeFileForServer(logFile)
        try runServerProgram("initdb", ["-D", dataDirectory.path, "-U", Self.superuser,
                                        "-E", "UTF8", "--no-sync", "--no-instructions"] + locale.initdbArguments + extraArguments)
    }

    /// Starts the server and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - port: the port number (also names the socket file).
    ///   - listenAddresses: TCP addresses to listen on; empty for socket only.
    ///   - settings: extra `-c name=value` server settings.
    public func start(port: Int, listenAddresses: String, settings: [String: String] = [:]) throws {
        try makeFileForServer(logFile)
        // pg_ctl hands -o to a shell (it runs `postgres … <options>` through /bin/sh), so
        // every value is shell-quoted: a socket folder may hold spaces.
        var options = "-p \(port) -k \(Self.shellQuoted(socketDirectory.path)) -c \(Self.shellQuoted("listen_addresses=\(listenAddresses)"))"
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) {
            options += " -c " + Self.shellQuoted("\(name)=\(value)")
        }
        do {
            try runServerProgram("pg_ctl", ["-D", dataDirectory.path, "-l", logFile.path, "-w", "-t", "60",
                                            "-o", options, "start"])
        } catch {
            throw ClusterError.notStarted(logFile: logFile.path)
        }
    }

    /// Stops the server. `fast` rolls back open transactions and disconnects clients;
    /// `immediate` is a crash stop (recovery on next start).
    public func stop(mode: String = "fast") throws {
        try runServerProgram("pg_ctl", ["-D", dataDirectory.path, "-m", mode, "-w", "-t", "60", "stop"])
    }

    /// The port and socket folder of a server already running on this data folder, read
    /// from `postmaster.pid`, or `nil` when none runs.
    public func runningServer() -> (pid: Int32, port: Int, socketDirectory: String)? {
        guard let text = try? String(contentsOf: dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8) else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Lines: pid, data dir, start time, port, socket dir, listen address, shmem key, status.
        guard lines.count >= 5, let pid = Int32(lines[0]), let port = Int(lines[3]) else { return nil }
        guard kill(pid, 0) == 0 || errno == EPERM else { return nil }
        return (pid, port, lines[4])
    }

    /// The libpq settings for `database` over the Unix socket, as keyword/value pairs.
    public func connectionInfo(database: String, port: Int) -> PostgresConnectionInfo {
        PostgresConnectionInfo([("host", socketDirectory.path), ("port", String(port)), ("user", Self.superuser),
                                ("dbname", database)])
    }

    /// A libpq connection string for `database` over the Unix socket, values quoted as libpq
    /// reads them (a folder may hold spaces).
    public func connectionString(database: String, port: Int) -> String {
        connectionInfo(database: database, port: port).connectionString
    }

    /// `text` in single quotes for a POSIX shell.
    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: - Running as the right user

    func runServerProgram(_ program: String, _ arguments: [String]) throws {
        let path = binaries.path(program)
        let result: ProcessRunner.Result
        if Self.isRoot {
            result = try ProcessRunner.run("/usr/sbin/runuser", ["-u", Self.superuser, "--", path] + arguments)
        } else {
            result = try ProcessRunner.run(path, arguments)
        }
        guard result.status == 0 else {
            throw ClusterError.commandFailed(command: program, status: result.status, output: result.output)
        }
    }

    func makeDirectoryForServer(_ url: URL, mode: Int) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try handToServerUser(url)
        chmod(url.path, mode_t(mode))
    }

    func makeFileForServer(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
        try handToServerUser(url)
    }

    func handToServerUser(_ url: URL) throws {
        guard Self.isRoot else { return }
        guard let pw = getpwnam(Self.superuser) else {
            throw ClusterError.commandFailed(command: "getpwnam", status: 1, output: "no user \(Self.superuser); install the Debian package postgresql")
        }
        chown(url.path, pw.pointee.pw_uid, pw.pointee.pw_gid)
        // The server user must be able to walk down to the folder.
        let probe = try ProcessRunner.run("/usr/sbin/runuser", ["-u", Self.superuser, "--", "test", "-w", url.path])
        if probe.status != 0 { throw ClusterError.unreachableByPostgresUser(path: url.path) }
    }
}
