import Foundation
import Testing
import TestSupport

/// The embedded cluster shared by several commands, with the real binary: the last user
/// stops it, whoever started it; a crashed user does not keep it alive; its folder is
/// private; a folder with spaces works.
@Suite("embedded cluster lifetime")
struct EmbeddedClusterTests {
    /// A fresh folder under the temporary directory, named with spaces when asked.
    static func folder(_ name: String) -> String {
        NSTemporaryDirectory() + "hw-embedded-\(name)-\(UUID().uuidString.prefix(8))"
    }

    static func serverRuns(_ folder: String) -> Bool {
        FileManager.default.fileExists(atPath: folder + "/postgres/postmaster.pid")
    }

    static func stopped(_ folder: String) -> Bool {
        waitUntil(timeout: 30) { !serverRuns(folder) }
    }

    @Test("serve reusing the cluster a long ingest started keeps answering after the ingest ends; serve, last, stops it")
    func lastUserStops() throws {
        let folder = Self.folder("last")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let backlog = folder + "-backlog"
        try FileManager.default.createDirectory(atPath: backlog, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: backlog) }

        // `ingest --every` starts the cluster and stays.
        let ingest = try CLIProcess.start(["ingest", "--every", "1h", "--data-dir", folder, backlog])
        #expect(ingest.waitForStderr("ingest: 0 files", timeout: 120), "\(ingest.stderrSoFar)")
        #expect(ingest.stderrSoFar.contains("embedded PostgreSQL in"))
        let (serve, port) = try CLIProcess.startServe(["--data-dir", folder])
        #expect(serve.stderrSoFar.contains("using the embedded PostgreSQL already running"))

        ingest.signal(SIGTERM)
        #expect(ingest.wait().status == 0)
        #expect(Self.serverRuns(folder), "the ingest that started the cluster must not stop it under serve")
        #expect(try HTTPTestClient.request(port: port, method: "GET", path: "/healthz").status == 200)
        let stored = try HTTPTestClient.request(port: port, method: "POST", path: "/",
                                                headers: [("Content-Type", "application/json")],
                                                body: Bodies.fixture("contract-example.json"))
        #expect(stored.status == 200, "\(stored.bodyText)")

        serve.signal(SIGTERM)
        #expect(serve.wait().status == 0)
        #expect(Self.stopped(folder), "the last user leaves: the cluster stops")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/users").isEmpty)
    }

    @Test("a user killed with SIGKILL does not count: the next command to leave stops the cluster")
    func crashedUserDoesNotCount() throws {
        let folder = Self.folder("crash")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let backlog = folder + "-backlog"
        try FileManager.default.createDirectory(atPath: backlog, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: backlog) }

        let ingest = try CLIProcess.start(["ingest", "--every", "1h", "--data-dir", folder, backlog])
        #expect(ingest.waitForStderr("ingest: 0 files", timeout: 120), "\(ingest.stderrSoFar)")
        ingest.signal(SIGKILL)
        #expect(ingest.wait().status == 128 + SIGKILL)
        // Nobody stopped it, and the dead user's file is still there.
        #expect(Self.serverRuns(folder))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/users").count == 1)

        let status = try CLIProcess.run(["migrate", "--status", "--data-dir", folder])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr.contains("already running"))
        #expect(Self.stopped(folder), "the dead user's lock is gone with it: migrate was the last live user")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/users").isEmpty)
    }

    @Test("a --data-dir with spaces works, the folder is 0700 and the password file 0600; the printed psql line connects")
    func privateFolderWithSpaces() throws {
        let folder = Self.folder("with spaces") + "/data dir"
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: folder).deletingLastPathComponent().path) }
        let (serve, port) = try CLIProcess.startServe(["--data-dir", folder])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait()
        }
        let stored = try HTTPTestClient.request(port: port, method: "POST", path: "/",
                                                headers: [("Content-Type", "application/json")],
                                                body: Bodies.fixture("contract-example.json"))
        #expect(stored.status == 200, "\(stored.bodyText)")

        let folderMode = try #require(FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int)
        #expect(folderMode & 0o777 == 0o700)
        let passwordMode = try #require(FileManager.default.attributesOfItem(atPath: folder + "/password")[.posixPermissions] as? Int)
        #expect(passwordMode & 0o777 == 0o600)

        // The psql line as printed, run by a shell.
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.contains("connect with: psql ") })
        let printed = String(line[try #require(line.range(of: "connect with: psql ")).upperBound...])
        let psql = "\(try Self.psqlPath()) -X -A -t -c 'SELECT count(*) FROM health_store.samples' " + printed
        let run = try CLIProcess.runProgram("/bin/sh", ["-c", psql])
        #expect(run.status == 0, "\(psql): \(run.stderr)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    }

    /// psql from the PostgreSQL installation the tests run.
    static func psqlPath() throws -> String {
        for candidate in ["/usr/bin/psql"] + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .map({ "/usr/lib/postgresql/\($0)/bin/psql" }) where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw MissingProgram()
    }

    struct MissingProgram: Error, CustomStringConvertible {
        var description: String { "psql not found in /usr/bin or /usr/lib/postgresql/*/bin; install the Debian package postgresql-client" }
    }
}
