import DemoData
import Foundation
import Harness
import Hashing
import HealthPayload
import Postgres
import Warehouse

extension UIBenchmark {
    /// One batch through the write path (so `health.freshness` has a last batch), and a token
    /// for the timed person.
    func prepare(_ url: String) throws -> String {
        let pool = PostgresPool(connectionString: url, maxConnections: 1)
        defer { pool.close() }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let sample = DemoSample(uuid: UUID().uuidString, type: .steps, source: ViewsBenchmark.phone, start: now - 60_000, end: now,
                                value: "42", offsetMinutes: 60)
        let body = DemoEncoder.json(DemoEnvelope(exportId: UUID().uuidString, generatedAt: now, windowStart: now - 60_000, windowEnd: now,
                                                 occasionStart: now - 3_600_000, occasionEnd: now, offsetMinutes: 60), [sample])
        guard case .batches(let batches) = try PayloadDecoder.decode(body, format: .json) else { throw BenchmarkError.usage("probe") }
        try BatchStore(pool: pool).store(batches, person: ViewsBenchmark.person, origin: .http, bodySHA256: SHA256.hash(body))
        return try TokenStore(pool: pool).create(person: ViewsBenchmark.person, label: "ui benchmark").token
    }

    /// Signs in as the page's form does; the session id of the cookie.
    func signIn(port: Int, token: String) throws -> String {
        let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/ui/sign-in", headers: [
            ("Origin", "http://127.0.0.1"), ("Content-Type", "application/x-www-form-urlencoded"),
        ], body: Array("token=\(token)".utf8), timeout: 120)
        guard answer.status == 200, let cookie = answer.header("Set-Cookie"),
              let id = cookie.firstMatch(of: /^hw_session=([A-Za-z0-9_-]+);/)?.1 else {
            throw BenchmarkError.usage("sign-in answered \(answer.status)")
        }
        return String(id)
    }

    /// Two warm-up requests, then `runs` timed ones, accepting gzip as a browser does; the
    /// last answer's body.
    func timeRequests(port: Int, path: String, cookie: String?) throws -> (timings: Timings, body: [UInt8]) {
        var timings = Timings()
        var body: [UInt8] = []
        var headers: [(name: String, value: String)] = [("Accept-Encoding", "gzip, deflate")]
        if let cookie { headers.append(("Cookie", "hw_session=\(cookie)")) }
        for run in 0..<(runs + 2) {
            let started = monotonicSeconds()
            let answer = try HTTPTestClient.request(port: port, path: path, headers: headers, timeout: 120)
            guard answer.status == 200 else { throw BenchmarkError.usage("GET \(path) answered \(answer.status)") }
            if run >= 2 { timings.milliseconds.append((monotonicSeconds() - started) * 1000) }
            body = answer.body
        }
        return (timings, body)
    }

    /// The page's bytes before compression, and by section (`<section id=…>` up to the next), largest first.
    func weights(port: Int, cookie: String) throws -> (total: Int, sections: String) {
        let page = try HTTPTestClient.request(port: port, path: Self.path, headers: [("Cookie", "hw_session=\(cookie)")], timeout: 120).bodyText
        var sizes: [(String, Int)] = []
        let parts = page.components(separatedBy: "<section id=\"")
        for part in parts.dropFirst() {
            let name = String(part.prefix { $0 != "\"" })
            sizes.append((name, part.utf8.count + 13))
        }
        let sections = sizes.sorted { $0.1 > $1.1 }.map { "\($0.0) \(ViewsBenchmark.grouped($0.1))" }.joined(separator: ", ")
        return (page.utf8.count, sections + ", the rest \(ViewsBenchmark.grouped(parts[0].utf8.count))")
    }

    /// The baseline: the one query a dashboard sends for the same 365 days, as the reader.
    func timeQuery(_ connection: PostgresConnection) throws -> Timings {
        var timings = Timings()
        for run in 0..<(runs + 2) {
            let started = monotonicSeconds()
            _ = try connection.query("""
                SELECT * FROM health.daily_summary WHERE person = $1 AND day BETWEEN health.today($1) - 364 AND health.today($1)
                """, [ViewsBenchmark.person])
            if run >= 2 { timings.milliseconds.append((monotonicSeconds() - started) * 1000) }
        }
        return timings
    }

    /// First render in headless Chromium, by Tests/DeploymentTests/ui/render_time.py.
    func renderInChromium(port: Int, token: String) throws -> String {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/DeploymentTests/ui")
        let run = try CLIProcess.runProgram("/usr/bin/env", ["python3", folder.appendingPathComponent("render_time.py").path], environment: [
            "HW_UI_URL": "http://127.0.0.1:\(port)", "HW_UI_TOKEN": token, "HW_UI_PATH": Self.path, "HW_UI_RUNS": "\(runs)",
            "PYTHONPATH": folder.path, "SE_AVOID_STATS": "true",
        ])
        // Numbers as NSNumber: Linux's Foundation does not bridge a whole JSON array of them to [Double].
        guard run.status == 0, let parsed = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: [Any]] else {
            return "headless Chromium: not measured (exit \(run.status)): \(run.stderr.suffix(600))"
        }
        let loads = parsed.mapValues { $0.compactMap { ($0 as? NSNumber)?.doubleValue } }
        func p50(_ key: String) -> Double { Timings(milliseconds: loads[key] ?? []).percentile(0.5) }
        return String(format: "headless Chromium, p50 of %d loads: first contentful paint %.0f ms (goal <= 500), response end %.0f ms, "
                      + "DOMContentLoaded %.0f ms, load %.0f ms; HTML %.0f bytes, stylesheet and icon %.0f bytes (cached after the first load)",
                      loads["firstContentfulPaint"]?.count ?? 0, p50("firstContentfulPaint"), p50("responseEnd"), p50("domContentLoaded"),
                      p50("load"), p50("htmlBytes"), loads["resourceBytes"]?.max() ?? 0)
    }

    /// serve's own `ms` and `db_ms` of the timed 200 answers to `path` (after the two warm-ups,
    /// before the browser's), from its log.
    func servedMilliseconds(log: String, path: String) -> (total: Timings, database: Timings) {
        var total = Timings(), database = Timings()
        var seen = 0
        for line in log.split(separator: "\n") where line.contains(" http.request ") && line.contains(" path=\(path) ")
            && line.contains(" status=200 ") {
            seen += 1
            guard seen > 2, seen <= runs + 2 else { continue }
            func field(_ name: String) -> Double? {
                guard let range = line.range(of: " \(name)=") else { return nil }
                return Double(line[range.upperBound...].prefix { $0 == "." || $0.isNumber })
            }
            if let ms = field("ms") { total.milliseconds.append(ms) }
            if let ms = field("db_ms") { database.milliseconds.append(ms) }
        }
        return (total, database)
    }
}
