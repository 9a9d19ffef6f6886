import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// Which day a sample belongs to: local days, DST, the written-offset fallback, zone changes,
/// and which days are still partial.
@Suite("Local days")
struct ViewsTimeTests {
    typealias S = Sample

    @Test("a step at 23:30 local on the DST days 2026-03-29 (23 h) and 2026-10-25 (25 h) in Europe/Berlin lands on that day")
    func daylightSavingDays() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try c.query("SELECT health.set_time_zone('p', 'Europe/Berlin')")
            // Written in UTC, as a phone abroad might: the zone, not the offset, decides.
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-28T23:30:00.000Z", value: 1),    // 00:30 CET, 29th
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-29T21:30:00.000Z", value: 10),   // 23:30 CEST, 29th
                S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-03-29T22:30:00.000Z", value: 100),  // 00:30 CEST, 30th
                S.quantity(S.U(4), HK.steps, source: "phone", start: "2026-10-24T22:30:00.000Z", value: 2),    // 00:30 CEST, 25th
                S.quantity(S.U(5), HK.steps, source: "phone", start: "2026-10-25T22:30:00.000Z", value: 20),   // 23:30 CET, 25th
                S.quantity(S.U(6), HK.steps, source: "phone", start: "2026-10-25T23:30:00.000Z", value: 200),  // 00:30 CET, 26th
            ])
            let totals = try c.table("SELECT * FROM health.daily_totals ORDER BY day")
            #expect(totals.dictionaries.map { text($0, "day") } == ["2026-03-29", "2026-03-30", "2026-10-25", "2026-10-26"])
            #expect(totals.dictionaries.map { double($0, "value") } == [11, 100, 22, 200])
        }
    }

    @Test("with no time zone, the offset written in the sample decides its day")
    func writtenOffsetFallback() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                // 21:30 UTC on the 29th, written in Tokyo's offset: the 30th there.
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-30T06:30:00.000+09:00", value: 7),
                // 04:30 UTC on the 30th, written in New York's offset: the 29th there.
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-29T23:30:00.000-05:00", value: 5),
                // Sleep: the written offset of its end.
                S.sleep(S.U(3), source: "watch", start: "2026-03-29T22:00:00.000-05:00", end: "2026-03-30T01:00:00.000-05:00", value: 3),
            ])
            let totals = try c.table("SELECT * FROM health.daily_totals WHERE type = $1 ORDER BY day", [HK.steps])
            #expect(totals.dictionaries.map { text($0, "day") } == ["2026-03-29", "2026-03-30"])
            #expect(totals.dictionaries.map { double($0, "value") } == [5, 7])
            let sleep = try c.table("SELECT * FROM health.daily_sleep")
            #expect(text(sleep.row(where: "day", is: "2026-03-30"), "asleep_min") == "180")
        }
    }

    @Test("changing the time zone re-days the person's samples and their rollups; NULL goes back to written offsets")
    func timeZoneChangeMovesDays() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-30T06:30:00.000+09:00", value: 7),  // 21:30Z 29th
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-29T23:30:00.000-05:00", value: 5),  // 04:30Z 30th
            ])
            try Store(connection: c).batch(person: "other", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-30T06:30:00.000+09:00", value: 70),
            ])
            func days(_ person: String = "p") throws -> [String: Double] {
                var out: [String: Double] = [:]
                for row in try c.table("SELECT day, value FROM health.daily_totals WHERE person = $1", [person]).dictionaries {
                    out[text(row, "day")!] = double(row, "value")
                }
                return out
            }
            #expect(try days() == ["2026-03-29": 5, "2026-03-30": 7])

            try c.query("SELECT health.set_time_zone('p', 'Europe/Berlin')")
            // Berlin: 21:30Z is 23:30 on the 29th; 04:30Z is 06:30 on the 30th.
            #expect(try days() == ["2026-03-29": 7, "2026-03-30": 5])
            #expect(try c.table("SELECT day FROM health.samples WHERE person = 'p' ORDER BY uuid").rows.map { $0[0] } == ["2026-03-29", "2026-03-30"])
            #expect(try days("other") == ["2026-03-30": 70], "another person's days do not move")
            #expect(try db.scalar("SELECT time_zone FROM health.settings WHERE person = 'p'", as: String.self) == "Europe/Berlin")

            try c.query("SELECT health.set_time_zone('p', 'Asia/Tokyo')")
            #expect(try days() == ["2026-03-30": 12])

            try c.query("SELECT health.set_time_zone('p', NULL)")
            #expect(try days() == ["2026-03-29": 5, "2026-03-30": 7])
            #expect(try c.table("SELECT time_zone FROM health.settings WHERE person = 'p'").rows == [[nil]])
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("a zone change that moves most of a long history rebuilds the person's rollups, still equal to a recompute")
    func timeZoneChangeOnLongHistory() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            // 23:30 written in +01:00 for 800 days, two types, two sources: 3200 keys. In Tokyo
            // every sample is on the next day.
            var samples: [String] = []
            var n = 0
            for d in 0..<800 {
                let date = Date(timeIntervalSince1970: 1_735_689_600 + Double(d) * 86_400)  // from 2025-01-01
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: "UTC")!
                let p = calendar.dateComponents([.year, .month, .day], from: date)
                let stamp = String(format: "%04d-%02d-%02dT23:30:00.000+01:00", p.year!, p.month!, p.day!)
                for type in [HK.steps, HK.distance] {
                    for source in ["phone", "watch"] {
                        n += 1
                        samples.append(S.quantity(S.U(n), type, source: source, start: stamp, value: Double(d % 50 + 1)))
                    }
                }
            }
            for chunk in stride(from: 0, to: samples.count, by: 1000) {
                try Store(connection: c).batch(Array(samples[chunk..<min(chunk + 1000, samples.count)]))
            }
            #expect(try db.scalar("SELECT min(day)::text FROM health.daily_totals", as: String.self) == "2025-01-01")
            try c.query("SELECT health.set_time_zone('p', 'Asia/Tokyo')")
            #expect(try db.scalar("SELECT min(day)::text FROM health.daily_totals", as: String.self) == "2025-01-02")
            #expect(try db.scalar("SELECT count(*) FROM health.daily_summary", as: Int.self) == 800)
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("set_time_zone refuses a name that is not an IANA zone, naming it, and changes nothing")
    func badTimeZone() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try c.query("SELECT health.set_time_zone('p', 'Europe/Berlin')")
            let error = #expect(throws: PostgresError.self) {
                try c.query("SELECT health.set_time_zone('p', 'Mars/Olympus_Mons')")
            }
            #expect(error?.sqlState == "22023")
            #expect(error?.message.contains("Mars/Olympus_Mons") == true)
            let cased = #expect(throws: PostgresError.self) {
                try c.query("SELECT health.set_time_zone('p', 'europe/berlin')")
            }
            #expect(cased?.hint?.contains("Europe/Berlin") == true)
            #expect(try db.scalar("SELECT time_zone FROM health.settings WHERE person = 'p'", as: String.self) == "Europe/Berlin")
        }
    }

    @Test("health.day_start: a person's day begins in their zone, or with none in their phone's offset, or in UTC−12 before any batch; a batch received at 23:50 UTC at +01:00 is the next day's")
    func dayStart() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            func start(_ person: String, _ day: String) throws -> String? {
                try db.scalar("SELECT to_char(health.day_start($1, $2::date) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')", [person, day], as: String.self)
            }
            #expect(try start("nobody", "2026-12-08") == "2026-12-08 12:00", "UTC−12: the day begins at noon UTC")
            try Store(connection: c).batch(person: "anna", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-12-06T12:00:00.000+01:00", value: 1),
            ], generatedAt: "2026-12-08T00:50:00.000+01:00")
            #expect(try start("anna", "2026-12-08") == "2026-12-07 23:00", "her phone's +01:00")
            // What the assistant's day lists as received that day: 23:50 UTC on the 7th is her 8th.
            let received = "2026-12-07 23:50:00+00"
            let onDay = try db.scalar("""
                SELECT string_agg(d::date::text, ',') FROM generate_series('2026-12-06'::date, '2026-12-09'::date, interval '1 day') d
                WHERE $1::timestamptz >= health.day_start('anna', d::date) AND $1::timestamptz < health.day_start('anna', d::date + 1)
                """, [received], as: String.self)
            #expect(onDay == "2026-12-08", "before: the 7th, the UTC date")
            try c.query("SELECT health.set_time_zone('anna', 'America/New_York')")
            #expect(try start("anna", "2026-12-08") == "2026-12-08 05:00")
            #expect(try start("anna", "2026-07-01") == "2026-07-01 04:00", "the zone's summer offset")
        }
    }

    @Test("is_partial: today in the person's zone is partial; with no zone, today in the offset the phone wrote its latest batch in; before any, until the day has ended everywhere")
    func partialDays() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let now = Date()
            func localDate(_ date: Date, _ zone: TimeZone) -> String {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = zone
                let d = calendar.dateComponents([.year, .month, .day], from: date)
                return String(format: "%04d-%02d-%02d", d.year!, d.month!, d.day!)
            }
            func stamp(_ day: String) -> String { day + "T12:00:00.000Z" }
            let utc = TimeZone(identifier: "UTC")!
            let kiritimati = TimeZone(identifier: "Pacific/Kiritimati")!  // UTC+14: its today is ahead
            let plus14 = TimeZone(secondsFromGMT: 14 * 3600)!, minus5 = TimeZone(secondsFromGMT: -5 * 3600)!
            let todayThere = localDate(now, kiritimati)
            let yesterdayThere = localDate(now.addingTimeInterval(-86_400), kiritimati)
            let threeDaysAgo = localDate(now.addingTimeInterval(-3 * 86_400), utc)
            let threeDaysAgoThere = localDate(now.addingTimeInterval(-3 * 86_400), kiritimati)
            // UTC−12 is the last place a day ends: until then it is partial with neither a zone nor an offset.
            let lastToEnd = localDate(now.addingTimeInterval(-12 * 3600), utc)

            try c.query("SELECT health.set_time_zone('z', 'Pacific/Kiritimati')")
            try Store(connection: c).batch(person: "z", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: todayThere + "T12:00:00.000+14:00", value: 1),
                S.quantity(S.U(2), HK.steps, source: "phone", start: threeDaysAgoThere + "T12:00:00.000+14:00", value: 1),
            ])
            // No zone: the phone writes +14:00 (its batch's generatedAt, as its samples).
            try Store(connection: c).batch(person: "n", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: todayThere + "T12:00:00.000+14:00", value: 1),
                S.quantity(S.U(2), HK.steps, source: "phone", start: yesterdayThere + "T12:00:00.000+14:00", value: 1),
                S.quantity(S.U(3), HK.steps, source: "phone", start: stamp(threeDaysAgo), value: 1),
            ], generatedAt: todayThere + "T12:00:00.000+14:00")
            #expect(try db.scalar("SELECT health.today('n')::text", as: String.self) == localDate(now, plus14))
            for view in ["daily_totals", "daily_summary", "daily_source_totals"] {
                let zoned = try c.table("SELECT day, is_partial FROM health.\(view) WHERE person = 'z'")
                #expect(text(zoned.row(where: "day", is: todayThere), "is_partial") == "t", "\(view)")
                #expect(text(zoned.row(where: "day", is: threeDaysAgoThere), "is_partial") == "f", "\(view)")
                let plain = try c.table("SELECT day, is_partial FROM health.\(view) WHERE person = 'n'")
                #expect(text(plain.row(where: "day", is: todayThere), "is_partial") == "t", "\(view)")
                #expect(text(plain.row(where: "day", is: yesterdayThere), "is_partial") == "f", "\(view): over in +14:00, not yet in UTC−12")
                #expect(text(plain.row(where: "day", is: threeDaysAgo), "is_partial") == "f", "\(view)")
            }

            // The phone flies west: its next batch is written in −05:00, and today is taken there.
            // A batch received before that one (a resend, a backlog file) does not move it back.
            try Store(connection: c).batch(person: "n", [S.quantity(S.U(4), HK.steps, source: "phone", start: stamp(threeDaysAgo), value: 2)],
                                           generatedAt: localDate(now, minus5) + "T12:00:00.000-05:00")
            try Store(connection: c).batch(person: "n", [S.quantity(S.U(5), HK.steps, source: "phone", start: stamp(threeDaysAgo), value: 3)],
                                           receivedAt: "2026-01-01T00:00:00Z", generatedAt: todayThere + "T12:00:00.000+14:00")
            #expect(try db.scalar("SELECT health.today('n')::text", as: String.self) == localDate(now, minus5))
            #expect(try db.scalar("SELECT health.is_partial('n', $1::date)", [yesterdayThere], as: Bool.self) == (yesterdayThere >= localDate(now, minus5)))

            // Before any healthd batch (only another way in): until the day has ended everywhere.
            try c.query("UPDATE health_store.persons SET sent_offset = NULL WHERE person = 'n'")
            #expect(try db.scalar("SELECT health.today('n')::text", as: String.self) == lastToEnd)
            let plain = try c.table("SELECT day, is_partial FROM health.daily_totals WHERE person = 'n'")
            #expect(text(plain.row(where: "day", is: yesterdayThere), "is_partial") == (yesterdayThere >= lastToEnd ? "t" : "f"))
        }
    }

    @Test("0108 gives the people held the offset their latest healthd sample was written in, so their today is taken there")
    func sentOffsetUpgrade() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch(person: "n", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T12:00:00.000+05:45", value: 1),
            ])
            try Store(connection: c).batch(person: "n", [
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-02T12:00:00.000+14:00", value: 1),
            ], receivedAt: "2099-01-01T00:00:00Z")
            // The schema before 0108: no offset on the person's row.
            try c.query("ALTER TABLE health_store.persons DROP COLUMN sent_offset CASCADE")
            try c.query("DELETE FROM health_store.schema_migrations WHERE version = 108")
            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == [108])
            #expect(try db.scalar("SELECT sent_offset FROM health_store.persons WHERE person = 'n'", as: Int.self) == 840,
                    "the end of the sample received last, written in +14:00")
            let plus14 = try db.scalar("SELECT ((now() AT TIME ZONE 'UTC') + interval '14 hours')::date::text", as: String.self)
            #expect(try db.scalar("SELECT health.today('n')::text", as: String.self) == plus14)
            #expect(try c.table("SELECT count(*) FROM health.daily_totals WHERE person = 'n'").rows == [["2"]], "the views made again")
        }
    }
}
