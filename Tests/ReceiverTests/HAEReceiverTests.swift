import DemoData
import Foundation
import HealthPayload
import Metrics
import Postgres
import Receiver
import Testing
import TestSupport
import Warehouse

/// `POST /hae` over real HTTP into a real database (CONTRACT.md §9): the answers, the rows in
/// the views, re-sent buckets, twins with the other ways in, workouts, sleep, records.
@Suite("Health Auto Export over HTTP")
struct HAEReceiverTests {
    static let minutes: [(name: String, value: String)] = [("automation-aggregation", "minutes")]
    static let days: [(name: String, value: String)] = [("automation-aggregation", "days")]

    func postHAE(_ receiver: RunningReceiver, _ body: [UInt8], headers: [(name: String, value: String)] = [],
                 contentType: String? = "application/json") throws -> (status: Int, answer: [String: Int]) {
        let response = try receiver.post(body, contentType: contentType, headers: headers, path: "/hae")
        return (response.status, json(response).compactMapValues { ($0 as? NSNumber)?.intValue })
    }

    /// The first column of the first row, as a number or as text.
    func number(_ db: TestDatabase, _ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> Double? {
        try db.query(sql, parameters).first?.decodeIfPresent(0, as: Double.self)
    }

    func text(_ db: TestDatabase, _ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> String? {
        try db.query(sql, parameters).first?[0]
    }

    @Test("every metric shape of a summarized body is stored: 200 with its six counts, the views' values, rollups equal to a recompute")
    func summarizedBody() throws {
        try withReceiver { receiver, db in
            let (status, answer) = try postHAE(receiver, Bodies.fixture("hae-metrics-summarized.good.json"), headers: Self.minutes)
            #expect(status == 200)
            #expect(answer == ["samples": 31, "inserted": 31, "duplicates": 0, "replaced": 0, "quarantined": 0, "workouts": 0])
            let day = try db.query("""
                SELECT steps, distance_m, active_energy_kcal, heart_rate_min, heart_rate_mean, heart_rate_max, body_fat_pct,
                       oxygen_saturation_pct, height_m, blood_pressure_systolic, unknown_samples
                FROM health.daily_summary WHERE person = 'default' AND day = '2025-03-10'
                """).first!
            #expect(try day.decode(0, as: Double.self) == 200.5)
            #expect(try day.decode(1, as: Double.self) == 150)
            #expect(try day.decode(2, as: Double.self) == 15)
            #expect(try day.decode(3, as: Double.self) == 58 && day.decode(5, as: Double.self) == 112, "Min and Max of the buckets")
            #expect(try day.decode(4, as: Double.self) == 72.25, "the mean of the buckets' Avg")
            #expect(try day.decode(6, as: Double.self) == 18.5 && day.decode(7, as: Double.self) == 97)
            #expect(try day.decode(8, as: Double.self) == 1.78 && day.decode(9, as: Double.self) == 118)
            #expect(try day.decode(10, as: Int.self) == 1)
            #expect(try text(db, "SELECT type FROM health.unknown_types WHERE person = 'default'") == "hae:mindful_minutes")
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
            let delivery = try db.query("SELECT origin, format, basis, samples, inserted, file FROM health.deliveries").first!
            #expect(delivery[0] == "hae" && delivery[1] == "json" && delivery[2] == "hae" && delivery[3] == "31" && delivery[5] == nil)
        }
    }

    @Test("each sample's payload is the object the decoder wrote, byte for byte once read back as jsonb")
    func payloadExact() throws {
        try withReceiver { receiver, db in
            let bytes = try Bodies.fixture("hae-metrics-summarized.good.json")
            #expect(try postHAE(receiver, bytes, headers: Self.minutes).status == 200)
            let body = try HAEDecoder.decode(bytes, aggregation: "minutes")
            let written = String(decoding: body.samplesJSON(0..<body.metricSampleCount), as: UTF8.self)
            let differing = try number(db, """
                SELECT count(*) FROM jsonb_array_elements($1::jsonb) w
                LEFT JOIN health.samples s ON s.person = 'default' AND s.uuid = (w.value->>'uuid')::uuid
                WHERE s.payload IS DISTINCT FROM w.value
                """, [written])
            #expect(differing == 0)
            #expect(try number(db, "SELECT count(*) FROM health_store.sample_rows WHERE value_min IS NOT NULL") == 2)
        }
    }

    @Test("a day re-sent as it fills: the newer total replaces the older, never adds to it")
    func resentDay() throws {
        try withReceiver { receiver, db in
            for (steps, expected) in [("1200", ["inserted": 1, "replaced": 0]), ("5320", ["inserted": 0, "replaced": 1]),
                                      ("8450", ["inserted": 0, "replaced": 1]), ("8450", ["inserted": 0, "replaced": 0])] {
                let body = HAEBodies.body(metrics: [HAEBodies.metric("step_count", "count", [
                    HAEBodies.point("2025-03-10 00:00:00 +0100", steps, source: "iPhone|Apple Watch")])])
                let (status, answer) = try postHAE(receiver, body, headers: Self.days)
                #expect(status == 200)
                #expect(answer["inserted"] == expected["inserted"] && answer["replaced"] == expected["replaced"])
            }
            #expect(try number(db, "SELECT value FROM health.daily_totals WHERE person = 'default' AND day = '2025-03-10'") == 8450.0)
            #expect(try number(db, "SELECT count(*) FROM health.samples") == 1)
        }
    }

    @Test("the same day from healthd and Health Auto Export: the source with the larger total wins, nothing summed")
    func perSourceWinner() throws {
        try withReceiver { receiver, db in
            let healthd = Bodies.json(samples: [
                Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-000000000001", source: "com.apple.health.iPhone",
                                start: "2025-03-10T09:00:00.000+01:00", end: "2025-03-10T09:30:00.000+01:00", value: "3000"),
                Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-000000000002", source: "com.apple.health.iPhone",
                                start: "2025-03-10T17:00:00.000+01:00", end: "2025-03-10T17:30:00.000+01:00", value: "2000"),
            ])
            #expect(try receiver.post(healthd).status == 200)
            let hae = HAEBodies.body(metrics: [HAEBodies.metric("step_count", "count", [
                HAEBodies.point("2025-03-10 00:00:00 +0100", "7000", source: "iPhone|Apple Watch")])])
            #expect(try postHAE(receiver, hae, headers: Self.days).status == 200)
            let row = try db.query("SELECT value, source, alternatives::text FROM health.daily_totals WHERE day = '2025-03-10'").first!
            #expect(row[0] == "7000" && row[1] == "iPhone|Apple Watch")
            #expect(row[2] == #"{"com.apple.health.iPhone": 5000}"#)
        }
    }

