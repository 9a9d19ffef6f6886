import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The values of the Stridee views (docs/views.md), against numbers worked out by hand, for bodies pushed
/// over HTTP; and the reader role reading every one of them.
@Suite("Stridee views")
struct StrideeViewsTests {
    static let relayWorkouts = "/v1/accounts/alice/apple/workouts"
    static let relayWellness = "/v1/accounts/alice/apple/wellness"
    /// One thousandth of a degree on the sphere of radius 6,371,008.8 m, in metres.
    static let milliDegree = 6_371_008.8 * Double.pi / 180 * 0.001

    /// Five points, sent out of time order: east along the equator, then north along a meridian
    /// twice, then standing still. Along the equator and a meridian the haversine distance is
    /// exactly R × the angle, so the route is 3 × `milliDegree` long. Altitudes 10, 15, none,
    /// 12, 20 climb +5, then (over the points that have one) −3 and +8: a gain of 13 m.
    static let route = "[" + [
        StrideeBody.point(t: "2026-10-01T06:02:14Z", ["lat": "0.001", "lon": "0.001", "altitude": nil, "speed": nil]),
        StrideeBody.point(t: "2026-10-01T06:02:12Z", ["lat": "0", "lon": "0", "altitude": "10"]),
        StrideeBody.point(t: "2026-10-01T06:02:13Z", ["lat": "0", "lon": "0.001", "altitude": "15"]),
        StrideeBody.point(t: "2026-10-01T08:02:15+02:00", ["lat": "0.002", "lon": "0.001", "altitude": "12"]),
        StrideeBody.point(t: "2026-10-01T06:02:16.250Z", ["lat": "0.002", "lon": "0.001", "altitude": "20"]),
    ].joined(separator: ",") + "]"

    static let workout = StrideeBody.workout([
        "route": route,
        "heartRate": "[" + [("06:03:00", "100"), ("06:04:00", "150"), ("06:05:00", "120"), ("06:06:00", "131")]
            .map { StrideeBody.sample("2026-10-01T\($0.0)Z", $0.1) }.joined(separator: ",") + "]",
        "runningPower": "[" + StrideeBody.sample("2026-10-01T06:03:00Z", "246") + "]",
        "cyclingCadence": "[" + StrideeBody.sample("2026-10-01T06:03:00Z", "88") + "]",
    ])

