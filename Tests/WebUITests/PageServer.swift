import Foundation
import Harness
import Postgres
import TestSupport
import Warehouse

/// A real `serve` on a loopback port over a test database, and the requests a browser sends
/// it, over real HTTP (`HTTPTestClient` sends `Host: 127.0.0.1`, so a same-origin POST says
/// `Origin: http://127.0.0.1`).
final class PageServer {
    let database: TestDatabase
    let serve: CLIProcess.Running
    let port: Int
    /// Tokens of the same database, minted, listed and revoked as the CLI does.
    let tokens: TokenStore
    private let pool: PostgresPool

    init(_ database: TestDatabase, arguments: [String] = []) throws {
        self.database = database
        pool = PostgresPool(connectionString: database.connectionString, maxConnections: 1)
        tokens = TokenStore(pool: pool)
        (serve, port) = try CLIProcess.startServe(["--database-url", database.connectionString] + arguments)
    }

    deinit {
        serve.signal(SIGTERM)
        _ = serve.wait()
        pool.close()
    }

    func get(_ path: String, cookie: String? = nil, headers: [(name: String, value: String)] = []) throws -> HTTPTestResponse {
        try HTTPTestClient.request(port: port, path: path, headers: headers + (cookie.map { [("Cookie", "hw_session=\($0)")] } ?? []))
    }

    /// A form POST as the page's own form sends it (`origin` nil: none sent).
    func post(_ path: String, form: String = "", cookie: String? = nil, origin: String? = "http://127.0.0.1",
              headers extra: [(name: String, value: String)] = []) throws -> HTTPTestResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/x-www-form-urlencoded")] + extra
        if let origin { headers.append(("Origin", origin)) }
        if let cookie { headers.append(("Cookie", "hw_session=\(cookie)")) }
        return try HTTPTestClient.request(port: port, method: "POST", path: path, headers: headers, body: Array(form.utf8))
    }

    /// Signs in with `token`; the response and the session id its cookie carries (nil: no cookie set).
    func signIn(_ token: String) throws -> (response: HTTPTestResponse, session: String?) {
        let response = try post("/ui/sign-in", form: "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        let session = response.header("Set-Cookie")?.firstMatch(of: /^hw_session=([A-Za-z0-9_-]+);/).map { String($0.1) }
        return (response, session)
    }

    /// Stores a healthd batch of step samples for the token's person (none: `default`).
    func storeSteps(token: String?, source: String, values: [(start: String, steps: Int)]) throws {
        let samples = values.map { Bodies.quantity(uuid: UUID().uuidString, source: source, start: $0.start, value: "\($0.steps)") }
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let response = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers,
                                                  body: Bodies.json(samples: samples, exportId: UUID().uuidString))
        guard response.status == 200 else { throw PageTestError("storing steps answered \(response.status): \(response.bodyText)") }
    }
}

struct PageTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// An instant `daysAgo` days before now, in the reference's shape with `Z` (its day is the UTC date).
func utcStamp(daysAgo: Double) -> String {
    var t = time_t(Date().addingTimeInterval(-daysAgo * 86_400).timeIntervalSince1970)
    var parts = tm()
    gmtime_r(&t, &parts)
    return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.000Z", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                  parts.tm_hour, parts.tm_min, parts.tm_sec)
}
