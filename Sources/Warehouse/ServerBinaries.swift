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

/// Runs a program and collects its output (stdout and stderr together).
public enum ProcessRunner {
    /// Result of a finished program.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
    }

    /// Runs `program` (a path, or a name looked up on `PATH`) to completion.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        let process = Process()
        if program.contains("/") {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + arguments
        }
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