    @Test("route distance is haversine over consecutive points in time order, gain the sum of rises over the points with an altitude")
    func routeDistanceAndGain() throws {
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWorkouts, Self.workout).status == 202)
            let route = try #require(db.query("""
                SELECT points, distance_m, elevation_gain_m, day::text, geojson::text FROM health.workout_routes WHERE person = 'alice'
                """).first)
            #expect(route[0] == "5")
            #expect(abs(try route.decode(1, as: Double.self) - 3 * Self.milliDegree) < 1e-6)
            #expect(try route.decode(2, as: Double.self) == 13)
            #expect(route[3] == "2026-10-01")
            let geojson = try #require(route[4].flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            #expect(geojson["type"] as? String == "LineString")
            #expect((geojson["coordinates"] as? [[Double]]) == [[0, 0], [0.001, 0], [0.001, 0.001], [0.001, 0.002], [0.001, 0.002]])

            let points = try db.query("""
                SELECT seq, lat, lon, altitude_m, speed_mps, extract(epoch FROM t)::float8 FROM health.workout_route_points
                WHERE person = 'alice' ORDER BY seq
                """)
            #expect(points.map { $0[0] } == ["1", "2", "3", "4", "5"])
            #expect(points.map { $0[3] } == ["10", "15", nil, "12", "20"])
            #expect(points[2][4] == nil && points[0][4] == "2.9")
            #expect(points.map { $0[5] } == ["1790834532", "1790834533", "1790834534", "1790834535", "1790834536.25"])

            let workout = try #require(db.query("""
                SELECT route_points, route_distance_m, elevation_gain_m FROM health.workouts WHERE person = 'alice'
                """).first)
            #expect(workout[0] == "5" && workout[2] == "13")
            #expect(abs(try workout.decode(1, as: Double.self) - 3 * Self.milliDegree) < 1e-6)
        }
    }

    @Test("heart rate min, mean and max of the stream; every stream's samples with their unit")
    func heartRateAndStreams() throws {
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWorkouts, Self.workout).status == 202)
            let hr = try #require(db.query("SELECT heart_rate_min, heart_rate_mean, heart_rate_max FROM health.workouts WHERE person = 'alice'").first)
            #expect(hr[0] == "100" && hr[1] == "125.25" && hr[2] == "150")
            let streams = try cells(db, """
                SELECT stream, unit, count(*)::text, min(value)::text FROM health.workout_streams WHERE person = 'alice'
                GROUP BY stream, unit ORDER BY stream
                """)
            #expect(streams == [["cycling_cadence", "rpm", "1", "88"], ["heart_rate", "count/min", "4", "100"],
                                     ["running_power", "W", "1", "246"]])
        }
    }

    @Test("wellness sleep: minutes per stage, core as light, asleep = light + deep + REM + unspecified, in bed and awake apart")
    func sleepMinutes() throws {
        try withStridee { alice, db throws in
            // core 84 + 32, deep 53, REM 29 min 59.5 s, awake 5, unspecified 30, in bed 11 minutes.
            let stages = [("inBed", "2026-10-01T20:30:00Z", "2026-10-01T20:41:00Z"), ("core", "2026-10-01T20:41:00Z", "2026-10-01T22:05:00Z"),
                          ("deep", "2026-10-01T22:05:00Z", "2026-10-01T22:58:00Z"), ("core", "2026-10-01T22:58:00Z", "2026-10-01T23:30:00Z"),
                          ("rem", "2026-10-01T23:30:00Z", "2026-10-01T23:59:59.5Z"), ("awake", "2026-10-02T00:10:00Z", "2026-10-02T00:15:00Z"),
                          ("asleepUnspecified", "2026-10-02T00:15:00+00:00", "2026-10-02T02:45:00+02:00")]
            let json = stages.map { #"{"stage":"\#($0.0)","start":"\#($0.1)","end":"\#($0.2)"}"# }
            let night = StrideeBody.item("sleep", ["calendarDate": #""2026-10-02""#, "startTime": #""2026-10-01T20:30:00Z""#,
                                                   "endTime": #""2026-10-02T04:10:00Z""#, "stages": "[" + json.joined(separator: ",") + "]"])
            let empty = StrideeBody.item("sleep", ["calendarDate": #""2026-10-03""#, "startTime": #""2026-10-02T21:00:00Z""#, "endTime": nil,
                                                   "final": "false"])
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness([night, empty])).status == 202)
            let rows = try cells(db, """
                SELECT day::text, asleep_min::text, light_min::text, deep_min::text, rem_min::text, unspecified_min::text,
                       awake_min::text, in_bed_min::text, is_final::text, end_at IS NULL
                FROM health.wellness_sleep WHERE person = 'alice' ORDER BY day
                """)
            // REM ends half a second before midnight: 29.991666… minutes.
            let rem = (29 * 60 + 59.5) / 60
            let first = try #require(rows.first)
            #expect(first[0] == "2026-10-02")
            #expect(first[1].flatMap(Double.init) == 116 + 53 + rem + 30)
            #expect(Array(first[2...3]) == ["116", "53"])
            #expect(first[4].flatMap(Double.init) == rem)
            #expect(Array(first[5...9]) == ["30", "5", "11", "true", "f"])
            #expect(rows.last == ["2026-10-03", "0", "0", "0", "0", "0", "0", "0", "false", "t"], "a night without stages is all zeros")
        }
    }

    @Test("wellness values: one row per number, metric names with units, sample lists at their own instants")
    func wellnessValues() throws {
        try withStridee { alice, db throws in
            let items = [
                StrideeBody.item("daily", ["steps": "8123", "restingHeartRate": "52", "distanceMeters": "null"]),
                StrideeBody.item("hrv", ["startTime": #""2026-10-01T01:00:00Z""#,
                                         "samples": #"[{"t":"2026-10-01T01:00:00Z","v":48.2},{"t":"2026-10-01T02:00:00Z","v":51}]"#]),
                StrideeBody.item("pulse_ox", ["startTime": #""2026-10-01T02:00:00Z""#, "samples": #"[{"t":"2026-10-01T02:30:00Z","v":97}]"#]),
                StrideeBody.item("skin_temperature", ["startTime": #""2026-10-01T03:00:00Z""#, "celsius": "34.1"]),
            ]
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness(items)).status == 202)
            let rows = try cells(db, """
                SELECT kind, metric, value::text, unit, to_char(measured_at AT TIME ZONE 'UTC', 'HH24:MI')
                FROM health.wellness_values WHERE person = 'alice' ORDER BY kind, measured_at, metric
                """)
            #expect(rows == [
                ["daily", "resting_heart_rate_bpm", "52", "count/min", "22:00"],
                ["daily", "steps", "8123", "count", "22:00"],
                ["hrv", "hrv_sdnn_ms", "48.2", "ms", "01:00"],
                ["hrv", "hrv_sdnn_ms", "51", "ms", "02:00"],
                ["pulse_ox", "oxygen_saturation_pct", "97", "%", "02:30"],
                ["skin_temperature", "skin_temperature_c", "34.1", "degC", "03:00"],
            ])
        }
    }

    @Test("daily_healthkit_check: the per-source winner beside the latest daily item of the day, difference = warehouse − healthkit")
    func healthkitCheck() throws {
        try withStridee { alice, db throws in
            let watch = "com.apple.health.watch", phone = "com.apple.health.phone"
            let samples = [
                Bodies.quantity(uuid: "C0000000-0000-4000-8000-000000000001", source: watch, start: "2026-10-01T09:00:00.000+02:00", value: "6000"),
                Bodies.quantity(uuid: "C0000000-0000-4000-8000-000000000002", source: watch, start: "2026-10-01T18:00:00.000+02:00", value: "2000"),
                Bodies.quantity(uuid: "C0000000-0000-4000-8000-000000000003", source: phone, start: "2026-10-01T12:00:00.000+02:00", value: "5000"),
                Bodies.quantity(uuid: "C0000000-0000-4000-8000-000000000004", type: "HKQuantityTypeIdentifierActiveEnergyBurned",
                                source: watch, start: "2026-10-01T12:00:00.000+02:00", value: "500", unit: "kcal"),
            ]
            #expect(try alice.receiver.post(Bodies.json(samples: samples), headers: alice.authorization).status == 200)
            let items = [
                // An earlier item of that calendarDate: not the latest, so not HealthKit's word for the day.
                StrideeBody.item("daily", ["startTime": #""2026-09-30T21:00:00Z""#, "steps": "1", "activeKilocalories": "1"]),
                StrideeBody.item("daily", ["steps": "8123", "activeKilocalories": "512.5", "flightsClimbed": "7"]),
            ]
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness(items)).status == 202)
            let rows = try cells(db, """
                SELECT day::text, metric, warehouse_value::text, healthkit_value::text, difference::text
                FROM health.daily_healthkit_check WHERE person = 'alice' ORDER BY metric
                """)
            #expect(rows == [["2026-10-01", "active_energy_kcal", "500", "512.5", "-12.5"],
                                  ["2026-10-01", "steps", "8000", "8123", "-123"]],
                    "the watch's 8000 steps win over the phone's 5000; flights exist only in HealthKit: no row")
        }
    }

    @Test("a login granted health_reader reads every Stridee view, with rows, and no health_store table behind them")
    func readerReadsEveryView() throws {
        try withStridee { alice, db throws in
            #expect(try alice.send("POST", Self.relayWorkouts, Self.workout).status == 202)
            let steps = Bodies.quantity(uuid: "C0000000-0000-4000-8000-000000000001", start: "2026-10-01T09:00:00.000+02:00", value: "6000")
            #expect(try alice.receiver.post(Bodies.json(samples: [steps]), headers: alice.authorization).status == 200)
            let sleep = StrideeBody.item("sleep", ["stages": #"[{"stage":"deep","start":"2026-10-01T01:00:00Z","end":"2026-10-01T02:00:00Z"}]"#])
            let items = [StrideeBody.item("daily", ["steps": "6100"]), sleep]
            #expect(try alice.send("POST", Self.relayWellness, StrideeBody.wellness(items)).status == 202)

            let role = "stridee_reader_" + db.name
            try db.query("CREATE ROLE \(role) LOGIN PASSWORD 'reader-test'")
            try db.query("GRANT health_reader TO \(role)")
            defer { _ = try? db.query("DROP ROLE IF EXISTS \(role)") }
            let reader = try PostgresConnection(connectionString: db.connectionString(user: role, password: "reader-test"))
            defer { reader.close() }
            for view in ["workouts", "workout_route_points", "workout_routes", "workout_streams", "wellness", "wellness_values",
                         "wellness_sleep", "daily_healthkit_check"] {
                let rows = try reader.query("SELECT * FROM health.\(view) WHERE person = 'alice'")
                #expect(rows.count > 0, "health.\(view)")
            }
            let granted = try TestPostgres.readerGrantedTables(try db.connect())
            for table in ["stridee_workouts", "workout_routes", "workout_streams", "wellness_items", "connections", "wellness_metrics"]
            where !granted.contains(table) {
                let error = #expect(throws: PostgresError.self) { try reader.query("SELECT * FROM health_store.\(table)") }
                #expect(error?.sqlState == "42501", "health_store.\(table)")
            }
            for call in ["SELECT health_store.set_connection('alice', false, false, now())",
                         "SELECT health_store.store_wellness('alice', true, false, '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', now())"] {
                let error = #expect(throws: PostgresError.self) { try reader.query(call) }
                #expect(error?.sqlState == "42501", "\(call)")
            }
        }
    }
}
