import Foundation
import Hashing
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

/// The page (`GET /ui`, docs/ui.md) in headless Chromium against a real `serve` over the demo
/// history: ui/browse.py drives the browser by keyboard and prints what the DOM held; this test
/// compares it with the views, as SQL, for the same days.
@Suite("The page in headless Chromium")
struct PageBrowserTests {
    static let hostileSource = "<script>alert(1)</script>"
    static let hostileWorkout = "<img src=x onerror=alert(2)>"

    /// Where the screenshots go: HEALTH_WAREHOUSE_UI_SCREENSHOTS (docs/ui to refresh the docs'
    /// pictures), else .build/ui-screenshots.
    static var screenshotFolder: String {
        ProcessInfo.processInfo.environment["HEALTH_WAREHOUSE_UI_SCREENSHOTS"].map { Repository.url($0).path }
            ?? Repository.url(".build/ui-screenshots").path
    }

    @Test("the page's numbers are the views' numbers; gaps, today partial and winners shown; sign-in, sign-out and two persons apart; hostile names stay text; nothing leaves 127.0.0.1")
    func browse() throws {
        let filled = try FilledDatabase(label: "ui")
        let db = filled.database
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
        defer { pool.close() }
        try storeHostile(pool, person: filled.otherPerson)
        let tokens = TokenStore(pool: pool)
        let me = try tokens.create(person: filled.demo.person, label: "browser").token
        let alex = try tokens.create(person: filled.otherPerson, label: "browser").token
        let expired = try tokens.create(person: filled.demo.person, label: "expired", expiresIn: 0.001).token
        let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        let run = try CLIProcess.runProgram("/usr/bin/env", ["python3", Repository.url("Tests/DeploymentTests/ui/browse.py").path], environment: [
            "HW_UI_URL": "http://127.0.0.1:\(port)", "HW_UI_TOKEN_ME": me, "HW_UI_TOKEN_ALEX": alex, "HW_UI_TOKEN_EXPIRED": expired,
            "HW_UI_SCREENSHOTS": Self.screenshotFolder, "SE_AVOID_STATS": "true",
            "PYTHONPATH": Repository.url("Tests/DeploymentTests/ui").path,
        ])
        try #require(run.status == 0, "browse.py failed (is chromium, chromium-driver and selenium installed? scripts/install-deps.sh): \(run.stderr)")
        let seen = try JSONDecoder().decode(PageSeen.self, from: Data(run.stdout.utf8))
        try checkSignIn(seen)
        try checkDays(seen.me, db: db, person: filled.demo.person)
        try checkSources(seen.me, db: db, person: filled.demo.person)
        try checkChartsAndWorkouts(seen, db: db, person: filled.demo.person)
        try checkPersonsApart(seen, db: db)
        #expect(!seen.requests.isEmpty)
        for url in seen.requests { #expect(url.hasPrefix("http://127.0.0.1:\(port)/"), "a request left 127.0.0.1:\(port): \(url)") }
        #expect(seen.consoleErrors.filter { $0.contains("Content Security Policy") }.isEmpty, "\(seen.consoleErrors)")
        #expect(seen.screenshots.count >= 4)
    }

    /// A step total and a workout for `person` from a source and with a name that are markup.
    func storeHostile(_ pool: PostgresPool, person: String) throws {
        let store = BatchStore(pool: pool)
        let yesterday = FilledDatabase.utcStamp(Date().addingTimeInterval(-86_400))
        let hourLater = FilledDatabase.utcStamp(Date().addingTimeInterval(-82_800))
        let bodies = [
            Bodies.json(samples: [Bodies.quantity(uuid: UUID().uuidString, source: Self.hostileSource, start: yesterday, value: "30000")],
                        exportId: UUID().uuidString),
            Bodies.workout(uuid: UUID().uuidString, start: yesterday, end: hourLater, name: Self.hostileWorkout, source: Self.hostileSource),
        ]
        for body in bodies {
            guard case .batches(let batches) = try PayloadDecoder.decode(body, format: .json) else { throw DeploymentTestError("probe") }
            try store.store(batches, person: person, origin: .http, bodySHA256: SHA256.hash(body))
        }
    }

    func checkSignIn(_ seen: PageSeen) throws {
        #expect(seen.signedOut.signInForm && seen.signedOut.person == nil && seen.signedOut.tables.isEmpty)
        #expect(seen.wrong.error?.contains("not one this warehouse minted") == true && seen.wrongCookie == nil)
        #expect(seen.expired.error?.contains("has expired") == true && seen.expiredCookie == nil)
        #expect(seen.me.person == "me")
        #expect(seen.meURL.hasSuffix("/ui/sign-in"), "the sign-in POST answers with the page itself, no redirect")
        let cookie = try #require(seen.meCookie)
        #expect(cookie.httpOnly == true && cookie.sameSite == "Strict" && cookie.path == "/ui" && cookie.secure == false)
        #expect(seen.focus.prefix(5) == ["A:#main", "A:/ui/days/30", "A:/ui/days/90", "A:/ui/days/365", "BUTTON:Sign out"],
                "Tab walks skip link, chooser, sign-out: \(seen.focus)")
        #expect(seen.me365URL.hasSuffix("/ui/days/365"))
        #expect(seen.me365.tables["days"]?.rows.count == 365)
        #expect(seen.signedOutAgain.signInForm && seen.afterSignOutCookie == nil)
        #expect(seen.replayedAfterSignOut, "the signed-out session's id no longer opens the page")
    }
}