    @Test("an unsummarized point equal to a held healthd sample is that sample, whichever came first; a bucket never is")
    func pointTwins() throws {
        try withReceiver { receiver, db in
            func healthd(_ uuid: String, _ start: String) -> [UInt8] {
                Bodies.json(samples: [Bodies.quantity(uuid: uuid, source: "com.apple.health.Watch", start: start,
                                                      end: "2025-03-10T10:10:00.000+01:00", value: "512")], exportId: UUID().uuidString)
            }
            let point = HAEBodies.body(metrics: [HAEBodies.metric("step_count", "count", [
                HAEBodies.point("2025-03-10 10:00:00 +0100", "512", source: "Jane's Apple Watch")])])
            // healthd first: the point is matched, a duplicate.
            #expect(try receiver.post(healthd("A1B2C3D4-0000-4000-8000-00000000000A", "2025-03-10T10:00:00.400+01:00")).status == 200)
            let (_, first) = try postHAE(receiver, point)
            #expect(first["inserted"] == 0 && first["duplicates"] == 1)
            #expect(try number(db, "SELECT matched FROM health_store.deliveries WHERE origin = 'hae'") == 1)
            #expect(try number(db, "SELECT count(*) FROM health.samples") == 1)
            // The point first (another person): healthd's sample replaces it.
            try db.query("SELECT health_store.delete_person('default')")
            #expect(try postHAE(receiver, point).answer["inserted"] == 1)
            #expect(try receiver.post(healthd("A1B2C3D4-0000-4000-8000-00000000000B", "2025-03-10T10:00:00.700+01:00")).status == 200)
            #expect(try text(db, "SELECT string_agg(origin::text, ',') FROM health_store.samples") == "healthd")
            #expect(try number(db, "SELECT value FROM health.daily_totals WHERE day = '2025-03-10'") == 512.0)
            // A summarized bucket of the same start and value is one more source, never a twin.
            #expect(try postHAE(receiver, point, headers: Self.minutes).answer["inserted"] == 1)
            #expect(try number(db, "SELECT count(*) FROM health.samples") == 2)
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
        }
    }

