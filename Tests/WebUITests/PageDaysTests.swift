import Foundation
import Postgres
import Testing
import TestSupport

/// What the days page shows of the days themselves (docs/ui.md): up to the newest day holding a
/// sample, and a night with only time in bed as what it is.
@Suite("The page's days")
struct PageDaysTests {
    /// The UTC date `days` days from now (negative: before), `YYYY-MM-DD`.
    static func utcDate(_ days: Double, hours: Double = 0) -> String {
        String(utcStamp(daysAgo: -days - hours / 24).prefix(10))
    }

    /// A healthd sleep sample (`value` 0: in bed, 3: core) in the reference's shape.
    static func sleep(source: String, start: String, end: String, value: Int) -> String {
        let names = [0: "inBed", 3: "asleepCore"]
        return #"{"uuid":"\#(UUID().uuidString)","id":"\#(String(repeating: "b", count: 64))","type":"HKCategoryTypeIdentifierSleepAnalysis","#
            + #""group":"sleep","source":"\#(source)","start":"\#(start)","end":"\#(end)","kind":"category","value":\#(value),"name":"\#(names[value]!)"}"#
    }

    @Test("with no time zone set, a sample written at 03:40 +14:00 on the day after the phone's today is on the page at once, as that day so far")
    func newestDayShown() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            // With no zone, today is the date in the offset the phone wrote its batch in (the
            // test bodies' generatedAt: +02:00); a sample written in +14:00 early in the morning
            // belongs to a date that today reaches only later.
            let today = Self.utcDate(0, hours: 2), next = Self.utcDate(1, hours: 2)
            try server.storeSteps(token: nil, source: "com.apple.Health", values: [("\(next)T03:40:00.000+14:00", 7777)])
            #expect(try db.scalar("SELECT health.today('default')::text", as: String.self) == today)
            let page = try server.get("/ui").bodyText
            #expect(page.contains("<tr class=\"partial\"><th>\(next) <span class=\"tag\">so far</span></th><td>7,777 steps</td>"), "\(page)")
            #expect(page.contains("Today (\(today)) is not over yet, nor is any later day a sample was written on (up to \(next))"))
            #expect(page.contains("<th>\(today) <span class=\"tag\">so far</span></th>"), "the rule's today is still partial")
            #expect(page.contains("<title>\(next): 7,777 steps (today, so far)</title>"))
            // Thirty days, the newest first: the one before the first is not shown.
            #expect(!page.contains("<th>\(Self.utcDate(-29, hours: 2))"))
        }
    }

    @Test("a workout's start shows on its day at the time the phone wrote (no time zone set), or in the person's zone: never its day with the UTC clock")
    func workoutTimes() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            // An evening run at −05:00: 00:30 UTC of the next day; and one just after midnight at +01:00.
            let evening = Self.utcDate(-3), night = Self.utcDate(-2)
            for (uuid, start, end) in [(UUID().uuidString, "\(evening)T19:30:00.000-05:00", "\(evening)T20:10:00.000-05:00"),
                                       (UUID().uuidString, "\(night)T00:30:00.000+01:00", "\(night)T01:00:00.000+01:00")] {
                let stored = try HTTPTestClient.request(port: server.port, method: "POST", path: "/", headers: [("Content-Type", "application/json")],
                                                        body: Bodies.workout(uuid: uuid, start: start, end: end))
                #expect(stored.status == 200)
            }
            let page = try server.get("/ui").bodyText
            #expect(page.contains("<tr><th>\(evening) 19:30</th>"), "the evening run on its day at 19:30 (before: 00:30)")
            #expect(page.contains("<tr><th>\(night) 00:30</th>"), "the run after midnight at 00:30 (before: 23:30)")
            #expect(page.contains("workouts at the time the phone wrote, other times in UTC"))
            try db.query("SELECT health.set_time_zone('default', 'America/New_York')")
            let zoned = try server.get("/ui").bodyText
            let clocks = try db.query("SELECT day::text || ' ' || to_char(start_at AT TIME ZONE 'America/New_York', 'HH24:MI') FROM health.workouts ORDER BY start_at")
                .map { try $0.decode(0, as: String.self) }
            #expect(clocks.count == 2)
            for clock in clocks { #expect(zoned.contains("<tr><th>\(clock)</th>"), "in the zone's clock: \(clock)") }
            #expect(zoned.contains("times in America/New_York"))
        }
    }

    @Test("a night with only time in bed shows its time in bed, never 0 minutes asleep, and stays out of the sleep average")
    func inBedNight() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let bedDay = Self.utcDate(-3), bedEve = Self.utcDate(-4), sleptDay = Self.utcDate(-2)
            let samples = [
                Self.sleep(source: "com.apple.health.phone", start: "\(bedEve)T22:30:00.000Z", end: "\(bedDay)T06:38:00.000Z", value: 0),
                Self.sleep(source: "com.apple.health.watch", start: "\(bedDay)T23:00:00.000Z", end: "\(sleptDay)T06:00:00.000Z", value: 3),
                // The phone beside the watch that night: time in bed alone.
                Self.sleep(source: "com.apple.health.phone", start: "\(bedDay)T22:50:00.000Z", end: "\(sleptDay)T06:10:00.000Z", value: 0),
            ]
            let stored = try HTTPTestClient.request(port: server.port, method: "POST", path: "/", headers: [("Content-Type", "application/json")],
                                                    body: Bodies.json(samples: samples, exportId: UUID().uuidString))
            #expect(stored.status == 200)
            let page = try server.get("/ui").bodyText
            #expect(page.contains("<td class=\"gap\">8 h 08 min in bed, no sleep recorded</td>"), "the day table")
            #expect(page.contains("<td class=\"gap\">no sleep recorded</td><td class=\"gap\">–</td><td class=\"gap\">–</td><td class=\"gap\">–</td><td class=\"gap\">–</td><td>0 min</td><td>8 h 08 min</td>"),
                    "the sleep table: no stage minutes, the time in bed")
            #expect(page.contains("average 7 h 00 min over 1 complete day with data"), "the night in bed is left out of the average")
            #expect(!page.contains("<title>\(bedDay): 0 min"), "nothing charted as 0 minutes asleep")
            // Which source counted the night the watch slept: the phone beside it, in bed only.
            let sources = try #require(page.range(of: "id=\"sources\"")).upperBound
            let night = try #require(page[sources...].range(of: "<th>\(sleptDay)")).lowerBound
            let row = page[night...].prefix { $0 != "\n" }.split(separator: "</tr>").first ?? ""
            #expect(row.contains(" in bed only, no sleep recorded</td>") && !row.contains(" 0 min"), "\(row)")
        }
    }

    @Test("a source is shown by its name, the identifier in its title (on hover), both escaped; one without a name by its identifier")
    func sourceNames() throws {
        try TestPostgres.withDatabase { db in
            let server = try PageServer(db)
            let watch = "com.apple.health.14452A08-5697-4892-A7A3-66C27B1C2E64", odd = #"com.example"><img src=x>"#
            try server.storeSteps(token: nil, source: watch, values: [(utcStamp(daysAgo: 1), 5000)])
            try server.storeSteps(token: nil, source: odd, values: [(utcStamp(daysAgo: 1), 1000)])
            try server.storeSteps(token: nil, source: "com.example.plain", values: [(utcStamp(daysAgo: 1), 10)])
            try db.query("SELECT health.set_source_name('default', $1, $2)", [watch, #"Anna's <script>alert(1)</script> "Watch""#])
            try db.query("SELECT health.set_source_name('default', $1, 'Odd one')", [odd])
            let page = try server.get("/ui").bodyText
            #expect(page.contains(#"<span class="named" title="com.apple.health.14452A08-5697-4892-A7A3-66C27B1C2E64">Anna&#39;s &lt;script&gt;alert(1)&lt;/script&gt; &quot;Watch&quot;</span>"#),
                    "\(page)")
            #expect(page.contains(#"<span class="named" title="com.example&quot;&gt;&lt;img src=x&gt;">Odd one</span>"#))
            #expect(page.contains("<dd>com.example.plain</dd>"))
            #expect(!page.contains("<script>alert") && !page.contains("<img src=x>"))
        }
    }
}
