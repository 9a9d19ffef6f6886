import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// How Stridee bodies are kept (docs/stridee.md): one workout whatever brought it, a resend
/// replacing the whole workout, wellness items replaced one by one, a bad item refusing its body.
@Suite("Stridee storage")
struct StrideeStorageTests {
    static let uuid = StrideeBody.uuid
    static let relayWorkouts = "/v1/accounts/alice/apple/workouts"
    static let relayWellness = "/v1/accounts/alice/apple/wellness"

    /// healthd's copy of the seed's workout: the same HKWorkout uuid, its own distance and energy.
    static let healthdTwin = Bodies.workout(uuid: uuid, start: "2026-10-01T08:02:11.000+02:00", end: "2026-10-01T08:48:40.000+02:00",
                                            distance: "8400", energy: "600", source: "com.apple.health.watch")

    /// The seed's workout (8412.6 m, 612 kcal), lower-case uuid, with a heart-rate stream and a route.
    static let body = StrideeBody.workout([
        "uuid": "\"\(uuid.lowercased())\"",
        "heartRate": "[" + StrideeBody.sample("2026-10-01T06:02:16Z", "112") + "," + StrideeBody.sample("2026-10-01T06:30:00Z", "150") + "]",
        "route": "[" + StrideeBody.point() + "," + StrideeBody.point(t: "2026-10-01T06:02:20Z", ["lat": "47.3771"]) + "]",
    ])

    /// What the views say of the one workout of 2026-10-01, and the rollups' own check.
    struct WorkoutView: Equatable {
        var workouts: Int
        var origin: String
        var distance: Double
        var energy: Double
        var source: String
        var serverType: String?
        var heartRateMax: Double?
        var routePoints: Int?
        var dailyWorkouts: Int
        var dailyDistance: Double
        var summaryWorkouts: Int
        var rollupDrift: Int
    }

