import Foundation
import Testing
import TestSupport
import Warehouse

/// docs/stridee.md's curl block, run as written against a real `serve`: every request it shows
/// answers what the page says.
@Suite("docs/stridee.md curl examples")
struct StrideeDocsTests {
    /// The block after "### curl, one of each".
    static func curlBlock() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/stridee.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let heading = try #require(text.range(of: "### curl, one of each"))
        let open = try #require(text[heading.upperBound...].range(of: "```sh\n"))
        let close = try #require(text[open.upperBound...].range(of: "```"))
        return String(text[open.upperBound..<close.lowerBound])
    }

    @Test("connect, look, disconnect, push a workout and a batch from the device, and both from a backend: each answers as documented")
    func curlExamples() throws {
        try TestPostgres.withDatabase { db in
            let folder = NSTemporaryDirectory() + "hw-stridee-docs-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let mint = try CLIProcess.run(["token", "create", "--person", "me", "--database-url", db.connectionString])
            let token = mint.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(mint.status == 0 && token.hasPrefix("hw_"))
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            // The files the backend lines send.
            try Data(StrideeBody.workout(["uuid": #""0B0E1F2A-3C4D-4E5F-8A6B-7C8D9E0F1A2B""#]).utf8)
                .write(to: URL(fileURLWithPath: folder + "/workout.json"))
            try Data(StrideeBody.wellness([StrideeBody.item("fitness", ["vo2Max": "44"])]).utf8)
                .write(to: URL(fileURLWithPath: folder + "/wellness.json"))

            let block = try Self.curlBlock()
            #expect(block.contains("TOKEN=hw_…") && block.contains("URL=http://127.0.0.1:8080"))
            let script = block.replacingOccurrences(of: "TOKEN=hw_…", with: "TOKEN=\(token)")
                .replacingOccurrences(of: "URL=http://127.0.0.1:8080", with: "URL=http://127.0.0.1:\(port)")
            let path = folder + "/curl.sh"
            try Data("set -e\ncd '\(folder)'\n\(script)".utf8).write(to: URL(fileURLWithPath: path))
            let run = try CLIProcess.runProgram("/bin/bash", [path])
            #expect(run.status == 0, "\(run.stderr)")

            let out = run.stdout
            #expect(out.contains(#"{"provider":"apple","status":"active","connected_at":""#))
            #expect(out.contains(#"{"provider":"apple","status":"disconnected","connected_at":""#))
            #expect(out.components(separatedBy: #"{"status":"active","uuid":"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4"}"#).count == 2)
            #expect(out.contains(#"{"status":"active","uuid":"0B0E1F2A-3C4D-4E5F-8A6B-7C8D9E0F1A2B"}"#))
            #expect(out.contains(#"{"items":3,"status":"active"}"#) && out.contains(#"{"items":1,"status":"active"}"#))
            #expect(!out.contains("\"error\""), "\(out)")
            #expect(try db.scalar("SELECT route_points FROM health.workouts WHERE person = 'me' AND uuid = '5d1e8c1a-2f7b-4e0c-9a43-71c6b0f8d2e4'",
                                  as: Int.self) == 2)
            #expect(try db.scalar("SELECT count(*) FROM health.wellness WHERE person = 'me'", as: Int.self) == 4)
        }
    }
}
