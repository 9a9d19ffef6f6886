import Dispatch
import Foundation
import HTTPServer
import Postgres
import Warehouse

/// The page for people without Grafana (`GET /ui`, docs/ui.md): a person's days in a
/// browser, read from the `health` views through a pool whose sessions are role
/// `health_reader` and read-only, so the page cannot write. Signing in, sessions and the
/// per-address limit on failed sign-ins use the receiver's own pool, for the tokens only.
public final class WebUI: Sendable {
    let reader: PostgresPool
    let tokens: TokenStore
    let configuration: WebUIConfiguration

    /// The cookie carrying the session id.
    static let cookieName = "hw_session"

    /// What every connection of the reader pool is set to before its first query
    /// (`ViewReading.sessionSettings`: role `health_reader`, read-only, a statement bound).
    public static var readerSessionSettings: [(name: String, value: String)] { ViewReading.sessionSettings }

    /// A pool for the page over `connectionString`, its sessions set as `readerSessionSettings`.
    /// Use it for nothing else.
    public static func readerPool(connectionString: String, maxConnections: Int = 3) -> PostgresPool {
        ViewReading.pool(connectionString: connectionString, maxConnections: maxConnections)
    }

    public init(tokenPool: PostgresPool, readerPool: PostgresPool, configuration: WebUIConfiguration) {
        self.reader = readerPool
        self.tokens = TokenStore(pool: tokenPool)
        self.configuration = configuration
    }

    /// Whether the reader pool works: nil when it reads as `health_reader`, else why not (a
    /// message for the log, with the fix).
    public func checkReader() -> String? {
        do {
            let role: String? = try reader.withConnection { try $0.query("SELECT current_user::text").first?.decode(0) }
            return role == "health_reader" ? nil : "the page's connections run as \(role ?? "?"), not health_reader"
        } catch {
            return "cannot read as health_reader (\(error)): grant it to the login serve uses, e.g. "
                + "GRANT health_reader TO <login> (deploy/postgres/owner-role.sh does this in compose)"
        }
    }

    /// The page's answer to a request under `/ui`; nil for any other path, which stays the receiver's.
    public func admit(_ head: HTTPRequestHead) -> HTTPHeadDecision? {
        guard let route = UIRoute.match(head.path) else { return nil }
        let method = head.method.uppercased()
        guard route.methods.contains(method) else {
            let allow = route.methods.joined(separator: ", ")
            return .reject(respond(Answer(status: 405, html: SignInPage.notice(title: "Not here", message: "This page answers \(allow)."),
                                          headers: [("Allow", allow)]), head: head, started: DispatchTime.now()))
        }
        return .accept(maxBodyBytes: method == "POST" ? 8 * 1024 : 0) { [self] request in
            let started = DispatchTime.now()
            let answer = answer(route, method: method, request: request)
            return respond(answer, head: head, started: started)
        }
    }

    /// What a request comes to before it is an HTTP response.
    struct Answer {
        var status = 200
        var html = ""
        var headers: [(name: String, value: String)] = []
        var person: String?
        /// A non-HTML body (the stylesheet, the icon), with its content type in `headers`.
        var body: [UInt8]?
        /// Time spent reading the views, for the log line.
        var databaseMilliseconds = 0.0
    }

    func answer(_ route: UIRoute, method: String, request: HTTPRequest) -> Answer {
        switch route {
        case .stylesheet:
            return Answer(headers: [("Content-Type", "text/css; charset=utf-8")], body: Array(Assets.stylesheet.utf8))
        case .icon:
            return Answer(headers: [("Content-Type", "image/svg+xml")], body: Array(Assets.icon.utf8))
        case .signIn where method == "POST":
            return signIn(request)
        case .signOut:
            return signOut(request)
        case .notFound:
            return Answer(status: 404, html: SignInPage.notice(title: "Not found", message: "There is no such page."))
        case .signIn, .days, .workout:
            return show(route, request: request)
        }
    }

    /// The page of a route for whoever is asking, or the sign-in form.
    func show(_ route: UIRoute, request: HTTPRequest) -> Answer {
        do {
            switch try viewer(request.headers) {
            case .signedOut(let message):
                return Answer(html: SignInPage.render(message: message, hint: try noTokenHint()))
            case .person(let person, let session):
                var answer = try render(route == .signIn ? .days(30) : route, person: person, signOut: session != nil)
                answer.person = person
                return answer
            }
        } catch {
            return failed(error)
        }
    }

    func render(_ route: UIRoute, person: String, signOut: Bool) throws -> Answer {
        switch route {
        case .workout(let uuid):
            guard let detail = try reader.withConnection({ try PageReader(connection: $0).workout(person: person, uuid: uuid) }) else {
                return Answer(status: 404, html: SignInPage.notice(title: "No such workout", message: "You have no workout with that id.",
                                                                   signOut: signOut))
            }
            return Answer(html: WorkoutPage(detail: detail).render(person: person, signOut: signOut))
        case .days(let days):
            let started = DispatchTime.now()
            let data = try reader.withConnection { try PageReader(connection: $0).daysPage(person: person, dayCount: days) }
            let read = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
            return Answer(html: DaysPage(data, period: days).render(signOut: signOut), databaseMilliseconds: read)
        default:
            return Answer(status: 404, html: SignInPage.notice(title: "Not found", message: "There is no such page."))
        }
    }

    /// Database trouble: `503`, the reason logged (never shown: it may name the server).
    func failed(_ error: any Error) -> Answer {
        Log.event("ui.failed", ["error": "\(error)"])
        return Answer(status: 503, html: SignInPage.notice(title: "Try again shortly",
                                                           message: "The warehouse's database did not answer; nothing was changed."),
                      headers: [("Retry-After", "30")])
    }
}
