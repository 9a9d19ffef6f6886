import Foundation

/// Where PostgreSQL's server programs (`initdb`, `pg_ctl`, `postgres`) are installed.
public struct ServerBinaries: Sendable {
    /// The folder holding `initdb` and `pg_ctl`.
    public let directory: URL

    /// Finds the server programs: `pg_config --bindir` first, then the newest
    /// `/usr/lib/postgresql/*/bin` (Debian keeps them off `PATH`).
    public static func locate() throws -> ServerBinaries {
        var candidates: [URL] = []
        if let bindir = try? ProcessRunner.run("pg_config", ["--bindir"]).output.trimmingCharacters(in: .whitespacesAndNewlines),
           !bindir.isEmpty {
            candidates.append(URL(fileURLWithPath: bindir))
        }
        let debian = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: debian.path)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            candidates.append(debian.appendingPathComponent(version).appendingPathComponent("bin"))
        }
        for dir in candidates where FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("initdb").path)
            && FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("pg_ctl").path) {
            return ServerBinaries(directory: dir)
        }
        throw ClusterError.binariesNotFound(searched: candidates.map(\.path))
    }

    func path(_ program: String) -> String { directory.appendingPathComponent(program).path }
}

/// Problems running a local PostgreSQL cluster.
public enum ClusterError: Error, CustomStringConvertible {
    case binariesNotFound(searched: [String])
    case commandFailed(command: String, status: Int32, output: String)
    case unreachableByPostgresUser(path: String)
    case notStarted(logFile: String)

    public var description: String {
        switch self {
        case .binariesNotFound(let searched):
            return "PostgreSQL server programs (initdb, pg_ctl) not found (looked in: \(searched.isEmpty ? "pg_config, /usr/lib/postgresql/*/bin" : searched.joined(separator: ", "))); install the Debian package postgresql"
        case .commandFailed(let command, let status, let output):
            return "\(command) failed with status \(status): \(output.trimmingCharacters(in: .whitespacesAndNewlines))"
        case .unreachableByPostgresUser(let path):
            return "running as root, the cluster runs as user postgres, which cannot reach \(path); pass --data-dir with a folder user postgres can enter (e.g. /var/lib/health-warehouse)"
        case .notStarted(let logFile):
            return "PostgreSQL did not start; its log is \(logFile)"
        }
    }
}

/// Runs programs with `posix_spawn` and `waitpid`.
///
/// Foundation's `Process.waitUntilExit` was seen to hang here when called from a thread of
/// the Swift concurrency pool, so child processes are handled directly.
public enum ProcessRunner {
    /// Result of a finished program.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
    }

    /// Runs `program` (a path, or a name looked up on `PATH`) to completion and returns its
    /// exit status and its stdout and stderr together.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String]) throws -> Result {
        var fds: [Int32] = [0, 0]
        // Created close-on-exec: a program spawned at the same moment by another thread must
        // not inherit it. (A postmaster started by that other program would hold it open for
        // its whole life, and this read would never see the end of the output.) The child's
        // own copies on 1 and 2 are made by dup2 and stay open. A socket pair, because
        // Swift's Glibc module does not offer pipe2.
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw ClusterError.commandFailed(command: program, status: -1, output: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let pid: pid_t
        do {
            pid = try spawn(program, arguments, actions: &actions)
        } catch {
            close(fds[0]); close(fds[1])
            throw error
        }
        close(fds[1])
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { output.append(contentsOf: buffer[0..<n]) } else if n == 0 || errno != EINTR { break }
        }
        close(fds[0])
        let status = wait(for: pid)
        return Result(status: status, output: String(decoding: output, as: UTF8.self))
    }

    /// Starts `program` with stdin, stdout and stderr on /dev/null and does not wait for it.
    public static func startDetached(_ program: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        _ = try spawn(program, arguments, actions: &actions)
    }

    private static func spawn(_ program: String, _ arguments: [String], actions: inout posix_spawn_file_actions_t) throws -> pid_t {
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The CLI blocks SIGINT and SIGTERM to wait for them on a thread of its own; a child
        // (pg_ctl, and the server it starts) must get them back, or it could not be stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = program.contains("/")
            ? posix_spawn(&pid, program, &actions, &attributes, argv, environ)
            : posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        guard rc == 0 else {
            throw ClusterError.commandFailed(command: program, status: rc, output: String(cString: strerror(rc)))
        }
        return pid
    }

    /// Waits for a child and returns its exit status (128 + signal when killed).
    public static func wait(for pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
