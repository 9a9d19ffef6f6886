import Dispatch
import Foundation
import HTTPServer
import Warehouse

/// Who is asking, signing in and out, and the answer's headers.
extension WebUI {
    /// Whose page a request may see.
    enum Viewer {
        /// A person: by a live session (its id), or `default` on an open loopback page (nil).
        case person(String, session: String?)
        /// Nobody yet: the sign-in form, with why a session ended when it did.
        case signedOut(String?)
    }

    func viewer(_ headers: HTTPHeaders) throws -> Viewer {
        if let id = RequestParts.cookie(Self.cookieName, in: headers["Cookie"]) {
            if let session = configuration.sessions.session(id) {
                // Revoking or expiry of the token ends its sessions: one primary-key probe a request.
                if try tokens.isLive(id: session.tokenID, person: session.person) { return .person(session.person, session: id) }
                configuration.sessions.end(id)
                return .signedOut("Your session ended: its token was revoked or has expired.")
            }
        }
        // Through a proxy, loopback is the internet: the same list as the receiver's.
        if configuration.openWithoutTokens, !headers.isForwarded, try !tokens.anyMinted() {
            return .person(PersonName.defaultPerson, session: nil)
        }
        return .signedOut(nil)
    }

    /// Said under the form while no token exists (a page on a non-loopback listener, or reached through a proxy).
    func noTokenHint() throws -> String? {
        try tokens.anyMinted() ? nil : "No token has been minted yet: run <code>health-warehouse token create --person NAME</code> on the server first."
    }

    func signIn(_ request: HTTPRequest) -> Answer {
        guard RequestParts.sameOrigin(origin: request.headers["Origin"], host: request.headers["Host"]) else { return crossOrigin() }
        let address = request.remoteAddress
        if let wait = configuration.limiter.retryAfter(address) {
            return Answer(status: 429, html: SignInPage.render(message: "Too many failed sign-ins from your address: try again in "
                                                                + Format.minutes(Double(wait) / 60) + "."),
                          headers: [("Retry-After", "\(wait)")])
        }
        guard let token = RequestParts.form(request.body)?["token"]?.trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            return Answer(status: 400, html: SignInPage.render(message: "Enter a token."))
        }
        do {
            switch try tokens.lookup(token: token) {
            case .live(let id, let person, let expiresAt):
                let session = configuration.sessions.open(person: person, tokenID: id, tokenExpiresAt: expiresAt)
                var answer = try render(.days(30), person: person, signOut: true)
                answer.headers.append(("Set-Cookie", cookie(session, request.headers)))
                answer.person = person
                return answer
            case let refused:
                configuration.limiter.failed(address)
                let why = refused == .expired ? "That token has expired." : refused == .revoked ? "That token was revoked."
                    : "That token is not one this warehouse minted."
                return Answer(status: 403, html: SignInPage.render(message: why + " Not signed in.", hint: try noTokenHint()))
            }
        } catch {
            return failed(error)
        }
    }

    func signOut(_ request: HTTPRequest) -> Answer {
        guard RequestParts.sameOrigin(origin: request.headers["Origin"], host: request.headers["Host"]) else { return crossOrigin() }
        if let id = RequestParts.cookie(Self.cookieName, in: request.headers["Cookie"]) { configuration.sessions.end(id) }
        return Answer(html: SignInPage.render(message: nil, hint: "Signed out."),
                      headers: [("Set-Cookie", cookie(nil, request.headers))])
    }

    func crossOrigin() -> Answer {
        Answer(status: 403, html: SignInPage.notice(title: "Refused", message: "This form may only be sent from this server's own page."))
    }

    /// The session cookie (`id` nil: one that deletes it): HttpOnly, SameSite=Strict, only for
    /// /ui, Secure under TLS; no Max-Age, so it ends with the browser too.
    func cookie(_ id: String?, _ headers: HTTPHeaders) -> String {
        let secure = configuration.secureCookies || headers["X-Forwarded-Proto"]?.lowercased() == "https"
        return "\(Self.cookieName)=\(id ?? ""); Path=/ui; HttpOnly; SameSite=Strict" + (id == nil ? "; Max-Age=0" : "")
            + (secure ? "; Secure" : "")
    }

    /// The HTTP answer with the page's security headers, gzip-compressed when the browser takes
    /// it and it pays, logged in one line (`db_ms`: reading the views; `ms`: the whole answer).
    func respond(_ answer: Answer, head: HTTPRequestHead, started: DispatchTime) -> HTTPResponse {
        var fields: [(name: String, value: String)] = answer.body == nil ? [("Content-Type", "text/html; charset=utf-8")] : []
        fields += answer.headers + [
            // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` on the
            // page's own form POSTs, which the Origin check must refuse.
            ("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"), ("X-Frame-Options", "DENY"),
            ("Cache-Control", answer.body == nil ? "no-store" : "max-age=3600"), ("Vary", "Accept-Encoding"),
        ]
        var body = answer.body ?? Array(answer.html.utf8)
        let plainBytes = body.count
        if body.count > 1024, Gzip.accepted(head.headers["Accept-Encoding"]), let packed = Gzip.compress(body) {
            body = packed
            fields.append(("Content-Encoding", "gzip"))
        }
        Log.event("http.request", ["method": head.method, "path": head.path, "status": answer.status, "person": answer.person ?? "-",
                                   "bytes": plainBytes, "sent_bytes": body.count, "db_ms": answer.databaseMilliseconds,
                                   "ms": Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000])
        return HTTPResponse(status: answer.status, headers: fields, body: body)
    }
}