    @Test("a point equal to an imported record replaces it; a record equal to a held point is matched")
    func exportTwins() throws {
        try withReceiver { (receiver, db) throws in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            func importRecord(_ uuid: String, _ start: String) throws -> StoreCounts {
                let body = Bodies.json(samples: [Bodies.quantity(uuid: uuid, source: "Jane's iPhone", start: start, end: start, value: "40")],
                                       exportId: UUID().uuidString)
                guard case .batches(let batches) = try PayloadDecoder.decode(body, format: .json) else { return StoreCounts() }
                let batch = batches[0]
                return try pool.withConnection { try BatchStore.store(batch, person: "default", origin: .export(path: "export.zip"),
                                                                      bodySHA256: [0], on: $0) }
            }
            #expect(try importRecord("B1B2C3D4-0000-4000-8000-000000000001", "2025-03-10T11:00:00.000+01:00").inserted == 1)
            let points = HAEBodies.body(metrics: [HAEBodies.metric("step_count", "count", [
                HAEBodies.point("2025-03-10 11:00:00 +0100", "40"), HAEBodies.point("2025-03-10 12:00:00 +0100", "40")])])
            #expect(try postHAE(receiver, points).answer["inserted"] == 2)
            #expect(try number(db, "SELECT count(*) FROM health_store.samples WHERE origin = 'export'") == 0)
            #expect(try importRecord("B1B2C3D4-0000-4000-8000-000000000002", "2025-03-10T12:00:00.000+01:00").matched == 1)
            #expect(try number(db, "SELECT count(*) FROM health.samples") == 2)
            #expect(try number(db, "SELECT value FROM health.daily_totals WHERE day = '2025-03-10'") == 80.0)
        }
    }

    /// A one-workout healthd batch of the run at 07:00–07:30.
    func healthdRun(_ uuid: String) -> [UInt8] {
        Bodies.workout(uuid: uuid, start: "2025-03-10T07:00:00.000+01:00", end: "2025-03-10T07:30:00.000+01:00")
    }

    let haeRun = HAEBodies.body(workouts: [HAEBodies.workout(id: "C1C2C3C4-0000-4000-8000-000000000001", start: "2025-03-10 07:00:00 +0100",
                                                             end: "2025-03-10 07:30:00 +0100", duration: 1800, distanceKm: 5,
                                                             heartRates: [120, 150, 165], routePoints: 4)])

    @Test("the same workout from healthd and Health Auto Export is one workout, its heart rate and route filled in")
    func workoutTwins() throws {
        try withReceiver { receiver, db in
            #expect(try receiver.post(healthdRun("D1D2D3D4-0000-4000-8000-000000000001")).status == 200)
            let (status, answer) = try postHAE(receiver, haeRun)
            #expect(status == 200 && answer["workouts"] == 1 && answer["duplicates"] == 1 && answer["inserted"] == 0)
            let rows = try db.query("SELECT uuid::text, origin, heart_rate_min, heart_rate_mean, heart_rate_max, route_points, distance_m FROM health.workouts")
            #expect(rows.count == 1)
            let w = rows.first!
            #expect(w[0] == "d1d2d3d4-0000-4000-8000-000000000001" && w[1] == "healthd")
            #expect(w[2] == "120" && w[3] == "145" && w[4] == "165" && w[5] == "4" && w[6] == "5000", "healthd's distance kept")
            #expect(try number(db, "SELECT workouts FROM health.daily_workouts WHERE day = '2025-03-10'") == 1)
            // The other order: Health Auto Export's workout first, then healthd's (another uuid) replaces it, keeping its streams.
            try db.query("SELECT health_store.delete_person('default')")
            #expect(try postHAE(receiver, haeRun).answer["inserted"] == 1)
            #expect(try text(db, "SELECT origin FROM health.workouts") == "hae")
            #expect(try receiver.post(healthdRun("D1D2D3D4-0000-4000-8000-000000000002")).status == 200)
            let after = try db.query("SELECT uuid::text, origin, heart_rate_mean, route_points FROM health.workouts")
            #expect(after.count == 1 && after.first?[0] == "d1d2d3d4-0000-4000-8000-000000000002" && after.first?[1] == "healthd")
            #expect(after.first?[2] == "145" && after.first?[3] == "4")
            #expect(try number(db, "SELECT count(*) FROM health_store.workout_streams") == 1)
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
        }
    }

