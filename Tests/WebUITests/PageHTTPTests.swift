import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse
@testable import WebUI

/// `serve`'s page over real HTTP on loopback, against a real database: who may see what,
/// sessions, sign-in and sign-out (the browser itself: DeploymentTests' PageBrowserTests).
@Suite("The page over HTTP: access, sessions, sign-in")
struct PageHTTPTests {
    @Test("with no token minted on loopback the page is open for default; through a proxy it asks to sign in; every answer forbids other origins")
    func openOnLoopback() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            try server.storeSteps(token: nil, source: "com.apple.Health", values: [(utcStamp(daysAgo: 1), 4321)])
            let page = try server.get("/ui")
            #expect(page.status == 200)
            #expect(page.bodyText.contains("Signed in as <strong>default</strong>"))
            #expect(page.bodyText.contains("4,321 steps"))
            #expect(page.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
            #expect(page.header("Cache-Control") == "no-store")
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.header("Set-Cookie") == nil)
            #expect(!page.bodyText.contains("sign-out"), "no session, nothing to sign out of")
            // The receiver's one list: X-Forwarded-Port and X-Forwarded-Server opened the page before.
            for header in ["X-Forwarded-For", "Forwarded", "Via", "X-Forwarded-Port", "X-Forwarded-Server", "X-Forwarded-Anything",
                           "CF-Connecting-IP", "True-Client-IP", "X-Client-IP", "X-Real-IP"] {
                let proxied = try server.get("/ui", headers: [(header, "for=203.0.113.9")])
                #expect(proxied.status == 200)
                #expect(proxied.bodyText.contains("action=\"/ui/sign-in\""), "\(header)")
                #expect(!proxied.bodyText.contains("4,321"), "\(header)")
            }
            let packed = try server.get("/ui", headers: [("Accept-Encoding", "gzip, deflate")])
            #expect(packed.header("Content-Encoding") == "gzip" && packed.body.count < page.body.count / 3)
            #expect(String(decoding: try GzipTests.gunzip(packed.body), as: UTF8.self).contains("4,321 steps"))
            #expect(try server.get("/ui/style.css").header("Content-Type") == "text/css; charset=utf-8")
            #expect(try server.get("/ui/nothing-here").status == 404)
            #expect(try server.get("/ui/sign-out").status == 405)
            #expect(try server.get("/ui/sign-out").header("Allow") == "POST")
            // The receiver's rules are untouched outside /ui.
            #expect(try server.get("/somewhere").status == 405)
        }
    }

    @Test("a good token signs in: HttpOnly SameSite=Strict cookie for /ui, the page itself (200, never 3xx); sign-out ends the session on the server")
    func signInAndOut() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let token = try server.tokens.create(person: "me", label: nil).token
            try server.storeSteps(token: token, source: "com.apple.Health", values: [(utcStamp(daysAgo: 1), 9876)])
            #expect(try server.get("/ui").bodyText.contains("action=\"/ui/sign-in\""))
            let (response, session) = try server.signIn(token)
            #expect(response.status == 200)
            let cookie = try #require(response.header("Set-Cookie"))
            #expect(cookie.contains("; Path=/ui; HttpOnly; SameSite=Strict"))
            #expect(!cookie.contains("Secure"), "plain HTTP on loopback")
            #expect(response.bodyText.contains("Signed in as <strong>me</strong>") && response.bodyText.contains("9,876 steps"))
            let id = try #require(session)
            #expect(try server.get("/ui/days/90", cookie: id).bodyText.contains("9,876 steps"))
            let viaTLSProxy = try server.post("/ui/sign-in", form: "token=\(token)", headers: [("X-Forwarded-Proto", "https")])
            #expect(viaTLSProxy.status == 200)
            #expect(viaTLSProxy.header("Set-Cookie")?.hasSuffix("; SameSite=Strict; Secure") == true, "a TLS proxy in front: Secure")
            let out = try server.post("/ui/sign-out", cookie: id)
            #expect(out.status == 200)
            #expect(out.header("Set-Cookie")?.hasPrefix("hw_session=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0") == true)
            let replay = try server.get("/ui", cookie: id)
            #expect(replay.bodyText.contains("action=\"/ui/sign-in\"") && !replay.bodyText.contains("9,876"))
        }
    }

    @Test("a wrong, expired or revoked token gets a message and no cookie; a sign-in POST from another origin, or with none, is refused")
    func refusedSignIns() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let tokens = server.tokens
            let good = try tokens.create(person: "me", label: nil).token
            let expired = try tokens.create(person: "me", label: nil, expiresIn: 0.001).token
            let revoked = try tokens.create(person: "me", label: nil)
            _ = try tokens.revoke(id: revoked.id)
            for (token, message) in [("hw_not-a-token", "not one this warehouse minted"), (expired, "has expired"), (revoked.token, "was revoked")] {
                let (response, session) = try server.signIn(token)
                #expect(response.status == 403)
                #expect(session == nil && response.header("Set-Cookie") == nil)
                #expect(response.bodyText.contains(message) && response.bodyText.contains("Not signed in."), "\(message)")
            }
            for origin in ["http://evil.example", "null", nil] as [String?] {
                let response = try server.post("/ui/sign-in", form: "token=\(good)", origin: origin)
                #expect(response.status == 403 && response.header("Set-Cookie") == nil, "\(origin ?? "no Origin")")
            }
        }
    }

    @Test("revoking a token, or its expiry, ends the sessions opened with it at their next request")
    func tokenEndsSessions() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let tokens = server.tokens
            let revoked = try tokens.create(person: "me", label: nil)
            let shortLived = try tokens.create(person: "me", label: nil, expiresIn: 2)
            let first = try #require(try server.signIn(revoked.token).session)
            let second = try #require(try server.signIn(shortLived.token).session)
            #expect(try server.get("/ui", cookie: first).bodyText.contains("Signed in as"))
            #expect(try server.get("/ui", cookie: second).bodyText.contains("Signed in as"))
            _ = try tokens.revoke(id: revoked.id)
            let after = try server.get("/ui", cookie: first)
            #expect(after.bodyText.contains("Your session ended: its token was revoked or has expired."))
            #expect(try server.get("/ui", cookie: second).bodyText.contains("Signed in as"))
            Thread.sleep(forTimeInterval: 2.2)
            #expect(try server.get("/ui", cookie: second).bodyText.contains("action=\"/ui/sign-in\""))
        }
    }

    @Test("after five failed sign-ins from one address the sixth is refused with 429 and Retry-After, a good token too")
    func signInLimit() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let good = try server.tokens.create(person: "me", label: nil).token
            for attempt in 1...5 { #expect(try server.signIn("hw_guess\(attempt)").response.status == 403) }
            let held = try server.signIn(good)
            #expect(held.response.status == 429)
            #expect(held.session == nil)
            let wait = try #require(held.response.header("Retry-After").flatMap(Int.init))
            #expect(wait > 800 && wait <= 900)
            #expect(held.response.bodyText.contains("Too many failed sign-ins"))
        }
    }

    @Test("a good sign-in between failures clears nothing: four wrong tokens and the holder's own, repeated, hit 429 at the sixth failure")
    func signInLimitNotReset() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let own = try server.tokens.create(person: "me", label: nil).token
            var statuses: [Int] = []
            for round in 0..<3 {
                for attempt in 1...4 { statuses.append(try server.signIn("hw_guess\(round)_\(attempt)").response.status) }
                statuses.append(try server.signIn(own).response.status)
            }
            // Before: every fifth answer a 200 reset the count, and guessing never stopped.
            #expect(statuses == [403, 403, 403, 403, 200, 403, 429, 429, 429, 429, 429, 429, 429, 429, 429], "\(statuses)")
        }
    }

    @Test("one person's session never shows another's days or workouts: another's workout is 404 like a missing one")
    func personsApart() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let me = try server.tokens.create(person: "me", label: nil).token, alex = try server.tokens.create(person: "alex", label: nil).token
            try server.storeSteps(token: me, source: "com.example.mine", values: [(utcStamp(daysAgo: 1), 1111)])
            try server.storeSteps(token: alex, source: "com.example.alexs", values: [(utcStamp(daysAgo: 1), 2222)])
            let mine = try #require(try server.signIn(me).session), theirs = try #require(try server.signIn(alex).session)
            let myPage = try server.get("/ui/days/365", cookie: mine).bodyText
            let theirPage = try server.get("/ui/days/365", cookie: theirs).bodyText
            #expect(myPage.contains("com.example.mine") && myPage.contains("1,111 steps"))
            #expect(!myPage.contains("com.example.alexs") && !myPage.contains("2,222"))
            #expect(theirPage.contains("com.example.alexs") && !theirPage.contains("com.example.mine") && !theirPage.contains("1,111"))
            let workout = UUID().uuidString
            let stored = try HTTPTestClient.request(port: server.port, method: "POST", path: "/", headers: [
                ("Content-Type", "application/json"), ("Authorization", "Bearer \(me)"),
            ], body: Bodies.workout(uuid: workout, start: utcStamp(daysAgo: 1), end: utcStamp(daysAgo: 0.98), name: "rowing"))
            #expect(stored.status == 200)
            let myWorkout = try server.get("/ui/workouts/\(workout)", cookie: mine)
            #expect(myWorkout.status == 200 && myWorkout.bodyText.contains("<h1>rowing, "))
            let notTheirs = try server.get("/ui/workouts/\(workout)", cookie: theirs)
            #expect(notTheirs.status == 404 && !notTheirs.bodyText.contains("rowing"))
        }
    }

    @Test("the page's connections are health_reader in read-only transactions: writing fails, even after RESET ROLE")
    func readerCannotWrite() throws {
        try TestPostgres.withDatabase { db in
            let pool = WebUI.readerPool(connectionString: db.connectionString)
            defer { pool.close() }
            try pool.withConnection { connection in
                #expect(try connection.query("SELECT current_user::text").first?.decode(0, as: String.self) == "health_reader")
                #expect(try connection.query("SELECT count(*) FROM health.daily_summary").first?.decode(0, as: Int.self) == 0)
                let denied = #expect(throws: PostgresError.self) { try connection.query("SELECT token_sha256 FROM health_store.tokens") }
                #expect(denied?.sqlState == "42501")
                try connection.query("RESET ROLE")
                let readOnly = #expect(throws: PostgresError.self) { try connection.query("CREATE TABLE health_store.x (a int)") }
                #expect(readOnly?.sqlState == "25006")
                let role = try PageReader(connection: connection).snapshot {
                    try connection.query("SELECT current_user::text").first?.decode(0, as: String.self)
                }
                #expect(role == "health_reader", "every page read sets the role again")
            }
            let fresh = WebUI.readerPool(connectionString: db.connectionString)
            defer { fresh.close() }
            let page = WebUI(tokenPool: fresh, readerPool: fresh, configuration: WebUIConfiguration(secureCookies: false, openWithoutTokens: true))
            #expect(page.checkReader() == nil)
        }
    }
}
