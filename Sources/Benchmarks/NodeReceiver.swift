import Foundation
import Harness

/// The reference's Node receiver (`examples/receiver-node/server.mjs`: node:http, node:sqlite)
/// over the same bodies: made runnable from the reference page by scripts/node-receiver.sh at
/// benchmark time, started on a loopback port with a token, sent the bodies one at a time.
enum NodeReceiver {
    /// What one run measured.
    struct Outcome {
        var timings: Timings
        /// `node --version`.
        var version: String
        /// Node's peak resident size over the run (VmHWM), KiB.
        var peakKiB: Int
    }

    /// Runs the receiver over the bodies and proves it stored them (every answer, `/stats`
    /// and the SQLite file's own counts); nil and the reason when Node cannot be had here.
    static func run(_ bodies: ReceiverBodies) throws -> (outcome: Outcome?, skipped: String?) {
        guard let script = scriptPath() else { return (nil, "scripts/node-receiver.sh not found (run from the repository)") }
        let folder = NSTemporaryDirectory() + "hw-bench-node-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let setup = try CLIProcess.runProgram("/bin/bash", [script, folder])
        if setup.status == 2 { return (nil, setup.stderr.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard setup.status == 0, let node = setup.stdout.split(separator: "\n").last.map(String.init) else {
            throw BenchmarkError.usage("scripts/node-receiver.sh failed (exit \(setup.status)): \(setup.stderr)")
        }
        let version = try CLIProcess.runProgram(node, ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let token = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 16) }.joined()
        let database = folder + "/samples.db"
        let server = try CLIProcess.startProgram(node, [folder + "/server.mjs"], environment: [
            "PORT": "0", "HOST": "127.0.0.1", "DB_PATH": database, "RECEIVER_TOKEN": token,
        ], directory: folder)
        var stopped = false
        defer { if !stopped { server.signal(SIGKILL); _ = server.wait() } }
        guard server.waitForStdout("listening on", timeout: 30),
              let match = server.stdoutSoFar.firstMatch(of: /listening on [^\n]*:(\d+)/), let port = Int(match.1) else {
            throw BenchmarkError.usage("the Node receiver did not start: \(server.stderrSoFar.prefix(500))")
        }
        let timings = try post(bodies, port: port, token: token, receiver: "Node") { index, answer in
            let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            try bodies.check(index: index, inserted: counts?["inserted"] as? Int, duplicates: counts?["duplicates"] as? Int, receiver: "Node")
        }
        let peak = peakResidentKiB(of: server.pid)
        let stats = try HTTPTestClient.request(port: port, path: "/stats", timeout: 60)
        let answered = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
        server.signal(SIGTERM)
        _ = server.wait()
        stopped = true

        // The file itself, read by another process after the server is gone.
        let expected = [bodies.distinct, bodies.distinct, bodies.distinct, bodies.bodies.count,
                        bodies.inserted.reduce(0, +), bodies.duplicates.reduce(0, +)]
        let count = try CLIProcess.runProgram(node, ["-e", """
            const { DatabaseSync } = require("node:sqlite");
            const db = new DatabaseSync(process.argv[1], { readOnly: true });
            const one = (sql) => Object.values(db.prepare(sql).get())[0];
            console.log([one("SELECT count(*) FROM samples"), one("SELECT count(DISTINCT uuid) FROM samples"),
              one("SELECT count(*) FROM samples WHERE json_extract(payload, '$.uuid') = uuid"),
              one("SELECT count(*) FROM deliveries"), one("SELECT sum(inserted) FROM deliveries"),
              one("SELECT sum(duplicates) FROM deliveries")].join(" "));
            """, database])
        let found = count.stdout.split(whereSeparator: \.isWhitespace).map { Int($0) ?? -1 }
        guard count.status == 0, found == expected else {
            throw BenchmarkError.usage("Node's SQLite file holds \(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) \(count.stderr) (samples, distinct uuids, payloads carrying their uuid, deliveries, inserted, duplicates); expected \(expected.map(String.init).joined(separator: " "))")
        }
        guard answered?["samples"] as? Int == bodies.distinct, answered?["deliveries"] as? Int == bodies.bodies.count else {
            throw BenchmarkError.usage("Node's /stats answered \(stats.bodyText); expected \(bodies.distinct) samples in \(bodies.bodies.count) deliveries")
        }
        return (Outcome(timings: timings, version: version, peakKiB: peak), nil)
    }

    /// scripts/node-receiver.sh of this checkout: from the current folder (make runs there),
    /// else from the folders above the benchmark binary (`.build/<triple>/release`).
    static func scriptPath() -> String? {
        var folders = [FileManager.default.currentDirectoryPath]
        var up = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            up = up.deletingLastPathComponent()
            folders.append(up.path)
        }
        return folders.map { $0 + "/scripts/node-receiver.sh" }.first { FileManager.default.fileExists(atPath: $0) }
    }
}
