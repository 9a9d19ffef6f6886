import Foundation
import Warehouse

/// The built `health-warehouse` binary, run as a child process by tests and benchmarks.
public enum CLIProcess {
    /// `.build/<triple>/<configuration>/health-warehouse`, beside the test bundle or the benchmark binary.
    public static var binaryPath: String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [bundle.appendingPathComponent("health-warehouse").path]
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("health-warehouse").path)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    /// What a finished run printed.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs the binary to completion.
    public static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                           stdin: String? = nil) throws -> Output {
        try start(arguments, environment: environment, directory: directory, stdin: stdin).wait()
    }

    /// Runs any program to completion (stdout and stderr apart), e.g. `/bin/bash script`.
    public static func runProgram(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Output {
        try Running(binary: program, arguments: arguments, environment: environment, directory: nil, stdin: nil).wait()
    }

    /// Starts any program and returns at once (stdout and stderr apart), e.g. another receiver.
    public static func startProgram(_ program: String, _ arguments: [String], environment: [String: String] = [:],
                                    directory: String? = nil) throws -> Running {
        try Running(binary: program, arguments: arguments, environment: environment, directory: directory, stdin: nil)
    }

    /// Starts the binary and returns at once.
    public static func start(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                             stdin: String? = nil) throws -> Running {
        guard FileManager.default.isExecutableFile(atPath: binaryPath) else {
            throw CLIProcessError(message: "the health-warehouse binary is not built at \(binaryPath); run `swift build` first")
        }
        return try Running(binary: binaryPath, arguments: arguments, environment: environment, directory: directory, stdin: stdin)
    }

    /// A running child; its output goes to temporary files.
    public final class Running: @unchecked Sendable {
        public let pid: pid_t
        let stdoutPath: String
        let stderrPath: String
        private var finished: Output?

        init(binary: String, arguments: [String], environment: [String: String], directory: String?, stdin: String?) throws {
            let base = NSTemporaryDirectory() + "hw-cli-\(getpid())-\(UUID().uuidString)"
            stdoutPath = base + ".out"
            stderrPath = base + ".err"
            let stdinPath = base + ".in"
            _ = FileManager.default.createFile(atPath: stdinPath, contents: Data((stdin ?? "").utf8))
            defer { unlink(stdinPath) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            var env = ProcessInfo.processInfo.environment
            env.removeValue(forKey: "DATABASE_URL")
            for (key, value) in environment { env[key] = value }
            let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { envp.forEach { free($0) } }
            // Run from another folder through sh: glibc's addchdir_np is not visible to Swift.
            let program = directory == nil ? binary : "/bin/sh"
            let words = directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, binary] } ?? [binary]
            let argv = (words + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var attributes = posix_spawnattr_t()
            posix_spawnattr_init(&attributes)
            defer { posix_spawnattr_destroy(&attributes) }
            var empty = sigset_t()
            sigemptyset(&empty)
            posix_spawnattr_setsigmask(&attributes, &empty)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            var child: pid_t = 0
            let rc = posix_spawn(&child, program, &actions, &attributes, argv, envp)
            guard rc == 0 else { throw CLIProcessError(message: "cannot start \(binary): \(String(cString: strerror(rc)))") }
            pid = child
        }

        /// Sends a signal (SIGTERM, SIGINT, SIGKILL).
        public func signal(_ signal: Int32) { kill(pid, signal) }

        /// What it has written to stderr so far.
        public var stderrSoFar: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        /// What it has written to stdout so far.
        public var stdoutSoFar: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }

        /// True while the process has not exited.
        public var isRunning: Bool {
            if finished != nil { return false }
            var status: Int32 = 0
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid {
                let signal = status & 0x7f
                finished = collect(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal)
                return false
            }
            return true
        }

        /// Waits until stderr contains `text`, or the process exits, or `timeout` passes.
        @discardableResult
        public func waitForStderr(_ text: String, timeout: TimeInterval = 60) -> Bool {
            waitUntil({ $0.stderrSoFar.contains(text) }, timeout: timeout)
        }

        /// Waits until stdout contains `text`, or the process exits, or `timeout` passes.
        @discardableResult
        public func waitForStdout(_ text: String, timeout: TimeInterval = 60) -> Bool {
            waitUntil({ $0.stdoutSoFar.contains(text) }, timeout: timeout)
        }

        /// Polls `seen` until it holds, the process exits (one last look) or `timeout` passes.
        private func waitUntil(_ seen: (Running) -> Bool, timeout: TimeInterval) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if seen(self) { return true }
                if !isRunning { return seen(self) }
                usleep(20_000)
            }
            return false
        }

        /// Waits for the exit and returns what it printed.
        public func wait() -> Output {
            if let finished { return finished }
            let status = ProcessRunner.wait(for: pid)
            let output = collect(status: status)
            finished = output
            return output
        }

        private func collect(status: Int32) -> Output {
            let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            unlink(stdoutPath)
            unlink(stderrPath)
            return Output(status: status, stdout: out, stderr: err)
        }
    }
}

/// The binary could not be run.
public struct CLIProcessError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }

    /// An error saying `message`.
    public init(message: String) {
        self.message = message
    }
}

extension CLIProcess {
    /// Starts `serve` on a free loopback port (`--listen 127.0.0.1:0` unless `arguments`
    /// name one) and waits until it listens and, unless `ready` is false, has migrated the
    /// database (`serve.ready`); returns it with the port it bound. `binary` runs another
    /// build's executable instead of this one's (the benchmarks' `--against`).
    public static func startServe(_ arguments: [String], environment: [String: String] = [:],
                                  timeout: TimeInterval = 120, ready: Bool = true,
                                  binary: String? = nil) throws -> (serve: Running, port: Int) {
        let listen = arguments.contains("--listen") ? [] : ["--listen", "127.0.0.1:0"]
        let serve = try binary.map { try startProgram($0, ["serve"] + listen + arguments, environment: environment) }
            ?? start(["serve"] + listen + arguments, environment: environment)
        guard serve.waitForStderr("serve.listening", timeout: timeout),
              let match = serve.stderrSoFar.firstMatch(of: /serve\.listening address=[^ ]*:(\d+)/), let port = Int(match.1),
              !ready || serve.waitForStderr("serve.ready", timeout: timeout) else {
            serve.signal(SIGKILL)
            throw CLIProcessError(message: "serve did not start: \(serve.wait().stderr)")
        }
        return (serve, port)
    }
}
