import Foundation
import Postgres
import Testing
import TestSupport

/// Runs mcp/client.py (the official Python SDK) against `health-warehouse mcp` or a `serve
/// --mcp`, and sends single requests to `/mcp` on a raw connection.
enum MCPClient {
    /// What client.py printed: the initialize result and each step's outcome.
    struct Output {
        var json: [String: Any]

        var protocolVersion: String { (json["initialize"] as? [String: Any])?["protocolVersion"] as? String ?? "" }

        func step(_ index: Int) throws -> [String: Any] {
            let steps = try #require(json["steps"] as? [[String: Any]])
            return try #require(index < steps.count ? steps[index] : nil, "step \(index)")
        }

        /// A tool call's `structuredContent`, the call having succeeded.
        func structured(_ index: Int) throws -> [String: Any] {
            let step = try step(index)
            try #require(step["exception"] == nil && step["isError"] as? Bool == false, "step \(index): \(step)")
            return try #require(step["structuredContent"] as? [String: Any], "step \(index) has structuredContent")
        }

        /// The rows of a `{"person", "rows"}` result, its person checked.
        func rows(_ index: Int, person: String) throws -> [[String: Any]] {
            let content = try structured(index)
            #expect(content["person"] as? String == person, "step \(index) is \(person)'s")
            return try #require(content["rows"] as? [[String: Any]])
        }

        /// The listed tools: name, and whether each schema is there.
        func tools(_ index: Int) throws -> [(name: String, hasInputSchema: Bool, hasOutputSchema: Bool)] {
            try #require(try step(index)["tools"] as? [[String: Any]]).map {
                ($0["name"] as? String ?? "", ($0["inputSchema"] as? [String: Any])?["type"] as? String == "object",
                 ($0["outputSchema"] as? [String: Any])?["type"] as? String == "object")
            }
        }

        /// The text content says what the structured content says.
        func expectTextIsStructured(_ index: Int) throws {
            let text = MCPClient.text(try step(index))
            let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
            #expect(parsed == (try structured(index)) as NSDictionary, "step \(index): text and structuredContent differ")
        }
    }

    /// The first text content of a step.
    static func text(_ step: [String: Any]) -> String {
        ((step["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
    }

    /// Runs `health-warehouse mcp ARGUMENTS` under the SDK's stdio client.
    static func run(stdio arguments: [String], steps: [[String: Any]]) throws -> Output {
        try run(["transport": "stdio", "command": [CLIProcess.binaryPath, "mcp"] + arguments, "steps": steps])
    }

    /// Runs the SDK's Streamable HTTP client against `url` with `token`.
    static func run(http url: String, token: String, steps: [[String: Any]]) throws -> Output {
        try run(["transport": "http", "url": url, "token": token, "steps": steps])
    }

    static func run(_ plan: [String: Any]) throws -> Output {
        let path = NSTemporaryDirectory() + "hw-mcp-plan-\(getpid())-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: plan).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try CLIProcess.runProgram("/usr/bin/env", ["python3", Repository.url("Tests/DeploymentTests/mcp/client.py").path, path])
        try #require(run.status == 0, "client.py failed (is the SDK installed? scripts/install-deps.sh): \(run.stderr)")
        return Output(json: try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]))
    }

    /// A `POST /mcp` of `body` with a bearer `token` (none: no credential).
    static func post(port: Int, body: String, token: String?, extra: [(String, String)] = []) throws -> HTTPTestResponse {
        var headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try request(port: port, method: "POST", body: body, headers: headers + extra)
    }

    /// One request to `/mcp` on a fresh connection.
    static func request(port: Int, method: String, body: String?, headers: [(String, String)]) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(port: port)
        defer { connection.close() }
        let bytes = Array((body ?? "").utf8)
        var head = "\(method) /mcp HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(bytes.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        try connection.send(Array((head + "\r\n").utf8) + bytes)
        return try connection.readResponse()
    }
}

/// Tool rows against the same view read as SQL.
enum MCPCompare {
    /// Every row of `expected` (text, as PostgreSQL gives it) is the row of `got` at the same
    /// place, column by column: numbers to 1e-9 of their size, booleans, text.
    static func rows(_ got: [[String: Any]], _ expected: PostgresRows, _ label: String) throws {
        #expect(got.count == expected.count, "\(label): \(got.count) rows, the view has \(expected.count)")
        let columns = expected.columns
        for (index, row) in zip(got.indices, expected) {
            for (column, name) in columns.enumerated() {
                let want = row[column], have = got[index][name]
                #expect(same(have, want), "\(label) row \(index) \(name): \(String(describing: have)) vs the view's \(want ?? "NULL")")
            }
        }
    }

    static func same(_ have: Any?, _ want: String?) -> Bool {
        guard let want else { return have == nil || have is NSNull }
        if want == "t" || want == "f" { return (have as? Bool) == (want == "t") }
        if let number = Double(want), let value = (have as? NSNumber)?.doubleValue {
            return abs(number - value) <= 1e-9 * max(1, abs(number))
        }
        return (have as? String) == want
    }

    /// Midnight UTC of `YYYY-MM-DD`.
    static func date(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: text)
    }

    /// `YYYY-MM-DD` of an instant, in UTC.
    static func text(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }
}
