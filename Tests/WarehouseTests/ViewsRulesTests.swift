import Foundation
import Postgres
import Warehouse
import Testing
import TestSupport

/// The per-day rules (docs/views.md), each with hand-computed expectations.
@Suite("Per-day rules")
struct ViewsRulesTests {
    typealias S = Sample

    @Test("per-source winner: the largest source total is the day's value, the others are alternatives, never a sum")
    func perSourceWinner() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-10T09:00:00.000+01:00", end: "2026-03-10T09:10:00.000+01:00", value: 1200),
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-10T18:00:00.000+01:00", end: "2026-03-10T18:10:00.000+01:00", value: 1800),
                S.quantity(S.U(3), HK.steps, source: "watch", start: "2026-03-10T09:00:00.000+01:00", end: "2026-03-10T09:10:00.000+01:00", value: 2500),
                S.quantity(S.U(4), HK.steps, source: "ring", start: "2026-03-10T09:00:00.000+01:00", end: "2026-03-10T09:10:00.000+01:00", value: 700),
            ])
            let totals = try c.table("SELECT * FROM health.daily_totals WHERE person = 'p'")
            #expect(totals.count == 1)
            let day = totals.row(where: "day", is: "2026-03-10")
            #expect(double(day, "value") == 3000)
            #expect(text(day, "source") == "phone")
            #expect(text(day, "metric") == "steps")
            #expect(text(day, "unit") == "count")
            #expect(jsonNumbers(day, "alternatives") == ["watch": 2500, "ring": 700])

            let sources = try c.table("SELECT * FROM health.daily_source_totals WHERE person = 'p' ORDER BY rank")
            #expect(sources.rows.map { $0[sources.columns.firstIndex(of: "source")!] } == ["phone", "watch", "ring"])
            #expect(sources.dictionaries.map { double($0, "total") } == [3000, 2500, 700])
            #expect(sources.dictionaries.map { text($0, "samples") } == ["2", "1", "1"])
            #expect(sources.dictionaries.map { text($0, "rank") } == ["1", "2", "3"])
            #expect(sources.dictionaries.map { text($0, "is_winner") } == ["t", "f", "f"])

            let summary = try c.table("SELECT * FROM health.daily_summary WHERE person = 'p'")
            #expect(double(summary.row(where: "day", is: "2026-03-10"), "steps") == 3000)
        }
    }

    @Test("sums are exact decimals, whatever order the samples were stored in: 0.1 + 0.2 is 0.3")
    func exactSums() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            // One third has sixteen digits: it is summed as the 15-digit decimal the cast makes.
            try store.batch([S.quantity(S.U(1), HK.distance, source: "phone", start: "2026-03-10T09:00:00.000+01:00", value: 0.1)])
            try store.batch([S.quantity(S.U(2), HK.distance, source: "phone", start: "2026-03-10T10:00:00.000+01:00", value: 0.2)])
            try store.batch([S.quantity(S.U(3), HK.distance, source: "phone", start: "2026-03-10T11:00:00.000+01:00", value: 1.0 / 3)])
            try store.batch([S.quantity(S.U(4), HK.distance, source: "phone", start: "2026-03-10T12:00:00.000+01:00", value: 2.0 / 3)])
            let value = try #require(try db.scalar("SELECT value FROM health.daily_totals", as: Double.self))
            #expect(value == 1.3)  // 0.1 + 0.2 + 0.333333333333333 + 0.666666666666667, exactly
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
            try c.query("SELECT health_store.rebuild_rollups('p')")
            #expect(try db.scalar("SELECT value FROM health.daily_totals", as: Double.self) == 1.3)
        }
    }

    @Test("a tie goes to the source that sorts first in byte order: Zeta beats alpha")
    func byteOrderTie() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "alpha", start: "2026-03-10T09:00:00.000+01:00", value: 500),
                S.quantity(S.U(2), HK.steps, source: "Zeta", start: "2026-03-10T10:00:00.000+01:00", value: 500),
            ])
            let day = try c.table("SELECT * FROM health.daily_totals").row(where: "day", is: "2026-03-10")
            #expect(text(day, "source") == "Zeta")
            #expect(double(day, "value") == 500)
            #expect(jsonNumbers(day, "alternatives") == ["alpha": 500])
            let winner = try c.table("SELECT * FROM health.daily_source_totals WHERE is_winner")
            #expect(winner.count == 1)
            #expect(text(winner.row(where: "day", is: "2026-03-10"), "source") == "Zeta")
        }
    }

    @Test("a fixed priority beats a larger total, listed before unlisted, and clearing it restores the largest total")
    func fixedPriority() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-10T09:00:00.000+01:00", value: 9000),
                S.quantity(S.U(2), HK.steps, source: "watch", start: "2026-03-10T10:00:00.000+01:00", value: 4000),
                S.quantity(S.U(3), HK.steps, source: "ring", start: "2026-03-10T11:00:00.000+01:00", value: 6000),
                // On the 11th only the phone and the ring: the listed watch has no data, so the
                // next listed source with data wins.
                S.quantity(S.U(4), HK.steps, source: "phone", start: "2026-03-11T09:00:00.000+01:00", value: 9000),
                S.quantity(S.U(5), HK.steps, source: "ring", start: "2026-03-11T11:00:00.000+01:00", value: 100),
            ])
            try c.query("SELECT health.set_source_priority('p', $1, ARRAY['watch', 'ring'])", [HK.steps])

            let totals = try c.table("SELECT * FROM health.daily_totals")
            let tenth = totals.row(where: "day", is: "2026-03-10")
            #expect(text(tenth, "source") == "watch")
            #expect(double(tenth, "value") == 4000)
            #expect(jsonNumbers(tenth, "alternatives") == ["phone": 9000, "ring": 6000])
            let eleventh = totals.row(where: "day", is: "2026-03-11")
            #expect(text(eleventh, "source") == "ring")
            #expect(double(eleventh, "value") == 100)

            let ranks = try c.table("SELECT source, rank FROM health.daily_source_totals WHERE day = '2026-03-10' ORDER BY rank")
            #expect(ranks.rows.map { $0[0] } == ["watch", "ring", "phone"])
            #expect(double(try c.table("SELECT * FROM health.daily_summary").row(where: "day", is: "2026-03-10"), "steps") == 4000)

            try c.query("SELECT health.set_source_priority('p', $1, ARRAY[]::text[])", [HK.steps])
            let cleared = try c.table("SELECT * FROM health.daily_totals")
            #expect(text(cleared.row(where: "day", is: "2026-03-10"), "source") == "phone")
            #expect(double(cleared.row(where: "day", is: "2026-03-10"), "value") == 9000)
            #expect(text(cleared.row(where: "day", is: "2026-03-11"), "source") == "phone")
            #expect(try db.scalar("SELECT count(*) FROM health_store.source_priorities", as: Int.self) == 0)
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("a source priority is refused for a type that is not total or sleep, and for an unknown type")
    func priorityRefused() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let reading = #expect(throws: PostgresError.self) {
                try c.query("SELECT health.set_source_priority('p', $1, ARRAY['watch'])", [HK.heartRate])
            }
            #expect(reading?.sqlState == "22023")
            #expect(reading?.message.contains("reading") == true)
            let unknown = #expect(throws: PostgresError.self) {
                try c.query("SELECT health.set_source_priority('p', 'HKQuantityTypeIdentifierNoSuchThing', ARRAY['watch'])")
            }
            #expect(unknown?.sqlState == "22023")
            #expect(unknown?.message.contains("HKQuantityTypeIdentifierNoSuchThing") == true)
            // Sleep is a per-source type: allowed.
            try c.query("SELECT health.set_source_priority('p', $1, ARRAY['watch'])", [HK.sleep])
        }
    }

    @Test("sleep counts on the day of waking: values 1, 3, 4, 5 are asleep, 0 and 2 are not, an unnamed value only in unknown_min")
    func sleepOnWakeDay() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.sleep(S.U(1), source: "watch", start: "2026-03-01T22:30:00.000+01:00", end: "2026-03-02T06:30:00.000+01:00", value: 0),   // in bed 480
                S.sleep(S.U(2), source: "watch", start: "2026-03-01T23:30:00.000+01:00", end: "2026-03-02T01:00:00.000+01:00", value: 3),   // core 90
                S.sleep(S.U(3), source: "watch", start: "2026-03-02T01:00:00.000+01:00", end: "2026-03-02T02:00:00.000+01:00", value: 4),   // deep 60
                S.sleep(S.U(4), source: "watch", start: "2026-03-02T02:00:00.000+01:00", end: "2026-03-02T02:30:00.000+01:00", value: 5),   // REM 30
                S.sleep(S.U(5), source: "watch", start: "2026-03-02T02:30:00.000+01:00", end: "2026-03-02T02:40:00.000+01:00", value: 2),   // awake 10
                S.sleep(S.U(6), source: "watch", start: "2026-03-02T02:40:00.000+01:00", end: "2026-03-02T03:00:00.000+01:00", value: 1),   // unspecified 20
                S.sleep(S.U(7), source: "watch", start: "2026-03-02T03:00:00.000+01:00", end: "2026-03-02T03:15:00.000+01:00", value: 7),   // unknown 15
                S.sleep(S.U(8), source: "phone", start: "2026-03-01T23:00:00.000+01:00", end: "2026-03-02T07:00:00.000+01:00", value: 0),   // phone: in bed only
            ])
            let sleep = try c.table("SELECT * FROM health.daily_sleep")
            #expect(sleep.count == 1)
            let night = sleep.row(where: "day", is: "2026-03-02")
            #expect(text(night, "source") == "watch")
            #expect(double(night, "asleep_min") == 200)
            #expect(double(night, "core_min") == 90)
            #expect(double(night, "deep_min") == 60)
            #expect(double(night, "rem_min") == 30)
            #expect(double(night, "unspecified_min") == 20)
            #expect(double(night, "awake_min") == 10)
            #expect(double(night, "in_bed_min") == 480)
            #expect(double(night, "unknown_min") == 15)
            #expect(jsonNumbers(night, "alternatives") == ["phone": 0])

            let totals = try c.table("SELECT * FROM health.daily_totals")
            let t = totals.row(where: "day", is: "2026-03-02")
            #expect(text(t, "unit") == "min")
            #expect(text(t, "metric") == "sleep_min")
            #expect(double(t, "value") == 200)
            let sources = try c.table("SELECT * FROM health.daily_source_totals ORDER BY rank")
            #expect(sources.dictionaries.map { text($0, "source") } == ["watch", "phone"])
            #expect(sources.dictionaries.map { double($0, "total") } == [200, 0])
            #expect(sources.dictionaries.map { text($0, "samples") } == ["7", "1"])
            #expect(sources.dictionaries.allSatisfy { text($0, "unit") == "min" })

            let summary = try c.table("SELECT * FROM health.daily_summary")
            #expect(summary.count == 1)
            #expect(double(summary.row(where: "day", is: "2026-03-02"), "sleep_min") == 200)
        }
    }

    @Test("a night with only time in bed is no night of 0 minutes asleep: listed with its time in bed, sleep_min NULL, no total; a source with no minute asleep never wins, priority or not")
    func inBedOnlyNight() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                // 2 March: two phones in bed, no minute asleep anywhere.
                S.sleep(S.U(1), source: "phone", start: "2026-03-01T22:30:00.000+01:00", end: "2026-03-02T06:38:00.000+01:00", value: 0), // 488
                S.sleep(S.U(2), source: "ipad", start: "2026-03-01T23:00:00.000+01:00", end: "2026-03-02T05:40:00.000+01:00", value: 0),  // 400
                S.sleep(S.U(3), source: "ipad", start: "2026-03-02T05:40:00.000+01:00", end: "2026-03-02T05:50:00.000+01:00", value: 2),  // awake 10
                // 3 March: the phone in bed 480, the watch 30 minutes asleep.
                S.sleep(S.U(4), source: "phone", start: "2026-03-02T23:00:00.000+01:00", end: "2026-03-03T07:00:00.000+01:00", value: 0),
                S.sleep(S.U(5), source: "watch", start: "2026-03-03T05:00:00.000+01:00", end: "2026-03-03T05:30:00.000+01:00", value: 3),
                S.quantity(S.U(6), HK.steps, source: "phone", start: "2026-03-02T09:00:00.000+01:00", value: 800),
            ])
            // The ipad listed first: on a night with no sleep the most time in bed is shown all the same.
            try c.query("SELECT health.set_source_priority('p', 'HKCategoryTypeIdentifierSleepAnalysis', ARRAY['ipad', 'phone', 'watch'])")
            func check(_ when: String) throws {
                let nights = try c.table("SELECT * FROM health.daily_sleep ORDER BY day")
                #expect(nights.count == 2, "\(when)")
                let bed = nights.row(where: "day", is: "2026-03-02")
                #expect(text(bed, "source") == "phone", "\(when): the source with the most time in bed, not the listed ipad")
                #expect(text(bed, "asleep_min") == nil, "\(when): not 0")
                #expect(double(bed, "in_bed_min") == 488 && double(bed, "awake_min") == 0 && double(bed, "core_min") == 0, "\(when)")
                #expect(jsonNumbers(bed, "alternatives") == [:], "\(when)")
                let slept = nights.row(where: "day", is: "2026-03-03")
                #expect(text(slept, "source") == "watch" && double(slept, "asleep_min") == 30, "\(when): the listed phone never wins with no sleep")
                #expect(jsonNumbers(slept, "alternatives") == ["phone": 0], "\(when)")

                #expect(try c.table("SELECT day::text, source, value FROM health.daily_totals WHERE metric = 'sleep_min'").rows
                        == [["2026-03-03", "watch", "30"]], "\(when)")
                #expect(try c.table("SELECT day::text, source, rank FROM health.daily_source_totals WHERE metric = 'sleep_min' ORDER BY day, rank").rows
                        == [["2026-03-03", "watch", "1"], ["2026-03-03", "phone", "2"]], "\(when)")
                #expect(try c.table("SELECT day::text, sleep_min, steps FROM health.daily_summary ORDER BY day").rows
                        == [["2026-03-02", nil, "800"], ["2026-03-03", "30", nil]], "\(when): the day is there, its sleep NULL")
                #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0, "\(when)")
            }
            try check("stored batch by batch")
            try c.query("SELECT health_store.rebuild_rollups('p')")
            try check("rebuilt")

            // Sleep arrives for the night of 2 March: it becomes a night like any other.
            try Store(connection: c).batch([
                S.sleep(S.U(7), source: "ipad", start: "2026-03-02T01:00:00.000+01:00", end: "2026-03-02T02:00:00.000+01:00", value: 1),
            ])
            let night = try c.table("SELECT * FROM health.daily_sleep").row(where: "day", is: "2026-03-02")
            #expect(text(night, "source") == "ipad" && double(night, "asleep_min") == 60 && jsonNumbers(night, "alternatives") == ["phone": 0])
            #expect(try db.scalar("SELECT sleep_min FROM health.daily_summary WHERE day = '2026-03-02'", as: Double.self) == 60)
            #expect(try c.table("SELECT source FROM health.daily_source_totals WHERE day = '2026-03-02' AND metric = 'sleep_min' ORDER BY rank").rows
                    == [["ipad"], ["phone"]])
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("a replaced sample (same uuid, new content, another day) moves its total; the same copy again changes nothing")
    func replacedSampleMovesDay() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            let first = S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T12:00:00.000+01:00", value: 100)
            try store.batch([first, S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-05T12:00:00.000+01:00", value: 40)])
            #expect(double(try c.table("SELECT * FROM health.daily_totals").row(where: "day", is: "2026-03-01"), "value") == 100)

            let again = try store.batch([first])
            #expect(again == StoreCounts(samples: 1, inserted: 0, duplicates: 1, replaced: 0, quarantined: 0))

            let moved = try store.batch([S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-05T08:00:00.000+01:00", value: 250)])
            #expect(moved == StoreCounts(samples: 1, inserted: 0, duplicates: 0, replaced: 1, quarantined: 0))
            let totals = try c.table("SELECT * FROM health.daily_totals")
            #expect(totals.rows(where: "day", is: "2026-03-01").isEmpty)
            #expect(double(totals.row(where: "day", is: "2026-03-05"), "value") == 290)
            #expect(try c.table("SELECT * FROM health.daily_summary WHERE day = '2026-03-01'").count == 0)
            #expect(try c.table("SELECT * FROM health.daily_source_totals WHERE day = '2026-03-01'").count == 0)
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("readings: min, mean, max and count across sources; fractions stay fractions, daily_summary shows percent")
    func readings() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.heartRate, source: "watch", start: "2026-03-10T08:00:00.000+01:00", value: 60),
                S.quantity(S.U(2), HK.heartRate, source: "watch", start: "2026-03-10T12:00:00.000+01:00", value: 80),
                S.quantity(S.U(3), HK.heartRate, source: "chest strap", start: "2026-03-10T18:00:00.000+01:00", value: 100),
                S.quantity(S.U(4), HK.oxygen, source: "watch", start: "2026-03-10T03:00:00.000+01:00", value: 0.95),
                S.quantity(S.U(5), HK.oxygen, source: "watch", start: "2026-03-10T04:00:00.000+01:00", value: 0.97),
                S.quantity(S.U(6), HK.restingHeartRate, source: "watch", start: "2026-03-10T07:00:00.000+01:00", value: 52),
            ])
            let readings = try c.table("SELECT * FROM health.daily_readings")
            #expect(readings.count == 3)
            let hr = readings.row(where: "type", is: HK.heartRate)
            #expect(text(hr, "day") == "2026-03-10")
            #expect(double(hr, "min") == 60)
            #expect(double(hr, "mean") == 80)
            #expect(double(hr, "max") == 100)
            #expect(text(hr, "samples") == "3")
            #expect(text(hr, "unit") == "count/min")
            let o2 = readings.row(where: "type", is: HK.oxygen)
            #expect(text(o2, "unit") == "fraction")
            #expect(close(double(o2, "mean"), 0.96))
            #expect(double(o2, "min") == 0.95)
            #expect(double(o2, "max") == 0.97)

            let summary = try c.table("SELECT * FROM health.daily_summary").row(where: "day", is: "2026-03-10")
            #expect(double(summary, "heart_rate_min") == 60)
            #expect(double(summary, "heart_rate_mean") == 80)
            #expect(double(summary, "heart_rate_max") == 100)
            #expect(double(summary, "resting_heart_rate") == 52)
            #expect(close(double(summary, "oxygen_saturation_pct"), 96))
            // Readings are not per-source totals.
            #expect(try c.table("SELECT * FROM health.daily_totals").count == 0)
        }
    }

    @Test("body values: the day's latest by start; ties by latest end, then source in byte order, then uuid")
    func latestBodyValue() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                // 1st: the later start wins, whatever the source.
                S.quantity(S.U(1), HK.bodyMass, source: "scale", start: "2026-03-01T07:00:00.000+01:00", value: 80.5),
                S.quantity(S.U(2), HK.bodyMass, source: "app", start: "2026-03-01T21:00:00.000+01:00", value: 81.25),
                // 2nd: same start, the later end wins.
                S.quantity(S.U(3), HK.bodyMass, source: "app", start: "2026-03-02T07:00:00.000+01:00", end: "2026-03-02T07:05:00.000+01:00", value: 79),
                S.quantity(S.U(4), HK.bodyMass, source: "scale", start: "2026-03-02T07:00:00.000+01:00", end: "2026-03-02T07:01:00.000+01:00", value: 78),
                // 3rd: same start and end, the source first in byte order wins (Z before a).
                S.quantity(S.U(5), HK.bodyMass, source: "app", start: "2026-03-03T07:00:00.000+01:00", value: 77),
                S.quantity(S.U(6), HK.bodyMass, source: "Zscale", start: "2026-03-03T07:00:00.000+01:00", value: 76),
                // 4th: same start, end and source, the lower uuid wins.
                S.quantity(S.U(0x22), HK.bodyMass, source: "scale", start: "2026-03-04T07:00:00.000+01:00", value: 75),
                S.quantity(S.U(0x21), HK.bodyMass, source: "scale", start: "2026-03-04T07:00:00.000+01:00", value: 74),
                S.quantity(S.U(9), HK.bodyFat, source: "scale", start: "2026-03-04T07:00:00.000+01:00", value: 0.215),
            ])
            let body = try c.table("SELECT * FROM health.daily_body WHERE type = $1", [HK.bodyMass])
            #expect(body.count == 4)
            let d1 = body.row(where: "day", is: "2026-03-01")
            #expect(double(d1, "value") == 81.25)
            #expect(text(d1, "source") == "app")
            #expect(text(d1, "unit") == "kg")
            #expect(text(d1, "metric") == "body_mass_kg")
            #expect(text(d1, "measured_at").flatMap(Date.init(postgresText:)) == Date(postgresText: "2026-03-01 20:00:00+00"))
            #expect(double(body.row(where: "day", is: "2026-03-02"), "value") == 79)
            #expect(text(body.row(where: "day", is: "2026-03-03"), "source") == "Zscale")
            #expect(double(body.row(where: "day", is: "2026-03-03"), "value") == 76)
            #expect(double(body.row(where: "day", is: "2026-03-04"), "value") == 74)

            let fat = try c.table("SELECT * FROM health.daily_body WHERE type = $1", [HK.bodyFat]).row(where: "day", is: "2026-03-04")
            #expect(double(fat, "value") == 0.215)
            #expect(text(fat, "unit") == "fraction")
            let summary = try c.table("SELECT * FROM health.daily_summary").row(where: "day", is: "2026-03-04")
            #expect(double(summary, "body_mass_kg") == 74)
            #expect(close(double(summary, "body_fat_pct"), 21.5))
        }
    }

    @Test("workouts: totals over the workouts that carry them, NULL when none does; activity type N; overlaps listed both ways")
    func workouts() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.workout(S.U(1), source: "watch", start: "2026-03-10T07:00:00.000+01:00", end: "2026-03-10T07:30:00.000+01:00",
                          activityType: 37, activityName: "running", duration: 1800, distance: 5000, energy: 300),
                // A second app recording the same session: overlaps the first, no distance, no name.
                S.workout(S.U(2), source: "strava", start: "2026-03-10T07:10:00.000+01:00", end: "2026-03-10T07:40:00.000+01:00",
                          activityType: 14, activityName: nil, duration: 1800),
                // Starts when the first ends: touching is not overlapping; overlaps the second.
                S.workout(S.U(3), source: "watch", start: "2026-03-10T07:30:00.000+01:00", end: "2026-03-10T08:00:00.000+01:00",
                          activityType: 50, activityName: "traditionalStrengthTraining", duration: 1800, energy: 120.5),
                // Alone on the 11th, with neither distance nor energy.
                S.workout(S.U(4), source: "watch", start: "2026-03-11T18:00:00.000+01:00", end: "2026-03-11T18:45:00.000+01:00",
                          activityType: 52, activityName: "walking", duration: 2700),
            ])
            let daily = try c.table("SELECT * FROM health.daily_workouts")
            #expect(daily.count == 2)
            let tenth = daily.row(where: "day", is: "2026-03-10")
            #expect(text(tenth, "workouts") == "3")
            #expect(double(tenth, "duration_s") == 5400)
            #expect(double(tenth, "distance_m") == 5000)
            #expect(double(tenth, "energy_kcal") == 420.5)
            let eleventh = daily.row(where: "day", is: "2026-03-11")
            #expect(text(eleventh, "workouts") == "1")
            #expect(double(eleventh, "duration_s") == 2700)
            #expect(isNull(eleventh, "distance_m"))
            #expect(isNull(eleventh, "energy_kcal"))

            let list = try c.table("SELECT * FROM health.workouts")
            #expect(list.count == 4)
            let w1 = list.row(where: "uuid", is: S.U(1).lowercased())
            let w2 = list.row(where: "uuid", is: S.U(2).lowercased())
            let w3 = list.row(where: "uuid", is: S.U(3).lowercased())
            let w4 = list.row(where: "uuid", is: S.U(4).lowercased())
            #expect(text(w1, "activity_name") == "running")
            #expect(text(w2, "activity_name") == "activity type 14")
            #expect(text(w2, "source") == "strava")
            #expect(isNull(w2, "distance_m"))
            #expect(double(w1, "distance_m") == 5000)
            #expect(uuidArray(w1, "overlapping") == [S.U(2)])
            #expect(uuidArray(w2, "overlapping") == [S.U(1), S.U(3)])
            #expect(uuidArray(w3, "overlapping") == [S.U(2)])
            #expect(text(w4, "overlapping") == "{}")
            #expect(text(w4, "day") == "2026-03-11")

            let summary = try c.table("SELECT * FROM health.daily_summary").row(where: "day", is: "2026-03-10")
            #expect(text(summary, "workouts") == "3")
            #expect(double(summary, "workout_duration_s") == 5400)
        }
    }

    @Test("daily_summary: one row per day with any sample, NULL for every metric without data, no row for a day without data")
    func summaryNulls() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T12:00:00.000+01:00", value: 4321),
                S.quantity(S.U(2), HK.bodyFat, source: "scale", start: "2026-03-01T07:00:00.000+01:00", value: 0.2),
                S.quantity(S.U(3), "HKQuantityTypeIdentifierFancyNewMetric", source: "watch", start: "2026-03-03T12:00:00.000+01:00", value: 7, unit: "count", group: "activity"),
                // The workout type sent as a quantity: held (typed columns empty), but no workout.
                S.quantity(S.U(4), "HKWorkoutTypeIdentifier", source: "watch", start: "2026-03-04T12:00:00.000+01:00", value: 5, unit: "count", group: "workouts"),
            ])
            let summary = try c.table("SELECT * FROM health.daily_summary ORDER BY day")
            #expect(summary.dictionaries.map { text($0, "day") } == ["2026-03-01", "2026-03-03", "2026-03-04"])
            #expect(isNull(summary.row(where: "day", is: "2026-03-04"), "workouts"), "no count of 0 workouts")
            #expect(try c.table("SELECT * FROM health.daily_workouts").count == 0)
            let first = summary.row(where: "day", is: "2026-03-01")
            #expect(double(first, "steps") == 4321)
            #expect(close(double(first, "body_fat_pct"), 20))
            let filled: Set<String> = ["person", "day", "is_partial", "steps", "body_fat_pct"]
            for column in summary.columns where !filled.contains(column) {
                #expect(isNull(first, column), "\(column) should be NULL on a day without that metric")
            }
            let third = summary.row(where: "day", is: "2026-03-03")
            #expect(text(third, "unknown_samples") == "1")
            for column in summary.columns where !["person", "day", "is_partial", "unknown_samples"].contains(column) {
                #expect(isNull(third, column), "\(column) should be NULL on a day with only unknown samples")
            }
            for view in ["daily_summary", "daily_totals", "daily_source_totals", "daily_sleep", "daily_readings",
                         "daily_body", "daily_workouts", "workouts"] {
                #expect(try c.table("SELECT * FROM health.\(view) WHERE day = '2026-03-02'").count == 0, "\(view) has a row for a day without data")
            }
        }
    }

    /// A sample object of `sample` sent with another kind (`quantity` ↔ `category`).
    static func kinded(_ sample: String, _ kind: String) throws -> String {
        let other = kind == "category" ? "quantity" : "category"
        let changed = sample.replacingOccurrences(of: "\"kind\":\"\(other)\"", with: "\"kind\":\"\(kind)\"")
        try #require(changed != sample, "\(sample)")
        return changed
    }

    /// Watch steps (500) and phone steps sent as a category on 10 March, the phone's alone on
    /// 11 March; 120 minutes of core sleep from the watch and an hour more sent as a quantity.
    static func otherKinds() throws -> [String] {
        [
            S.quantity(S.U(1), HK.steps, source: "watch", start: "2026-03-10T09:00:00.000+01:00", value: 500),
            try kinded(S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-10T10:00:00.000+01:00", value: 3), "category"),
            try kinded(S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-03-11T10:00:00.000+01:00", value: 3), "category"),
            S.sleep(S.U(4), source: "watch", start: "2026-03-10T01:00:00.000+01:00", end: "2026-03-10T03:00:00.000+01:00", value: 3),
            try kinded(S.sleep(S.U(5), source: "watch", start: "2026-03-10T03:00:00.000+01:00", end: "2026-03-10T04:00:00.000+01:00", value: 3), "quantity"),
        ]
    }

    @Test("a known type sent with another kind counts only in samples: no rank, no win (priority or not), no alternative, no day value")
    func otherKindCountsNowhere() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch(try Self.otherKinds())
            func check(_ when: String) throws {
                #expect(try c.table("SELECT day::text, source, value, alternatives::text FROM health.daily_totals WHERE metric = 'steps'").rows
                        == [["2026-03-10", "watch", "500", "{}"]], "\(when)")
                #expect(try c.table("SELECT day::text, source, rank FROM health.daily_source_totals WHERE metric = 'steps'").rows
                        == [["2026-03-10", "watch", "1"]], "\(when)")
                #expect(try c.table("SELECT day::text, steps FROM health.daily_summary ORDER BY day").rows
                        == [["2026-03-10", "500"], ["2026-03-11", nil]], "\(when): the day is held, its steps NULL")
                #expect(try c.table("SELECT asleep_min, core_min, unknown_min FROM health.daily_sleep").rows == [["120", "120", "0"]], "\(when)")
                #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0, "\(when)")
            }
            try check("stored")
            try c.query("SELECT health.set_source_priority('p', '\(HK.steps)', ARRAY['phone'])")
            try check("the phone listed first")
            try c.query("SELECT health_store.rebuild_rollups('p')")
            try check("rebuilt")
        }
    }

    @Test("sleep sources with no minute asleep rank after those with minutes, among themselves in byte order; by time in bed only on a night with no sleep")
    func sleepLosersInByteOrder() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try Store(connection: c).batch([
                S.sleep(S.U(1), source: "watch", start: "2026-11-02T01:00:00.000+01:00", end: "2026-11-02T05:00:00.000+01:00", value: 3),
                S.sleep(S.U(2), source: "alpha", start: "2026-11-02T05:00:00.000+01:00", end: "2026-11-02T05:10:00.000+01:00", value: 2),
                S.sleep(S.U(3), source: "iphone", start: "2026-11-01T23:00:00.000+01:00", end: "2026-11-02T05:00:00.000+01:00", value: 0),
                // A night with no sleep: the source with most time in bed is shown.
                S.sleep(S.U(4), source: "alpha", start: "2026-11-03T05:00:00.000+01:00", end: "2026-11-03T05:10:00.000+01:00", value: 2),
                S.sleep(S.U(5), source: "iphone", start: "2026-11-02T23:00:00.000+01:00", end: "2026-11-03T05:00:00.000+01:00", value: 0),
            ])
            #expect(try c.table("SELECT source, rank, total FROM health.daily_source_totals WHERE day = '2026-11-02' ORDER BY rank").rows
                    == [["watch", "1", "240"], ["alpha", "2", "0"], ["iphone", "3", "0"]])
            #expect(try c.table("SELECT day::text, source, asleep_min, in_bed_min FROM health.daily_sleep ORDER BY day").rows
                    == [["2026-11-02", "watch", "240", "0"], ["2026-11-03", "iphone", nil, "360"]])
            #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0)
        }
    }

    @Test("a quantity in another unit than its type's counts only in samples, given back as sent; migration 0106 untypes those held")
    func otherUnitCountsNowhere() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let km = S.quantity(S.U(1), HK.distance, source: "phone", start: "2026-03-10T09:00:00.000+01:00", value: 5, unit: "km")
            try Store(connection: c).batch([
                km,
                S.quantity(S.U(2), HK.distance, source: "phone", start: "2026-03-10T10:00:00.000+01:00", value: 1000),
                S.quantity(S.U(3), HK.heartRate, source: "watch", start: "2026-03-10T10:00:00.000+01:00", value: 1.5, unit: "count/s"),
                S.quantity(S.U(4), HK.heartRate, source: "watch", start: "2026-03-10T11:00:00.000+01:00", value: 60),
                // A day with only such readings and body values has none.
                S.quantity(S.U(5), HK.heartRate, source: "watch", start: "2026-03-11T10:00:00.000+01:00", value: 1.2, unit: "count/s"),
                S.quantity(S.U(6), HK.bodyMass, source: "scale", start: "2026-03-11T07:00:00.000+01:00", value: 170, unit: "lb"),
            ])
            func check(_ when: String) throws {
                #expect(try c.table("SELECT value FROM health.daily_totals WHERE metric = 'distance_m'").rows == [["1000"]], "\(when)")
                #expect(try c.table("SELECT day::text, min, mean, max, samples FROM health.daily_readings").rows
                        == [["2026-03-10", "60", "60", "60", "1"]], "\(when)")
                #expect(try c.table("SELECT * FROM health.daily_body").count == 0, "\(when)")
                #expect(try c.table("SELECT day::text, heart_rate_mean, body_mass_kg FROM health.daily_summary ORDER BY day").rows
                        == [["2026-03-10", "60", nil], ["2026-03-11", nil, nil]], "\(when)")
                #expect(try c.table("SELECT value, unit FROM health.samples WHERE uuid = '\(S.U(1))'").rows == [[nil, nil]], "\(when)")
                #expect(try c.table("SELECT payload = $1::jsonb FROM health.samples WHERE uuid = '\(S.U(1))'", [km]).rows == [["t"]],
                        "\(when): given back as sent")
                #expect(try c.table("SELECT * FROM health_store.verify_rollups('p')").count == 0, "\(when)")
            }
            try check("stored")
            // What was stored before 0106: typed in the unit sent, summed as metres.
            try c.execute(script: """
                UPDATE health_store.sample_rows SET value = 5, unit = 'km', payload = nullif(payload - 'value' - 'unit', '{}')
                  WHERE person = 'p' AND uuid = '\(S.U(1))';
                UPDATE health_store.sample_rows SET value = 1.5, unit = 'count/s', payload = nullif(payload - 'value' - 'unit', '{}')
                  WHERE person = 'p' AND uuid = '\(S.U(3))';
                SELECT health_store.rebuild_rollups('p');
                DELETE FROM health_store.schema_migrations WHERE version = 106;
                """)
            #expect(try c.table("SELECT value FROM health.daily_totals WHERE metric = 'distance_m'").rows == [["1005"]])
            let applied = try Migrator().migrate(c)
            #expect(applied.compactMap(\.version) == [106])
            try check("migrated")
            #expect(try c.table("SELECT * FROM health_store.migration_tasks").count == 0)
        }
    }
}