    static func view(_ db: TestDatabase) throws -> WorkoutView {
        let row = try #require(db.query("""
            SELECT (SELECT count(*) FROM health.workouts WHERE person = 'alice'),
                   w.origin, w.distance_m, w.energy_kcal, w.source, w.server_type, w.heart_rate_max, w.route_points,
                   d.workouts, d.distance_m, s.workouts
            FROM health.workouts w
            JOIN health.daily_workouts d ON d.person = w.person AND d.day = w.day
            JOIN health.daily_summary s ON s.person = w.person AND s.day = w.day
            WHERE w.person = 'alice' AND w.uuid = $1
            """, [uuid]).first)
        return WorkoutView(workouts: try row.decode(0), origin: row[1] ?? "", distance: try row.decode(2), energy: try row.decode(3),
                           source: row[4] ?? "", serverType: row[5], heartRateMax: try row.decodeIfPresent(6),
                           routePoints: try row.decodeIfPresent(7), dailyWorkouts: try row.decode(8), dailyDistance: try row.decode(9),
                           summaryWorkouts: try row.decode(10),
                           // Alone in its statement: a function that reads tables is never called
                           // inside another query (docs/scaling.md; on Citus it is delegated).
                           rollupDrift: try db.scalar("SELECT count(*) FROM health_store.verify_rollups('alice')", as: Int.self) ?? -1)
    }

    /// healthd's values, the body's additions: one workout, counted once.
    static let merged = WorkoutView(workouts: 1, origin: "both", distance: 8400, energy: 600, source: "com.apple.health.watch",
                                    serverType: "RUNNING", heartRateMax: 150, routePoints: 2, dailyWorkouts: 1, dailyDistance: 8400,
                                    summaryWorkouts: 1, rollupDrift: 0)

    @Test("healthd's workout first, then the Stridee body of the same uuid: one workout, healthd's values, the body's stream and route")
    func healthdFirst() throws {
        try withStridee { alice, db throws in
            #expect(try alice.receiver.post(Self.healthdTwin, headers: alice.authorization).status == 200)
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            #expect(try Self.view(db) == Self.merged)
            // A changed body later still leaves healthd's values.
            #expect(try alice.send("POST", Self.relayWorkouts, StrideeBody.workout(["totalDistanceMeters": "9999.0"])).status == 202)
            var expected = Self.merged
            (expected.heartRateMax, expected.routePoints) = (nil, nil)
            #expect(try Self.view(db) == expected)
            #expect(try db.scalar("SELECT origin FROM health_store.samples WHERE person = 'alice'", as: String.self) == "healthd")
        }
    }

    @Test("the Stridee body first, then healthd's workout of the same uuid: healthd's copy takes over the one workout")
    func strideeFirst() throws {
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            let alone = WorkoutView(workouts: 1, origin: "stridee", distance: 8412.6, energy: 612, source: "com.apple.health",
                                    serverType: "RUNNING", heartRateMax: 150, routePoints: 2, dailyWorkouts: 1, dailyDistance: 8412.6,
                                    summaryWorkouts: 1, rollupDrift: 0)
            #expect(try Self.view(db) == alone)
            let answer = try alice.receiver.post(Self.healthdTwin, headers: alice.authorization)
            #expect(answer.status == 200)
            #expect(json(answer)["replaced"] as? Int == 1, "healthd's copy replaces the body's sample")
            #expect(try Self.view(db) == Self.merged)
            // The same body again changes nothing.
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            #expect(try Self.view(db) == Self.merged)
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE person = 'alice'", as: Int.self) == 1)
        }
    }

    @Test("a changed copy replaces the workout whole: no stale route point or stream sample, the header and day totals follow")
    func replacedWhole() throws {
        try withStridee { alice, db throws in
            let first = StrideeBody.workout([
                "heartRate": "[" + (0..<4).map { StrideeBody.sample("2026-10-01T06:0\($0 + 3):00Z", "\(120 + $0)") }.joined(separator: ",") + "]",
                "runningPower": "[" + StrideeBody.sample("2026-10-01T06:03:00Z", "250") + "]",
                "route": "[" + (0..<5).map { StrideeBody.point(t: "2026-10-01T06:0\($0 + 3):00Z") }.joined(separator: ",") + "]",
            ])
            #expect(try alice.send("POST", Self.relayWorkouts, first).status == 202)
            let firstReceived = try db.scalar("SELECT first_received_at::text FROM health_store.stridee_workouts", as: String.self)
            #expect(try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self) == 5)
            #expect(try db.scalar("SELECT count(*) FROM health.workout_streams", as: Int.self) == 5)

            let second = StrideeBody.workout([
                "duration": "1200.0", "endDate": #""2026-10-01T06:30:00Z""#, "serverType": #""WALKING""#,
                "heartRate": "[" + StrideeBody.sample("2026-10-01T06:10:00Z", "99") + "]",
                "route": "[" + StrideeBody.point(t: "2026-10-01T06:10:00Z", ["lat": "47.5"]) + "," + StrideeBody.point(t: "2026-10-01T06:11:00Z") + "]",
            ])
            #expect(try alice.send("POST", Self.relayWorkouts, second).status == 202)
            let points = try db.query("SELECT seq, lat, t FROM health.workout_route_points WHERE person = 'alice' ORDER BY seq")
            #expect(points.map { $0[0] } == ["1", "2"])
            #expect(points.first?[1] == "47.5")
            let streams = try db.query("SELECT stream, value FROM health.workout_streams WHERE person = 'alice'")
            #expect(streams.count == 1 && streams.first?[0] == "heart_rate" && streams.first?[1] == "99")
            let workout = try #require(db.query("""
                SELECT server_type, activity_name, duration_s, heart_rate_min, heart_rate_max, route_points
                FROM health.workouts WHERE person = 'alice'
                """).first)
            #expect(workout[0] == "WALKING" && workout[1] == "walking" && workout[2] == "1200" && workout[3] == "99" && workout[4] == "99")
            #expect(workout[5] == "2")
            #expect(try db.scalar("SELECT duration_s FROM health.daily_workouts WHERE person = 'alice'", as: Double.self) == 1200)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('alice')", as: Int.self) == 0)
            #expect(try db.scalar("SELECT first_received_at::text FROM health_store.stridee_workouts", as: String.self) == firstReceived,
                    "still the workout first received then")
        }
    }

    @Test("a wellness item sent again replaces that item only; two copies in one body: the later wins")
    func wellnessResend() throws {
        try withStridee { alice, db throws in
            let monday = StrideeBody.item("daily", ["steps": "8000", "final": "false"])
            let tuesday = StrideeBody.item("daily", ["calendarDate": #""2026-10-02""#, "startTime": #""2026-10-01T22:00:00Z""#,
                                                     "endTime": #""2026-10-02T22:00:00Z""#, "steps": "9000"])
            let weight = StrideeBody.item("body_composition", ["startTime": #""2026-10-01T05:00:00Z""#, "weightKg": "72.4"])
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness([monday, tuesday, weight])).status == 202)
            let before = try db.query("""
                SELECT kind, start_at::text, item::text, last_received_at::text FROM health_store.wellness_items ORDER BY kind, start_at
                """).map { [$0[0], $0[1], $0[2], $0[3]] }

            // Monday resent as the day went on, twice in one body, plus a brand-new item.
            let later = StrideeBody.item("daily", ["steps": "8500", "final": "false", "extraField": #""kept""#])
            let final = StrideeBody.item("daily", ["steps": "8700", "final": "true", "extraField": #""kept""#])
            let hrv = StrideeBody.item("hrv", ["startTime": #""2026-10-01T01:00:00Z""#, "samples": #"[{"t":"2026-10-01T01:00:00Z","v":48.2}]"#])
            let answer = try alice.send("POST", Self.relayWellness, StrideeBody.wellness([later, hrv, final]))
            // Two copies of Monday are one item stored (the answer counts the rows stored).
            #expect(answer.bodyText == #"{"items":2,"status":"active"}"#)
            let after = try db.query("""
                SELECT kind, start_at::text, item::text, last_received_at::text FROM health_store.wellness_items ORDER BY kind, start_at
                """).map { [$0[0], $0[1], $0[2], $0[3]] }
            #expect(after.count == 4)
            let unchanged = after.filter { row in before.contains(row) }
            #expect(unchanged.count == 2, "Tuesday and the weight are untouched, received times included")
            let monday2 = try #require(db.query("""
                SELECT fields->>'steps', is_final, fields->>'extraField', first_received_at < last_received_at
                FROM health.wellness WHERE kind = 'daily' AND calendar_date = '2026-10-01'
                """).first)
            #expect(monday2[0] == "8700" && monday2[1] == "t" && monday2[2] == "kept" && monday2[3] == "t")
        }
    }

    @Test("a person who only pushed Stridee bodies, with no token, has their row in health.settings, as in person list")
    func strideeOnlySettings() throws {
        try withReceiver { receiver, db in
            let weight = StrideeBody.item("body_composition", ["startTime": #""2026-10-01T05:00:00Z""#, "weightKg": "72.4"])
            let answer = try receiver.post(Array(StrideeBody.wellness([weight]).utf8), path: "/v1/accounts/default/apple/wellness")
            #expect(answer.status == 202)
            #expect(try cells(db, "SELECT person, time_zone, stale_after::text FROM health.settings") == [["default", nil, "06:00:00"]],
                    "before: no row (the view knew people from settings, batches and tokens only)")
            #expect(try cells(db, "SELECT person FROM health_store.people()") == [["default"]])
        }
    }

    @Test("one bad item refuses the whole body: none of its good items is stored, and what was held stays as it was")
    func badItemRefusesBody() throws {
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness([StrideeBody.item("daily", ["steps": "8000"])])).status == 202)
            let held = try db.query("SELECT item::text FROM health_store.wellness_items").map { $0[0] }
            let body = StrideeBody.wellness([
                StrideeBody.item("daily", ["steps": "1"]),
                StrideeBody.item("fitness", ["startTime": #""2026-10-01T07:00:00Z""#, "vo2Max": "44"]),
                StrideeBody.item("pulse_ox", ["samples": #"[{"t":"2026-10-01T03:00:00Z","v":97},{"t":"2026-10-01T03:05:00Z","v":120}]"#]),
            ])
            let answer = try alice.send("POST", Self.relayWellness, body)
            #expect(answer.status == 400)
            #expect((json(answer)["error"] as? String)?.hasPrefix("items[2].samples[1].v: ") == true, "\(answer.bodyText)")
            #expect(try db.query("SELECT item::text FROM health_store.wellness_items").map { $0[0] } == held)
        }
    }

    /// An unpacked export of alice's made on 2026-11-01 that holds one other run (2026-09-30) and
    /// not the seed's workout of 2026-10-01: reconciled, it marks that one deleted.
    static func exportLackingTheWorkout() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stridee-reconcile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <ExportDate value="2026-11-01 09:00:00 +0000"/>
             <Me HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="Apple Watch" \
            startDate="2026-09-30 06:00:00 +0000" endDate="2026-09-30 06:30:00 +0000"/>
            </HealthData>

            """.write(to: folder.appendingPathComponent("export.xml"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test("a workout a reconciliation marked deleted comes back when the identical body is sent again, counted again in every view")
    func identicalResendRevives() throws {
        let folder = try Self.exportLackingTheWorkout()
        defer { try? FileManager.default.removeItem(at: folder) }
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            var held = try Self.view(db)
            let out = try CLIProcess.run(["import-apple-health", folder.appendingPathComponent("export.xml").path, "--person", "alice",
                                          "--reconcile", "--force", "--json"], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples WHERE uuid = $1::uuid", [Self.uuid], as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health.workouts WHERE uuid = $1::uuid", [Self.uuid], as: Int.self) == 0)

            let answer = try alice.send("POST", Self.relayWorkouts, Self.body)
            #expect(answer.status == 202)
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == 0)
            held.workouts = 2  // the export's run of 2026-09-30 besides it
            #expect(try Self.view(db) == held, "the same workout, its day's rollups with it")
        }
    }

