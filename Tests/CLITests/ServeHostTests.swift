import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// `serve` answers only to the host names it serves (docs/receiver.md, "Host names"): a web page
/// that points its own name at this machine (DNS rebinding) reaches nothing.
@Suite("serve and the Host header")
struct ServeHostTests {
    /// Every kind of request `serve` routes: the page, its sign-in, the health check, the counts,
    /// a healthd batch on two paths, the Stridee paths, and a path nobody routes.
    static func requests(token: String?) -> [(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8])] {
        let auth: [(name: String, value: String)] = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        let json: [(name: String, value: String)] = [("Content-Type", "application/json")] + auth
        let batch = Bodies.json(samples: [Bodies.quantity(uuid: UUID().uuidString, start: "2026-10-01T08:00:00.000+02:00", value: "42")])
        let form = Array("token=\(token ?? "hw_guess")".utf8)
        return [
            ("GET", "/ui", auth, []), ("GET", "/ui/days/30", auth, []),
            ("POST", "/ui/sign-in", [("Content-Type", "application/x-www-form-urlencoded")], form),
            ("GET", "/healthz", [], []), ("GET", "/stats", auth, []),
            ("POST", "/", json, batch), ("POST", "/any/path", json, batch),
            ("PUT", "/v1/device/connections/apple", auth, []),
            ("POST", "/v1/device/apple/workouts", json, Array(StrideeBody.workout().utf8)),
            ("POST", "/v1/device/apple/wellness", json, Array(StrideeBody.wellness([StrideeBody.item()]).utf8)),
            ("GET", "/nothing", auth, []),
        ]
    }

    /// Names a rebinding page would send, or that merely look like served ones.
    static func foreignHosts(port: Int) -> [String] {
        ["evil.example:\(port)", "evil.example", "127.0.0.1.nip.io:\(port)", "localhost.evil.example", "health.example.net.evil.example",
         "sub.health.example.net", "127.0.0.1:x", "[::1", "evil.example:\(port):\(port)"]
    }

    /// Stored rows of every kind a request above could write.
    static func storedRows(_ db: TestDatabase) throws -> Int {
        try db.scalar("""
            SELECT (SELECT count(*) FROM health_store.samples) + (SELECT count(*) FROM health_store.deliveries)
                 + (SELECT count(*) FROM health_store.connections) + (SELECT count(*) FROM health_store.wellness_items)
                 + (SELECT count(*) FROM health_store.stridee_workouts)
            """, as: Int.self) ?? -1
    }

    @Test("a foreign Host gets 421 on every path, with no token minted or with one, and nothing is stored; the page's content never shows",
          arguments: [false, true])
    func foreignHostRefused(withToken: Bool) throws {
        try TestPostgres.withDatabase { db in
            let token = withToken ? try CLIProcess.run(["token", "create", "--person", "me", "--database-url", db.connectionString])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines) : nil
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString, "--host", "Health.Example.NET"])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            for host in Self.foreignHosts(port: port) {
                for request in Self.requests(token: token) {
                    let answer = try HTTPTestClient.request(port: port, method: request.method, path: request.path,
                                                            headers: [("Host", host), ("Origin", "http://\(host)")] + request.headers,
                                                            body: request.body)
                    // Before: 200 with the whole page for /ui, and the batch stored.
                    #expect(answer.status == 421, "\(host) \(request.method) \(request.path): \(answer.status) \(answer.bodyText.prefix(200))")
                    #expect(!answer.bodyText.contains("<html"), "\(host) \(request.path)")
                }
            }
            #expect(try Self.storedRows(db) == 0)
            #expect(serve.stderrSoFar.contains("http.misdirected method=GET path=/ui host=evil.example:\(port)"), "\(serve.stderrSoFar.suffix(2000))")
        }
    }

    @Test("IP addresses, localhost and the --host names are served, in any case, with any port or a trailing dot; no Host at all (HTTP/1.0) too")
    func servedHosts() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString, "--host", "health.example.net",
                                                           "--host", "warehouse"])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let hosts = ["127.0.0.1:\(port)", "127.0.0.1", "[::1]:\(port)", "10.1.2.3:8080", "[2001:db8::1]", "localhost:\(port)",
                         "LocalHost", "localhost.", "health.example.net", "HEALTH.example.net:443", "health.example.net.", "warehouse:9464"]
            for (i, host) in hosts.enumerated() {
                #expect(try HTTPTestClient.request(port: port, path: "/healthz", headers: [("Host", host)]).status == 200, "\(host)")
                let page = try HTTPTestClient.request(port: port, path: "/ui", headers: [("Host", host)])
                #expect(page.status == 200 && page.bodyText.contains("Signed in as <strong>default</strong>"), "\(host)")
                let batch = Bodies.json(samples: [Bodies.quantity(uuid: UUID().uuidString, start: "2026-10-01T08:\(10 + i):00.000+02:00", value: "1")],
                                        exportId: UUID().uuidString)
                let stored = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Host", host), ("Content-Type", "application/json")],
                                                        body: batch)
                #expect(stored.status == 200, "\(host): \(stored.bodyText)")
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == hosts.count)
            let connection = try HTTPTestConnection(port: port)
            defer { connection.close() }
            try connection.send(Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
            #expect(try connection.readResponse(timeout: 10).status == 200)
        }
    }

    @Test("the metrics listener keeps the same rule: a foreign Host is 421, an address or a --host name is served")
    func metricsListener() throws {
        try TestPostgres.withDatabase { db in
            let (serve, _, metricsPort) = try ServeMetricsTests.startServe(db, ["--host", "warehouse"])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            #expect(try HTTPTestClient.request(port: metricsPort, path: "/metrics", headers: [("Host", "evil.example:\(metricsPort)")]).status == 421)
            #expect(try HTTPTestClient.request(port: metricsPort, path: "/metrics", headers: [("Host", "warehouse:9464")]).status == 200)
            #expect(try HTTPTestClient.request(port: metricsPort, path: "/metrics").status == 200)
        }
    }

    @Test("--host takes a bare host name: a port, a scheme, a path or nothing is a usage error naming it",
          arguments: ["evil.example:8080", "http://health.example.net", "health.example.net/ui", "", "a b", "*.example.net"])
    func badHostFlag(name: String) throws {
        let out = try CLIProcess.run(["serve", "--host", name])
        #expect(out.status == 64, "\(out.stderr)")
        #expect(out.stderr.contains("--host takes a host name"), "\(out.stderr)")
    }

    @Test("--host is in serve --help and in docs/receiver.md's flags and its \"Host names\" section")
    func documented() throws {
        let help = try CLIProcess.run(["serve", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--host NAME") && help.stdout.contains("421"), "\(help.stdout)")
        let receiver = try Repository.text("docs/receiver.md")
        #expect(receiver.contains("| `--host NAME` |") && receiver.contains("## Host names"))
    }
}
