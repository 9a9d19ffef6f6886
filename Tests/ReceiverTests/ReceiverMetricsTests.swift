import Foundation
import HTTPServer
import Receiver
import Testing
import TestSupport

/// What `/metrics` renders, checked by `promtool` (Debian's `prometheus`): the route families,
/// label escaping, histogram buckets.
@Suite("Receiver metrics")
struct ReceiverMetricsTests {
    @Test("raw paths never become labels: each request counts under its fixed route family", arguments: [
        ("POST", "/", "healthd"), ("POST", "/anything/at/all", "healthd"), ("GET", "/healthz", "healthz"), ("GET", "/stats", "stats"),
        ("GET", "/ui", "ui"), ("POST", "/ui/sign-in", "ui"), ("POST", "/v1/device/apple/workouts", "stridee_workout"),
        ("POST", "/v1/accounts/alice/apple/wellness", "stridee_wellness"), ("PUT", "/v1/device/connections/apple", "stridee_connection"),
        ("POST", "/hae", "hae"), ("GET", "/hae", "hae"), ("POST", "/hae/", "healthd"),
        ("GET", "/wp-login.php", "other"), ("DELETE", "/", "other"), ("GET", "/uiX", "other"),
    ])
    func routeFamilies(method: String, path: String, family: String) {
        #expect(RouteFamily.of(method: method, path: path).rawValue == family)
    }

    @Test("a person's name with quotes, backslashes and a newline is escaped, and promtool accepts the whole scrape")
    func escapingAndPromtool() throws {
        let metrics = ReceiverMetrics(version: "test", schema: "0061", pool: nil, perPerson: true)
        let person = "a \"quoted\" \\ name\nwith a newline"
        metrics.recordStored(.healthdJSON, person: person, inserted: 3)
        metrics.answered(HTTPAnswered(method: "POST", path: "/x?y", status: 200, seconds: 0.02, bodyBytes: 10, byServer: false))
        metrics.answered(HTTPAnswered(method: "POST", path: "/", status: 413, seconds: 0.001, bodyBytes: 0, byServer: true))
        metrics.answered(HTTPAnswered(method: "POST", path: "/", status: 503, seconds: 0.001, bodyBytes: 0, byServer: true))
        let text = metrics.registry.render()
        #expect(text.contains(#"person="a \"quoted\" \\ name\nwith a newline""#))
        #expect(text.contains(#"health_warehouse_http_request_duration_seconds_bucket{route="healthd",le="0.001"} 2"#), "413 and 503 took 1 ms")
        #expect(text.contains(#"health_warehouse_http_request_duration_seconds_bucket{route="healthd",le="0.01"} 2"#))
        #expect(text.contains(#"health_warehouse_http_request_duration_seconds_bucket{route="healthd",le="0.025"} 3"#))
        #expect(text.contains(#"health_warehouse_http_request_duration_seconds_count{route="healthd"} 3"#))
        #expect(text.contains(#"health_warehouse_refusals_total{reason="too_large"} 1"#))
        #expect(text.contains(#"health_warehouse_unavailable_total{cause="body_budget"} 1"#))
        #expect(text.contains(#"health_warehouse_refusals_total{reason="database"} 0"#), "the budget's 503 is no database refusal")
        let file = NSTemporaryDirectory() + "hw-metrics-\(getpid()).txt"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let check = try CLIProcess.runProgram("/bin/sh", ["-c", "promtool check metrics < \(file)"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }
}
