import Dispatch
import Foundation
import HealthPayload
import HTTPServer
import Postgres
import Receiver
import Synchronization
import Warehouse
import WebUI

/// MCP's Streamable HTTP transport at `/mcp` (`serve --mcp`): `POST` a JSON-RPC message and
/// get its answer as `application/json` (`202` with no body for notifications), the session
/// opened by `initialize` named in `Mcp-Session-Id` on every later request, `DELETE` ending
/// it, `GET` answered `405` (no server-sent stream: the server sends nothing unasked).
///
/// The person is the credential's (`Authorization: Bearer <token>`, or `default` while no
/// token exists and no proxy forwarded the request, as for batches). A session belongs to the
/// token that opened it and lives until that token is revoked or expires: the token is
/// checked on every request.
public final class MCPEndpoint: Sendable {
    /// The endpoint's path.
    public static let path = "/mcp"
    /// The largest message body taken.
    static let maxBodyBytes = 1_048_576
    /// The token id of a session opened while no token existed (real ids start at 1).
    static let noToken: Int64 = 0

    /// The server answering messages, once `start` gave it (`serve` makes it after migrating).
    private let server = Mutex<MCPServer?>(nil)
    let tokens: TokenStore
    let sessions: SessionStore
    /// The receiver's credential header (`--auth-header`), taken besides `Authorization: Bearer`.
    let credentials: ReceiverConfiguration

    /// An endpoint checking credentials on `tokenPool` (as `Authorization: Bearer <token>`, or
    /// in the receiver's own credential header), answering `503` until `start`. Sessions idle
    /// for 30 days are forgotten (the client then opens a new one).
    public init(tokenPool: PostgresPool, credentials: ReceiverConfiguration = ReceiverConfiguration(),
                sessions: SessionStore = SessionStore(idleSeconds: 30 * 86_400, lifetimeSeconds: 3_650 * 86_400)) {
        self.tokens = TokenStore(pool: tokenPool)
        self.credentials = credentials
        self.sessions = sessions
    }

    /// Answers messages with `server` from now on.
    public func start(_ server: MCPServer) {
        self.server.withLock { $0 = server }
    }

    /// Who is asking: a live token's person and id, or `default` with `noToken`.
    struct Credential {
        var person: String
        var tokenID: Int64
        var expiresAt: Date?
    }

    /// The answer to a request for `/mcp`; nil for any other path.
    public func admit(_ head: HTTPRequestHead) -> HTTPHeadDecision? {
        guard head.path == Self.path else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        switch decide(head) {
        case .answer(let status, let message, let headers, let person):
            return .reject(respond(head, status: status, body: Self.failure(message), headers: headers, person: person, started: started))
        case .readBody(let credential, let sessionID, let server):
            return .accept(maxBodyBytes: Self.maxBodyBytes) { [self] request in
                let started = DispatchTime.now().uptimeNanoseconds
                let (status, body, headers) = exchange(request.body, server: server, credential: credential, sessionID: sessionID)
                return respond(head, status: status, body: body, headers: headers, person: credential.person, started: started)
            }
        }
    }

    /// What the head of a request leads to.
    enum Decision {
        case answer(status: Int, message: String, headers: [(name: String, value: String)] = [], person: String? = nil)
        case readBody(Credential, sessionID: String?, server: MCPServer)
    }

