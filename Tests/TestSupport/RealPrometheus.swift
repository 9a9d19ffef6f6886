import Foundation
import Harness
#if canImport(Glibc)
import Glibc
#endif

/// Debian's `prometheus`, started by a test on a loopback port with a scrape configuration
/// of its own, asked through its HTTP API; stopped (and its data removed) by `stop()`.
public final class RealPrometheus: @unchecked Sendable {
    public let port: Int
    let directory: String
    let process: CLIProcess.Running

    /// Starts Prometheus scraping `targets` (`127.0.0.1:PORT`) every `interval` (`"1s"`), with
    /// `ruleFiles` loaded; waits until it answers.
    public init(scraping targets: [String], interval: String = "1s", ruleFiles: [String] = []) throws {
        directory = NSTemporaryDirectory() + "hw-prometheus-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let rules = ruleFiles.isEmpty ? "" : "rule_files:\n" + ruleFiles.map { "  - \($0)\n" }.joined()
        let config = """
            global:
              scrape_interval: \(interval)
              evaluation_interval: \(interval)
            \(rules)scrape_configs:
              - job_name: health-warehouse
                static_configs:
                  - targets: [\(targets.map { "'\($0)'" }.joined(separator: ", "))]

            """
        try config.write(toFile: directory + "/prometheus.yml", atomically: true, encoding: .utf8)
        port = try Self.freePort()
        guard let binary = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].first(where: FileManager.default.isExecutableFile) else {
            throw CLIProcessError(message: "prometheus is not installed (Debian package prometheus; scripts/install-deps.sh installs it)")
        }
        process = try CLIProcess.startProgram(binary, ["--config.file=\(directory)/prometheus.yml", "--storage.tsdb.path=\(directory)/data",
                                                       "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn"])
        let deadline = monotonicNow() + 30
        while (try? HTTPTestClient.request(port: port, path: "/-/ready").status) != 200 {
            guard monotonicNow() < deadline else {
                process.signal(SIGKILL)
                throw CLIProcessError(message: "prometheus did not become ready: \(process.wait().stderr)")
            }
            sleepSeconds(0.2)
        }
    }

    /// Stops Prometheus and removes its data.
    public func stop() {
        process.signal(SIGTERM)
        _ = process.wait()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `GET /api/v1/query`: the answer's `data.result` (each `{metric, value}`), or throws with
    /// Prometheus' error.
    public func query(_ expression: String) throws -> [[String: Any]] {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: allowed) ?? expression
        let response = try HTTPTestClient.request(port: port, path: "/api/v1/query?query=" + encoded)
        let answer = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
        guard answer["status"] as? String == "success", let data = answer["data"] as? [String: Any] else {
            throw CLIProcessError(message: "prometheus refused \(expression): \(response.bodyText)")
        }
        return data["result"] as? [[String: Any]] ?? []
    }

    /// The value of each series `expression` gives, keyed by the values of `labels` joined with `/`.
    public func values(_ expression: String, by labels: [String]) throws -> [String: Double] {
        var out: [String: Double] = [:]
        for series in try query(expression) {
            let metric = series["metric"] as? [String: String] ?? [:]
            let value = (series["value"] as? [Any])?.last as? String
            out[labels.map { metric[$0] ?? "" }.joined(separator: "/")] = value.flatMap(Double.init)
        }
        return out
    }

    /// The alerts' states (`GET /api/v1/rules`): each alerting rule's name and state.
    public func alertStates() throws -> [String: String] {
        let response = try HTTPTestClient.request(port: port, path: "/api/v1/rules?type=alert")
        let answer = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] ?? [:]
        let groups = (answer["data"] as? [String: Any])?["groups"] as? [[String: Any]] ?? []
        var out: [String: String] = [:]
        for rule in groups.flatMap({ $0["rules"] as? [[String: Any]] ?? [] }) {
            if let name = rule["name"] as? String { out[name] = rule["state"] as? String }
        }
        return out
    }

    /// A TCP port free on loopback now (bound and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CLIProcessError(message: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