    /// When alice last sent anything, as `GET /stats`, `person list` and `health.freshness` each
    /// say it (ISO 8601 UTC, milliseconds).
    static func lastReceived(_ alice: StrideeClient, _ db: TestDatabase) throws -> [String?] {
        let stats = json(try alice.send("GET", "/stats"))["last_received_at"] as? String
        let listed = try PersonStore(pool: alice.receiver.pool).list().first { $0.person == "alice" }?.lastReceivedAt
        let fresh = try db.scalar("""
            SELECT to_char(last_received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM health.freshness WHERE person = 'alice'
            """, as: String.self)
        return [stats, listed, fresh]
    }

    /// The latest `column` of alice's rows of `table`, written as those three write it.
    static func latest(_ db: TestDatabase, _ table: String, _ column: String) throws -> String {
        try #require(try db.scalar("""
            SELECT to_char(max(\(column)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM health_store.\(table) WHERE person = 'alice'
            """, as: String.self))
    }

    @Test("a Stridee push is a receipt: /stats, person list and health.freshness say when the last one arrived, each later push or batch moves it; deliveries stay batches")
    func pushesAreReceipts() throws {
        try withStridee { alice, db throws in
            #expect(try Self.lastReceived(alice, db) == [nil, nil, nil])
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            let workout = try Self.latest(db, "stridee_workouts", "last_received_at")
            #expect(try Self.lastReceived(alice, db) == [workout, workout, workout])

            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness([StrideeBody.item()])).status == 202)
            let wellness = try Self.latest(db, "wellness_items", "last_received_at")
            #expect(wellness > workout)
            #expect(try Self.lastReceived(alice, db) == [wellness, wellness, wellness])

            // The same body again is received too.
            #expect(try alice.send("POST", Self.relayWorkouts, Self.body).status == 202)
            let again = try Self.latest(db, "stridee_workouts", "last_received_at")
            #expect(again > wellness)
            #expect(try Self.lastReceived(alice, db) == [again, again, again])
            #expect(json(try alice.send("GET", "/stats"))["deliveries"] as? Int == 0, "a push is no delivery")
            #expect(try cells(db, "SELECT last_export_id::text, last_basis FROM health.freshness") == [[nil, nil]])

            // A healthd batch after it is the last receipt, with its export run; a push after that again.
            let batch = Bodies.json(samples: [Bodies.quantity(uuid: "0E5C1D2A-3333-4000-8000-000000000001",
                                                              start: "2026-10-01T07:00:00.000+02:00", value: "10")])
            #expect(try alice.receiver.post(batch, headers: alice.authorization).status == 200)
            let delivered = try Self.latest(db, "deliveries", "received_at")
            #expect(try Self.lastReceived(alice, db) == [delivered, delivered, delivered])
            #expect(try cells(db, "SELECT last_export_id::text, last_basis FROM health.freshness")
                    == [["6c7f1e22-1b3d-4a5e-9f00-2c1d4e5a6b70", "window"]])
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness([StrideeBody.item("daily", ["steps": "9"])])).status == 202)
            let last = try Self.latest(db, "wellness_items", "last_received_at")
            #expect(last > delivered)
            #expect(try Self.lastReceived(alice, db) == [last, last, last])
            #expect(try cells(db, "SELECT last_export_id::text, last_basis FROM health.freshness") == [[nil, nil]])
            #expect(json(try alice.send("GET", "/stats"))["deliveries"] as? Int == 1)
        }
    }
}