    /// A healthd dance at 07:00–07:30 sent without a name (a deprecated type), distance or energy.
    func bareHealthdWorkout(_ uuid: String, energy: String? = nil) -> [UInt8] {
        Bodies.workout(uuid: uuid, start: "2025-03-10T07:00:00.000+01:00", end: "2025-03-10T07:30:00.000+01:00",
                       activityType: 14, name: nil, distance: nil, energy: energy)
    }

    let haeDance = HAEBodies.body(workouts: [HAEBodies.workout(id: "C1C2C3C4-0000-4000-8000-000000000009", name: "Dance",
                                                               start: "2025-03-10 07:00:00 +0100", end: "2025-03-10 07:30:00 +0100",
                                                               duration: 1800, distanceKm: 2, energyKcal: 250)])

    /// health.workouts' name, distance and energy, and daily_workouts' distance and energy, of 2025-03-10.
    func danceFigures(_ db: TestDatabase) throws -> [String?] {
        let w = try #require(try db.query("SELECT activity_name, distance_m, energy_kcal, origin, count(*) OVER () FROM health.workouts").first)
        let d = try #require(try db.query("SELECT distance_m, energy_kcal FROM health.daily_workouts WHERE day = '2025-03-10'").first)
        return [w[0], w[1], w[2], w[3], w[4], d[0], d[1]]
    }