    func decide(_ head: HTTPRequestHead) -> Decision {
        if let origin = head.headers["Origin"], !RequestParts.sameOrigin(origin: origin, host: head.headers["Host"]) {
            return .answer(status: 403, message: "Forbidden: a page of another origin may not call this server")
        }
        guard let server = server.withLock({ $0 }) else {
            return .answer(status: 503, message: "Service unavailable: the assistant's server is not ready", headers: [("Retry-After", "30")])
        }
        let method = head.method.uppercased()
        guard method == "POST" || method == "DELETE" else {
            return .answer(status: 405, message: "Method not allowed: POST a message, DELETE the session", headers: [("Allow", "POST, DELETE")])
        }
        let sessionID = head.headers["Mcp-Session-Id"]
        // The header names the revision initialize agreed on: only requests of a session carry one.
        if sessionID != nil, let version = head.headers["MCP-Protocol-Version"], !MCPServer.protocolVersions.contains(version) {
            return .answer(status: 400, message: "Bad Request: MCP-Protocol-Version \(version.prefix(40)) is not one of "
                           + MCPServer.protocolVersions.joined(separator: ", "))
        }
        let credential: Credential
        do {
            guard let found = try authenticate(head.headers) else {
                try endIfTokenDead(sessionID)
                return .answer(status: 401, message: "Unauthorized: send Authorization: Bearer <token> with a live token",
                               headers: [("WWW-Authenticate", "Bearer")])
            }
            credential = found
        } catch {
            Log.event("mcp.failed", ["error": "\(error)"])
            return .answer(status: 503, message: "Service unavailable: the database did not answer", headers: [("Retry-After", "30")])
        }
        if let sessionID {
            guard let session = sessions.session(sessionID), session.person == credential.person, session.tokenID == credential.tokenID else {
                return .answer(status: 404, message: "Session not found: initialize a new one", person: credential.person)
            }
            if method == "DELETE" {
                sessions.end(sessionID)
                return .answer(status: 200, message: "", person: credential.person)
            }
        } else if method == "DELETE" {
            return .answer(status: 400, message: "Bad Request: DELETE needs the Mcp-Session-Id to end", person: credential.person)
        }
        if let type = head.headers["Content-Type"], type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() != "application/json" {
            return .answer(status: 415, message: "Unsupported Media Type: send application/json", person: credential.person)
        }
        return .readBody(credential, sessionID: sessionID, server: server)
    }

    /// The live token's person (`Authorization: Bearer`, or the receiver's credential header),
    /// or `default` while no token was ever minted and no proxy forwarded the request; nil
    /// when refused.
    func authenticate(_ headers: HTTPHeaders) throws -> Credential? {
        let token = headers.only("Authorization").flatMap(ReceiverConfiguration.bearerToken)
            ?? headers.only(credentials.authHeader).flatMap(credentials.token(fromHeader:))
        if let token, case .live(let id, let person, let expiresAt) = try tokens.lookup(token: token) {
            return Credential(person: person, tokenID: id, expiresAt: expiresAt)
        }
        if try tokens.anyMinted() || headers.isForwarded { return nil }
        return Credential(person: PersonName.defaultPerson, tokenID: Self.noToken, expiresAt: nil)
    }

    /// A session whose token was revoked or expired (or, opened without one, whose server now
    /// has tokens) ends when a request names it.
    func endIfTokenDead(_ sessionID: String?) throws {
        guard let sessionID, let session = sessions.session(sessionID) else { return }
        if try !tokens.isLive(id: session.tokenID, person: session.person) { sessions.end(sessionID) }
    }

    /// Answers a message's body: status, body, headers. Without a session only `initialize` is
    /// taken, and its answer names the new session.
    func exchange(_ body: [UInt8], server: MCPServer, credential: Credential, sessionID: String?) -> (Int, JSONValue?, [(name: String, value: String)]) {
        let message: JSONValue
        do {
            message = try JSONValue.parse(body)
        } catch {
            return (400, JSONRPC.error(id: .null, code: JSONRPC.parseError, "Parse error: \(error.message)"), [])
        }
        guard sessionID == nil else {
            guard let answer = server.answer(message, person: credential.person) else { return (202, nil, []) }
            return (200, answer, [])
        }
        guard message["method"]?.stringValue == "initialize", message["id"] != nil else {
            return (400, Self.failure("Bad Request: send initialize first, then its Mcp-Session-Id with every request"), [])
        }
        let answer = server.answer(message, person: credential.person)
        let id = sessions.open(person: credential.person, tokenID: credential.tokenID, tokenExpiresAt: credential.expiresAt)
        return (200, answer, [("Mcp-Session-Id", id)])
    }

    /// A JSON-RPC error without an id, for refusals at the HTTP level.
    static func failure(_ message: String) -> JSONValue? {
        message.isEmpty ? nil : JSONRPC.error(id: .null, code: -32000, message)
    }

    /// The HTTP answer, logged in one line (never a body or a credential).
    func respond(_ head: HTTPRequestHead, status: Int, body: JSONValue?, headers: [(name: String, value: String)], person: String?,
                 started: UInt64) -> HTTPResponse {
        Log.event("http.request", ["method": head.method, "path": head.path, "status": status, "person": person ?? "-",
                                   "ms": Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000])
        guard let body else { return HTTPResponse(status: status, headers: headers) }
        return HTTPResponse.json(status: status, body.text, headers: headers)
    }
}
