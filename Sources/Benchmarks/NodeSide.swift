import Foundation
import Harness

/// The reference's Node receiver (`examples/receiver-node/server.mjs`: node:http, node:sqlite)
/// as a side of the one-client comparison: made runnable from the reference page by
/// scripts/node-receiver.sh at benchmark time, started on a loopback port with a token, sent the
/// same bodies one at a time; at the end its answers, `/stats` and the SQLite file's own counts
/// prove it stored them.
final class NodeSide: HistorySide {
    let name: String
    private let folder: String
    private let node: String
    private let server: CLIProcess.Running
    private let port: Int
    private let token: String
    private var stopped = false
    /// Bodies and samples sent over every phase, for the final checks.
    private var deliveries = 0, inserted = 0, duplicates = 0

    /// nil and the reason when Node cannot be had here.
    static func start() throws -> (side: NodeSide?, skipped: String?) {
        guard let script = scriptPath() else { return (nil, "scripts/node-receiver.sh not found (run from the repository)") }
        let folder = NSTemporaryDirectory() + "hw-bench-node-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        let setup = try CLIProcess.runProgram("/bin/bash", [script, folder])
        if setup.status == 2 { return (nil, setup.stderr.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard setup.status == 0, let node = setup.stdout.split(separator: "\n").last.map(String.init) else {
            throw BenchmarkError.usage("scripts/node-receiver.sh failed (exit \(setup.status)): \(setup.stderr)")
        }
        return (try NodeSide(folder: folder, node: node), nil)
    }

    private init(folder: String, node: String) throws {
        self.folder = folder
        self.node = node
        let version = try CLIProcess.runProgram(node, ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        name = "Node receiver (reference server.mjs, Node \(version), SQLite)"
        token = (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 16) }.joined()
        server = try CLIProcess.startProgram(node, [folder + "/server.mjs"], environment: [
            "PORT": "0", "HOST": "127.0.0.1", "DB_PATH": folder + "/samples.db", "RECEIVER_TOKEN": token,
        ], directory: folder)
        guard server.waitForStdout("listening on", timeout: 30),
              let match = server.stdoutSoFar.firstMatch(of: /listening on [^\n]*:(\d+)/), let port = Int(match.1) else {
            server.signal(SIGKILL)
            throw BenchmarkError.usage("the Node receiver did not start: \(server.stderrSoFar.prefix(500))")
        }
        self.port = port
    }

    deinit {
        if !stopped {
            server.signal(SIGKILL)
            _ = server.wait()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    func send(_ bodies: ReceiverBodies, index: Int) throws -> Double {
        let headers = [("Content-Type", bodies.contentType), ("Authorization", "Bearer \(token)")]
        let t0 = monotonicSeconds()
        let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers, body: bodies.bodies[index], timeout: 120)
        let ms = (monotonicSeconds() - t0) * 1000
        guard answer.status == 200 else { throw BenchmarkError.usage("Node: body \(index) answered \(answer.status): \(answer.bodyText.prefix(200))") }
        let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        try bodies.check(index: index, inserted: counts?["inserted"] as? Int, duplicates: counts?["duplicates"] as? Int, receiver: "Node")
        deliveries += 1
        inserted += bodies.inserted[index]
        duplicates += bodies.duplicates[index]
        return ms
    }

    /// SQLite keeps no statistics to refresh here.
    func settle() throws {}

    func finish(_ bodies: ReceiverBodies) throws -> String {
        let peak = peakResidentKiB(of: server.pid)
        let stats = try HTTPTestClient.request(port: port, path: "/stats", timeout: 60)
        let answered = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
        server.signal(SIGTERM)
        _ = server.wait()
        stopped = true

        // The file itself, read by another process after the server is gone.
        let expected = [bodies.distinct, bodies.distinct, bodies.distinct, deliveries, inserted, duplicates]
        let count = try CLIProcess.runProgram(node, ["-e", """
            const { DatabaseSync } = require("node:sqlite");
            const db = new DatabaseSync(process.argv[1], { readOnly: true });
            const one = (sql) => Object.values(db.prepare(sql).get())[0];
            console.log([one("SELECT count(*) FROM samples"), one("SELECT count(DISTINCT uuid) FROM samples"),
              one("SELECT count(*) FROM samples WHERE json_extract(payload, '$.uuid') = uuid"),
              one("SELECT count(*) FROM deliveries"), one("SELECT sum(inserted) FROM deliveries"),
              one("SELECT sum(duplicates) FROM deliveries")].join(" "));
            """, folder + "/samples.db"])
        let found = count.stdout.split(whereSeparator: \.isWhitespace).map { Int($0) ?? -1 }
        guard count.status == 0, found == expected else {
            throw BenchmarkError.usage("Node's SQLite file holds \(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) \(count.stderr) (samples, distinct uuids, payloads carrying their uuid, deliveries, inserted, duplicates); expected \(expected.map(String.init).joined(separator: " "))")
        }
        guard answered?["samples"] as? Int == bodies.distinct, answered?["deliveries"] as? Int == deliveries else {
            throw BenchmarkError.usage("Node's /stats answered \(stats.bodyText); expected \(bodies.distinct) samples in \(deliveries) deliveries")
        }
        return String(format: "peak RSS %.1f MiB", Double(peak) / 1024)
    }

    /// scripts/node-receiver.sh of this checkout.
    private static func scriptPath() -> String? {
        checkoutCandidates().map { $0 + "/scripts/node-receiver.sh" }.first { FileManager.default.fileExists(atPath: $0) }
    }
}