    @Test("what a held workout lacks is filled from Health Auto Export's copy, nothing of it overwritten, its own resend still a duplicate")
    func workoutFilled() throws {
        try withReceiver { receiver, db in
            let healthd = bareHealthdWorkout("D1D2D3D4-0000-4000-8000-000000000009")
            #expect(try receiver.post(healthd).status == 200)
            #expect(try danceFigures(db) == ["activity type 14", nil, nil, "healthd", "1", nil, nil])
            let (status, answer) = try postHAE(receiver, haeDance)
            #expect(status == 200 && answer["duplicates"] == 1 && answer["inserted"] == 0)
            #expect(try danceFigures(db) == ["Dance", "2000", "250", "healthd", "1", "2000", "250"])
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
            // The healthd sample gives back what healthd sent: nothing of the fill in its payload.
            #expect(try text(db, "SELECT payload ?| ARRAY['distanceMeters', 'activeEnergyKilocalories', 'activityName'] FROM health.samples WHERE kind = 'workout'") == "f")
            // healthd's resend of the same workout is a duplicate, and the fill stays.
            let resent = try json(receiver.post(healthd))
            #expect((resent["duplicates"] as? NSNumber)?.intValue == 1 && (resent["replaced"] as? NSNumber)?.intValue == 0)
            #expect(try danceFigures(db) == ["Dance", "2000", "250", "healthd", "1", "2000", "250"])
            // A copy of its own with energy: its own value counts, the fill's distance still fills.
            #expect(try receiver.post(bareHealthdWorkout("D1D2D3D4-0000-4000-8000-000000000009", energy: "300")).status == 200)
            #expect(try danceFigures(db) == ["Dance", "2000", "300", "healthd", "1", "2000", "300"])
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)

            // The other order: the app's workout held first, replaced by healthd's (another uuid), which it fills.
            try db.query("SELECT health_store.delete_person('default')")
            #expect(try postHAE(receiver, haeDance).answer["inserted"] == 1)
            #expect(try danceFigures(db) == ["Dance", "2000", "250", "hae", "1", "2000", "250"])
            #expect(try receiver.post(bareHealthdWorkout("D1D2D3D4-0000-4000-8000-00000000000a")).status == 200)
            #expect(try danceFigures(db) == ["Dance", "2000", "250", "healthd", "1", "2000", "250"])
            #expect(try text(db, "SELECT uuid::text FROM health_store.workout_fills") == "d1d2d3d4-0000-4000-8000-00000000000a")
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
            // Deleting the person takes the fill with it.
            try db.query("SELECT health_store.delete_person('default')")
            #expect(try number(db, "SELECT count(*) FROM health_store.workout_fills") == 0)
        }
    }

    @Test("a workout re-sent replaces its own streams and route, never a Stridee body's")
    func workoutResent() throws {
        try withReceiver { receiver, db in
            #expect(try postHAE(receiver, haeRun).status == 200)
            let again = HAEBodies.body(workouts: [HAEBodies.workout(id: "C1C2C3C4-0000-4000-8000-000000000001", start: "2025-03-10 07:00:00 +0100",
                                                                    end: "2025-03-10 07:30:00 +0100", duration: 1800, distanceKm: 5,
                                                                    heartRates: [100, 110], routePoints: 6)])
            let (_, answer) = try postHAE(receiver, again)
            #expect(answer["duplicates"] == 1 && answer["workouts"] == 1)
            let w = try db.query("SELECT heart_rate_max, route_points FROM health.workouts").first!
            #expect(w[0] == "110" && w[1] == "6")
        }
    }

    @Test("a summarized night counts in daily_sleep on its date as sleepSource, weighed against healthd's by minutes asleep")
    func nights() throws {
        try withReceiver { receiver, db in
            let from = Bodies.instant("2025-03-10T00:00:00.000+01:00"), to = Bodies.instant("2025-03-10T06:00:00.000+01:00")
            let watch = Bodies.json(samples: [DemoEncoder.object(DemoSample(
                uuid: "E1E2E3E4-0000-4000-8000-000000000001", type: .sleep, source: "com.apple.health.Watch",
                start: from.millisecondsSinceEpoch, end: to.millisecondsSinceEpoch, value: "3", name: "asleepCore", offsetMinutes: 60))])
            #expect(try receiver.post(watch).status == 200)
            #expect(try postHAE(receiver, Bodies.fixture("hae-sleep-nights.good.json"), headers: Self.days).status == 200)
            let first = try db.query("""
                SELECT source, asleep_min, core_min, in_bed_min, alternatives::text FROM health.daily_sleep WHERE day = '2025-03-10'
                """).first!
            #expect(first[0] == "Jane's Apple Watch" && first[1] == "450" && first[2] == "210" && first[3] == "480")
            #expect(first[4] == #"{"com.apple.health.Watch": 360}"#)
            // A night of time in bed only holds no minute asleep: its unstaged part (asleep 0) spans nothing.
            let inBedOnly = try db.query("SELECT in_bed_min, source, asleep_min FROM health.daily_sleep WHERE day = '2025-03-12'").first!
            #expect(inBedOnly[0] == "450" && inBedOnly[1] == "Health Auto Export" && inBedOnly[2] == nil)
            #expect(try number(db, """
                SELECT count(*) FROM health_store.samples
                WHERE day = '2025-03-12' AND type = 'HKCategoryTypeIdentifierSleepAnalysis' AND value <> 0 AND end_at > start_at
                """) == 0)
        }
    }

    @Test("a bucket repeated in one body is stored once, the later copy, and counted a duplicate, however far apart (the body is stored in chunks)")
    func repeatedAcrossChunks() throws {
        try withReceiver { receiver, db in
            // 2,001 minute buckets: the last is the first's minute again, with another value.
            let points = (0...2000).map { i -> String in
                let minute = i == 2000 ? 0 : i
                return #"{"date":"2026-11-0\#(1 + minute / 1440) \#(String(format: "%02d:%02d", minute % 1440 / 60, minute % 60)):00 +0000","qty":\#(i == 2000 ? 99 : 10),"source":"W"}"#
            }
            let body = Array(#"{"data":{"metrics":[{"name":"step_count","units":"count","data":[\#(points.joined(separator: ","))]}]}}"#.utf8)
            let answer = try postHAE(receiver, body, headers: Self.minutes)
            #expect(answer.status == 200)
            let counts = answer.answer
            #expect(counts["samples"] == 2001 && counts["inserted"] == 2000 && counts["duplicates"] == 1 && counts["replaced"] == 0,
                    "before: replaced 1, duplicates 0: \(counts)")
            #expect(try number(db, "SELECT count(*) FROM health.samples") == 2000)
            #expect(try number(db, "SELECT value FROM health.samples WHERE start_at = '2026-11-01 00:00:00+00'") == 99, "the later copy")
            #expect(try number(db, "SELECT inserted + replaced FROM health.deliveries") == 2000)
        }
    }

    @Test("a summarized night re-sent as the app stages it replaces each stage, one now at 0 hours too: never more minutes than the night")
    func nightRestaged() throws {
        try withReceiver { receiver, db in
            let minutes = "SELECT asleep_min || ' ' || unspecified_min || ' ' || core_min || ' ' || awake_min FROM health.daily_sleep WHERE day = '2026-12-01'"
            let first = try postHAE(receiver, Self.night("2026-12-01", #""totalSleep":6,"asleep":0.5,"core":3.5,"deep":1,"rem":1,"awake":0.5"#), headers: Self.days)
            #expect(first.status == 200)
            #expect(try text(db, minutes) == "360 30 210 30")
            // Staged later: the unstaged half hour is core now, and the app writes awake as 0.
            #expect(try postHAE(receiver, Self.night("2026-12-01", #""totalSleep":6,"asleep":0,"core":4,"deep":1,"rem":1,"awake":0"#), headers: Self.days).status == 200)
            #expect(try text(db, minutes) == "360 0 240 0", "before: 390, the old unstaged half hour kept beside the new core")
            // A night first sent unstaged, then staged.
            #expect(try postHAE(receiver, Self.night("2026-12-03", #""totalSleep":5,"asleep":5"#), headers: Self.days).status == 200)
            #expect(try postHAE(receiver, Self.night("2026-12-03", #""totalSleep":5,"asleep":0,"core":3,"deep":1,"rem":1"#), headers: Self.days).status == 200)
            #expect(try text(db, "SELECT asleep_min::text FROM health.daily_sleep WHERE day = '2026-12-03'") == "300", "before: 600")
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
        }
    }

    /// A summarized night of `date` from the watch, with `stages` (hours) and 7 hours in bed.
    static func night(_ date: String, _ stages: String) -> [UInt8] {
        Array(#"{"data":{"metrics":[{"name":"sleep_analysis","units":"hr","data":[{"date":"\#(date)",\#(stages),"inBed":7,"sleepEnd":"\#(date) 06:30:00 +0100","source":"Apple Watch"}]}]}}"#.utf8)
    }

    @Test("a summarized night counts on its date as written, whatever the person's time zone, set before or after")
    func nightOnItsDate() throws {
        try withReceiver { receiver, db in
            try db.query("SELECT health.set_time_zone('default', 'Asia/Tokyo')")
            let night = Array(#"{"data":{"metrics":[{"name":"sleep_analysis","units":"hr","data":[{"date":"2026-11-22","asleep":7,"inBed":8,"sleepStart":"2026-11-22 01:00:00 -0800","sleepEnd":"2026-11-22 08:00:00 -0800","inBedStart":"2026-11-22 00:00:00 -0800","inBedEnd":"2026-11-22 08:00:00 -0800","sleepSource":"W"}]}]}}"#.utf8)
            #expect(try postHAE(receiver, night, headers: Self.days).status == 200)
            let dayAndMinutes = "SELECT day::text || ' ' || asleep_min FROM health.daily_sleep"
            #expect(try text(db, dayAndMinutes) == "2026-11-22 420", "08:00 -0800 is the 23rd in Tokyo; the night is the 22nd's")
            try db.query("SELECT health.set_time_zone('default', 'Pacific/Kiritimati')")
            #expect(try text(db, dayAndMinutes) == "2026-11-22 420")
            #expect(try db.query("SELECT * FROM health_store.verify_rollups('default')").isEmpty)
        }
    }

    @Test("the other arrays are kept verbatim in health.hae_records, an item sent again once, and go with the person")
    func records() throws {
        try withReceiver { receiver, db in
            let body = try Bodies.fixture("hae-records.good.json")
            #expect(try postHAE(receiver, body).status == 200)
            #expect(try postHAE(receiver, body).status == 200)
            #expect(try number(db, "SELECT count(*) FROM health.hae_records WHERE person = 'default'") == 6)
            #expect(try text(db, "SELECT item->>'classification' FROM health.hae_records WHERE kind = 'ecg'") == "Sinus Rhythm")
            let deleted = try db.query("SELECT deleted FROM health_store.delete_person('default') WHERE table_name = 'hae_records'")
            #expect(deleted.first?[0] == "6")
        }
    }

    @Test("a point over a bound is quarantined with its reason, the rest stored, 200")
    func bounds() throws {
        try withReceiver { receiver, db in
            let (status, answer) = try postHAE(receiver, Bodies.fixture("hae-bounds.partial.json"))
            #expect(status == 200)
            #expect(answer["quarantined"] == 23 && answer["inserted"] == 3 && answer["workouts"] == 1)
            #expect(try number(db, "SELECT count(*) FROM health.quarantine") == 23)
            #expect(try text(db, "SELECT reason FROM health.quarantine WHERE position = 1")
                    == "data.metrics[0].data[0].Avg: 400 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400")
        }
    }

    @Test("401, 405, 413, 415 and 400 as for healthd, nothing stored", arguments: [
        ("GET", "application/json", 405), ("POST", "text/csv", 415), ("POST", "application/x-www-form-urlencoded", 415),
        ("POST", "", 415),
    ])
    func refusals(method: String, contentType: String, status: Int) throws {
        try withReceiver { receiver, db in
            let headers = contentType.isEmpty ? [] : [(name: "Content-Type", value: contentType)]
            let response = try HTTPTestClient.request(port: receiver.port, method: method, path: "/hae", headers: headers,
                                                      body: method == "GET" ? [] : Bodies.fixture("hae-records.good.json"))
            #expect(response.status == status)
            if status == 405 { #expect(response.header("Allow") == "POST") }
            #expect(try counts(db).deliveries == 0)
        }
    }

    @Test("a body that is not {\"data\": {…}} with arrays is 400 naming the path; a wrong credential 401; over --max-hae-body 413")
    func frameAndLimits() throws {
        try TestPostgres.withDatabase { db in
            let receiver = try RunningReceiver(connectionString: db.connectionString, maxHAEBody: 4096)
            defer { receiver.stop() }
            let bad = try receiver.post(Bodies.fixture("hae-metrics-object.bad.json"), path: "/hae")
            #expect(bad.status == 400 && json(bad)["error"] as? String == "data.metrics: not an array")
            let grouping = try receiver.post(Bodies.fixture("hae-records.good.json"), headers: [("automation-aggregation", "fortnights")], path: "/hae")
            #expect(grouping.status == 400)
            let large = try receiver.post(Bodies.fixture("hae-metrics-summarized.good.json"), path: "/hae")
            #expect(large.status == 413)
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "alice", label: nil).token
            #expect(try receiver.post(Bodies.fixture("hae-records.good.json"), path: "/hae").status == 401)
            let right = try receiver.post(Bodies.fixture("hae-records.good.json"), headers: [("Authorization", "Bearer \(token)")], path: "/hae")
            #expect(right.status == 200)
            #expect(try counts(db, person: "alice").deliveries == 1 && counts(db).deliveries == 0)
        }
    }

    @Test("what it stores counts in health_warehouse_hae_samples_total, its requests under route other: the way and route labels keep their fixed lists")
    func metrics() throws {
        try TestPostgres.withDatabase { db in
            let metrics = ReceiverMetrics(version: "test", schema: "0090", pool: nil, perPerson: false)
            let receiver = try RunningReceiver(connectionString: db.connectionString, metrics: metrics)
            defer { receiver.stop() }
            #expect(try receiver.post(Bodies.fixture("hae-bounds.partial.json"), path: "/hae").status == 200)
            #expect(try receiver.post(Bodies.fixture("hae-bounds.partial.json"), path: "/hae").status == 200)
            let text = metrics.registry.render()
            #expect(text.contains(#"health_warehouse_hae_samples_total{outcome="inserted"} 3"#))
            #expect(text.contains(#"health_warehouse_hae_samples_total{outcome="duplicate"} 3"#))
            #expect(text.contains(#"health_warehouse_hae_samples_total{outcome="quarantined"} 46"#))
            #expect(!text.contains(#"way="hae""#))
            #expect(RouteFamily.of(method: "POST", path: "/hae") == .hae && RouteFamily.hae.label == "other")
        }
    }
}
