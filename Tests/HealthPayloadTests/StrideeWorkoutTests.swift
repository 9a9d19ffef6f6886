import DemoData
import Foundation
import HealthPayload
import Testing
import TestSupport

@Suite("Stridee healthkit.v1 workouts")
struct StrideeWorkoutTests {
    @Test("the seed's example decodes to its values")
    func seedExample() throws {
        let w = try workout(Fixture.bytes("stridee-workout.good.json"))
        #expect(w.uuid == "5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4")
        #expect(w.activityType == 37)
        #expect(w.serverType == .running)
        #expect(w.sourceName == "Apple Watch")
        #expect(w.sourceBundleId == "com.apple.health.7B3C0E5A-…")
        #expect(w.deviceName == "Apple Watch")
        #expect(w.startDate == Timestamp(microsecondsSinceEpoch: micros(2026, 10, 1, 6, 2, 11), offsetSeconds: 0))
        #expect(w.endDate.microsecondsSinceEpoch == micros(2026, 10, 1, 6, 48, 40))
        #expect(w.duration == 2789)
        #expect(w.totalDistanceMeters == 8412.6)
        #expect(w.totalEnergyKcal == 612)
        #expect(w.heartRate == WorkoutStream(times: [micros(2026, 10, 1, 6, 2, 16)], values: [112]))
        #expect(w.runningPower == WorkoutStream(times: [micros(2026, 10, 1, 6, 2, 16)], values: [246]))
        #expect(w.cyclingPower.isEmpty && w.cyclingCadence.isEmpty)
        #expect(w.route.times == [micros(2026, 10, 1, 6, 2, 12)])
        #expect(w.route.latitudes == [47.3769] && w.route.longitudes == [8.5417])
        #expect(w.route.altitudes == [408.2] && w.route.speeds == [2.9] && w.route.courses == [184.0])
        #expect(w.route.horizontalAccuracies == [4.1] && w.route.verticalAccuracies == [3.0])
        #expect(w.localDate == "2026-10-01")
    }

    @Test("the relay reference's example body is refused at its first placeholder, a heart rate of 0")
    func relayExample() throws {
        let error = try #require(workoutError(Fixture.text("stridee-relay-example.bad.json")))
        #expect(error.description == "heartRate[0].v: 0 is outside its plausible range: > 0 and < 400")
        #expect(error.reason == .invalid)
    }

    @Test("a required field that is missing names itself",
          arguments: ["uuid", "activityType", "serverType", "startDate", "endDate", "duration"])
    func requiredMissing(key: String) throws {
        let error = try #require(workoutError(StrideeBody.workout([key: nil])))
        #expect(error.path == key)
        #expect(error.description == "\(key): missing")
    }

    @Test("a field of the wrong type or value names itself and the problem", arguments: [
        ("uuid", "42", "uuid: not a string"),
        ("uuid", "null", "uuid: not a string"),
        ("uuid", #""5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E""#, #"uuid: "5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E" is not a UUID"#),
        ("activityType", #""37""#, "activityType: not an integer"),
        ("activityType", "37.5", "activityType: not an integer"),
        ("activityType", "2147483648", "activityType: 2147483648 does not fit a 32-bit integer"),
        ("serverType", "1", "serverType: not a string"),
        ("serverType", #""running""#, "serverType: `running` is not one of RUNNING, CYCLING, SWIMMING, WALKING, HIKING, ROWING, CROSS_COUNTRY_SKIING, ALPINE_SKIING, SNOWBOARDING, PADDLING, ROCK_CLIMBING, TRAINING, GENERIC"),
        ("startDate", #""yesterday""#, "startDate: not an ISO 8601 timestamp"),
        ("startDate", "1790834531", "startDate: not an ISO 8601 timestamp"),
        ("endDate", #""2026-10-01T06:48:40""#, "endDate: not an ISO 8601 timestamp"),
        ("endDate", #""2026-10-01T06:02:10Z""#, "endDate: 2026-10-01T06:02:10.000000Z is before startDate 2026-10-01T06:02:11.000000Z"),
        ("duration", #""2789""#, "duration: not a number"),
        ("duration", "-0.5", "duration: -0.5 is negative"),
        ("sourceName", "5", "sourceName: not a string"),
        ("sourceBundleId", "[]", "sourceBundleId: not a string"),
        ("deviceName", #""Watch\u0000""#, #"deviceName: contains the escape \u0000"#),
        ("deviceName", #""\ud800""#, "deviceName: contains an unpaired surrogate escape"),
        ("totalDistanceMeters", #""8412""#, "totalDistanceMeters: not a number"),
        ("totalDistanceMeters", "1e16", "totalDistanceMeters: 1e16 is beyond ±1e15"),
        ("totalDistanceMeters", "-1000000000000001", "totalDistanceMeters: -1000000000000001 is beyond ±1e15"),
        ("totalEnergyKcal", "1e400", "totalEnergyKcal: 1e400 is beyond ±1e15"),
        ("totalEnergyKcal", "1e-320", "totalEnergyKcal: 1e-320 is too close to zero (below 1e-300)"),
        ("totalEnergyKcal", "1e-1001", "totalEnergyKcal: 1e-1001 is beyond PostgreSQL's numeric range"),
        ("note", #""a\u0000b""#, #"note: contains the escape \u0000"#),
        ("note", #"{"deep":[1e1001]}"#, "note: holds 1e1001, beyond PostgreSQL's numeric range"),
        ("heartRate", "{}", "heartRate: not an array"),
        ("route", "7", "route: not an array"),
    ])
    func mistyped(key: String, value: String, message: String) throws {
        let error = try #require(workoutError(StrideeBody.workout([key: value])))
        #expect(error.description == message)
        #expect(error.path == key)
        #expect(error.reason == .invalid)
    }

    @Test("the bounds themselves are accepted: lat ±90, lon ±180, |x| = 1e15, duration 0, end equal to start")
    func boundsAccepted() throws {
        let body = StrideeBody.workout([
            "duration": "0", "endDate": "\"2026-10-01T06:02:11Z\"", "totalDistanceMeters": "1e15", "totalEnergyKcal": "0",
            "route": "[" + StrideeBody.point(["lat": "90", "lon": "-180", "altitude": "-1000000000000000"]) + ","
                + StrideeBody.point(["lat": "-90.0", "lon": "180.0"]) + "]",
        ])
        let w = try workout(body)
        #expect(w.duration == 0)
        #expect(w.endDate == w.startDate)
        #expect(w.totalDistanceMeters == 1e15 && w.totalEnergyKcal == 0)
        #expect(w.route.altitudes.first == -1e15)
        #expect(w.route.latitudes == [90, -90] && w.route.longitudes == [-180, 180])
    }

    @Test("a bad stream sample or route point is named with its index from 0", arguments: [
        ("heartRate", [StrideeBody.sample("2026-10-01T06:02:16Z", "112"), #"{"t":"06:02:17","v":113}"#], "heartRate[1].t: not an ISO 8601 timestamp"),
        ("heartRate", [#"{"v":113}"#], "heartRate[0].t: missing"),
        ("runningPower", [StrideeBody.sample("2026-10-01T06:02:16Z", "246"), #"{"t":"2026-10-01T06:02:17Z"}"#], "runningPower[1].v: missing"),
        ("cyclingPower", [#"{"t":"2026-10-01T06:02:17Z","v":"246"}"#], "cyclingPower[0].v: not a number"),
        ("cyclingCadence", [#"{"t":"2026-10-01T06:02:17Z","v":null}"#], "cyclingCadence[0].v: not a number"),
        ("cyclingCadence", ["[1]"], "cyclingCadence[0]: not an object"),
        ("route", [StrideeBody.point(), StrideeBody.point(), StrideeBody.point(), StrideeBody.point(["lat": "95.2"])], "route[3].lat: 95.2 is outside [-90, 90]"),
        ("route", [StrideeBody.point(["lat": "-90.5"])], "route[0].lat: -90.5 is outside [-90, 90]"),
        ("route", [StrideeBody.point(["lon": "180.0001"])], "route[0].lon: 180.0001 is outside [-180, 180]"),
        ("route", [StrideeBody.point(["lat": nil])], "route[0].lat: missing"),
        ("route", [StrideeBody.point(["lon": "null"])], "route[0].lon: not a number"),
        ("route", [StrideeBody.point(["t": nil])], "route[0].t: missing"),
        ("route", [StrideeBody.point(["altitude": "\"high\""])], "route[0].altitude: not a number"),
        ("route", [StrideeBody.point(["speed": "2e15"])], "route[0].speed: 2e15 is beyond ±1e15"),
        ("route", ["null"], "route[0]: not an object"),
    ] as [(String, [String], String)])
    func badElement(stream: String, elements: [String], message: String) throws {
        let error = try #require(workoutError(StrideeBody.workout([stream: "[" + elements.joined(separator: ",") + "]"])))
        #expect(error.description == message)
        #expect(error.reason == .invalid)
    }

    @Test("format may be absent, null or healthkit.v1 (escaped or not); anything else is unsupportedFormat",
          arguments: [
              (nil, true), ("null", true), (#""healthkit.v1""#, true), (#""healthkit\u002ev1""#, true),
              (#""healthkit.wellness.v1""#, false), (#""HEALTHKIT.V1""#, false), (#""healthkit.v2""#, false), (#""""#, false),
              ("1", false), ("[]", false), ("true", false),
          ] as [(String?, Bool)])
    func formatRule(format: String?, accepted: Bool) throws {
        let body = StrideeBody.workout(["format": format])
        if accepted {
            #expect(workoutError(body) == nil)
        } else {
            let error = try #require(workoutError(body))
            #expect(error.reason == .unsupportedFormat)
            #expect(error.description == "format: \(format!) is not \"healthkit.v1\"")
        }
    }

    @Test("optional header fields may be null or absent; null numbers in a route point are nil")
    func nullsAreAbsent() throws {
        let w = try workout(StrideeBody.workout([
            "sourceName": "null", "sourceBundleId": nil, "deviceName": "null", "totalDistanceMeters": "null", "totalEnergyKcal": nil,
            "heartRate": "null", "route": "[" + StrideeBody.point(["altitude": "null", "speed": nil, "course": "null",
                                                                    "horizontalAccuracy": "null", "verticalAccuracy": nil]) + "]",
        ]))
        #expect(w.sourceName == nil && w.sourceBundleId == nil && w.deviceName == nil)
        #expect(w.totalDistanceMeters == nil && w.totalEnergyKcal == nil)
        #expect(w.heartRate.isEmpty)
        #expect(w.route.count == 1)
        #expect(w.route.altitudes == [nil] && w.route.speeds == [nil] && w.route.courses == [nil])
        #expect(w.route.horizontalAccuracies == [nil] && w.route.verticalAccuracies == [nil])
    }

    @Test("uuid is kept as written but upper case")
    func uuidUpperCase() throws {
        let w = try workout(StrideeBody.workout(["uuid": #""5d1e8c1a-2f7b-4e0c-9a43-71c6b0f8d2e4""#]))
        #expect(w.uuid == "5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4")
    }

    @Test("streams and route out of time order are sorted, stably, with every column moved together")
    func sortedByTime() throws {
        let hr = [("06:02:19", "1"), ("06:02:17", "2"), ("06:02:18", "3"), ("06:02:17", "4")]
            .map { StrideeBody.sample("2026-10-01T\($0.0)Z", $0.1) }
        let route = [
            StrideeBody.point(t: "2026-10-01T06:02:14Z", ["lat": "3", "altitude": "null"]),
            StrideeBody.point(t: "2026-10-01T08:02:12+02:00", ["lat": "1", "speed": "1.5"]),
            StrideeBody.point(t: "2026-10-01T06:02:13Z", ["lat": "2", "course": nil]),
        ]
        let w = try workout(StrideeBody.workout(["heartRate": "[" + hr.joined(separator: ",") + "]", "route": "[" + route.joined(separator: ",") + "]"]))
        let t0 = micros(2026, 10, 1, 6, 2, 17)
        #expect(w.heartRate.times == [t0, t0, t0 + 1_000_000, t0 + 2_000_000])
        #expect(w.heartRate.values == [2, 4, 3, 1])
        #expect(w.route.times == [micros(2026, 10, 1, 6, 2, 12), micros(2026, 10, 1, 6, 2, 13), micros(2026, 10, 1, 6, 2, 14)])
        #expect(w.route.latitudes == [1, 2, 3])
        #expect(w.route.altitudes == [408.2, 408.2, nil])
        #expect(w.route.speeds == [1.5, 2.9, 2.9])
        #expect(w.route.courses == [184, nil, 184])
    }

    @Test("headerJSON is the top-level object without the five arrays, other members byte for byte, unknown keys kept")
    func headerJSON() throws {
        let body = """
            {"format":null, "heartRate":[{"t":"2026-10-01T06:02:16Z","v":112}],"uuid":"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4",\
            "activityType":37,"route":[],"serverType":"RUNNING","startDate":"2026-10-01T06:02:11Z","runningPower":null,\
            "endDate":"2026-10-01T06:48:40.5+00:00","duration":2789.0,"cyclingPower":[],"appVersion" : "2.1",\
            "extra":{"nested":[1,2.50,"x"]},"cyclingCadence":[] ,"totalEnergyKcal":6.12E2}
            """
        let w = try workout(body)
        #expect(w.headerJSON == """
            {"format":null,"uuid":"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4","activityType":37,"serverType":"RUNNING",\
            "startDate":"2026-10-01T06:02:11Z","endDate":"2026-10-01T06:48:40.5+00:00","duration":2789.0,\
            "appVersion" : "2.1","extra":{"nested":[1,2.50,"x"]},"totalEnergyKcal":6.12E2}
            """)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(w.headerJSON.utf8)) as? [String: Any])
        #expect(parsed["appVersion"] as? String == "2.1")
        #expect(w.totalEnergyKcal == 612)
        #expect(w.heartRate.count == 1)
    }

    @Test("a repeated key counts with its last occurrence, as jsonb keeps it")
    func repeatedKeys() throws {
        let body = StrideeBody.workout(["route": "[" + StrideeBody.point(["lat": "45"]) + "]"]).dropLast()
            + #","uuid":"00000000-0000-4000-8000-000000000001","route":[],"duration":5}"#
        let w = try workout(String(body))
        #expect(w.uuid == "00000000-0000-4000-8000-000000000001")
        #expect(w.duration == 5)
        #expect(w.route.isEmpty)
    }

    @Test("bodies that are not one JSON object are refused with a reason", arguments: [
        ("", "not valid JSON at byte 0 (line 1, column 1): the body is empty"),
        ("  \n", "not valid JSON at byte 3 (line 2, column 1): the body is empty"),
        ("[]", "the body is not a JSON object"),
        ("null", "the body is not a JSON object"),
        ("nope", "not valid JSON at byte 0 (line 1, column 1): unexpected value; expected a value"),
        (#"{"x":"y""#, "not valid JSON at byte 8 (line 1, column 9): unexpected end of the body inside an object"),
        (#"{"heartRate":[{"t":"2026-10-01T06:02:12Z","v":1},]}"#, "not valid JSON at byte 49 (line 1, column 50): unexpected character ']'; expected a value"),
        (#"{"heartRate":[{"t":"2026-10-01T06:02:12Z","v":1} 5]}"#, "not valid JSON at byte 49 (line 1, column 50): expected ',' or ']' in an array"),
        (#"{"route":["#, "not valid JSON at byte 10 (line 1, column 11): unexpected end of the body inside an array"),
        (#"{"route":[] "uuid":1}"#, "not valid JSON at byte 12 (line 1, column 13): expected ',' or '}' in an object"),
        (#"{"a":1,}"#, "not valid JSON at byte 7 (line 1, column 8): expected a string key"),
        (#"{"a" 1}"#, "not valid JSON at byte 5 (line 1, column 6): expected ':' after a key"),
        (#"{} {}"#, "not valid JSON at byte 3 (line 1, column 4): unexpected content after the top-level value"),
    ])
    func notAnObject(body: String, message: String) throws {
        let error = try #require(workoutError(body))
        #expect(error.description == message)
        #expect(error.path == "")
    }

    @Test("invalid UTF-8 is refused naming the byte; a byte-order mark is skipped")
    func utf8() throws {
        var bytes = Array(StrideeBody.workout(["sourceName": "\"Zo\u{EB}\""]).utf8)
        #expect(try StrideeDecoder.decodeWorkout([0xEF, 0xBB, 0xBF] + bytes).sourceName == "Zoë")
        let at = try #require(bytes.firstIndex(of: 0xC3))
        bytes[at] = 0xFF
        #expect(throws: StrideePayloadError(path: "", "the body is not valid UTF-8 (byte \(at))")) {
            try StrideeDecoder.decodeWorkout(bytes)
        }
    }

    @Test("nesting deeper than 64 inside the body is refused, as for healthd")
    func depth() throws {
        let deep = String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        #expect(workoutError(StrideeBody.workout(["extra": deep])) == nil)
        let tooDeep = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(workoutError(StrideeBody.workout(["extra": tooDeep]))?.description.hasSuffix("nesting deeper than 64") == true)
    }

    @Test("a six-hour generated ride decodes with its 21,600 route points and heart-rate samples")
    func sixHourRide() throws {
        let body = StrideeBodies.ride(powerEvery: 5)
        #expect(body.count > 4_000_000 && body.count < 6_500_000)
        let w = try workout(body)
        let start = StrideeBodies.rideStartMicros
        #expect(w.uuid == StrideeBodies.rideUUID)
        #expect(w.serverType == .cycling)
        #expect(w.route.count == 21_600)
        #expect(w.heartRate.count == 21_600)
        #expect(w.cyclingPower.count == 4_320 && w.cyclingCadence.count == 4_320)
        #expect(w.runningPower.isEmpty)
        #expect(w.route.times.first == start && w.route.times.last == start + 21_599 * 1_000_000)
        // Heart rate is written in +02:00 with milliseconds (second s carries s % 1000 ms).
        #expect(w.heartRate.times[1] == start + 1_001_000)
        #expect(w.heartRate.times[21_599] == start + 21_599 * 1_000_000 + 599_000)
        #expect(zip(w.route.times, w.route.times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(w.route.latitudes.allSatisfy { abs($0 - 47.3769) < 2 })
        #expect(w.route.altitudes.allSatisfy { $0 != nil })
        #expect(w.heartRate.values.allSatisfy { $0 >= 90 && $0 <= 185 })
        #expect(w.startDate.localDate == "2026-10-01")
        #expect(w.endDate.microsecondsSinceEpoch == start + 21_600 * 1_000_000)
        #expect(w.headerJSON.utf8.count < 600)
    }

    @Test("every number is read exactly as Swift's own parser reads it")
    func numbersExact() throws {
        let literals = ["0", "-0", "1", "47.3769", "8.541700000000001", "47.37691234567891", "0.1", "-0.000123", "1.7976931348623157e14",
                        "123456789012345.678", "900719925474099.37", "4.9406564584124654e-300", "2.2250738585072014e-299",
                        "1e-22", "1e-23", "1e15", "9.999999999999999e14", "999999999999999.9", "12345.6789e-3", "5E+2", "0.000000000000000000000000001", "99999999999999999999e-10",
                        // Exactly halfway between two doubles (ties to even), and just either side.
                        "562949953421312.0625", "562949953421312.1875", "562949953421312.06249999", "562949953421312.0625000001",
                        "0.30000000000000004", "2.2250738585072011e-300"]
        var generator = SeededGenerator(seed: 11)
        // Printed in full, as JSONEncoder prints them: 15 to 17 significant digits, all magnitudes in the bound.
        let random = (0..<3000).map { k in
            String(Double.random(in: -1e6...1e6, using: &generator) * pow(10, Double(k % 29 - 20)))
        }
        // An altitude has no plausible range (below sea level is negative), so every literal is read.
        for literal in literals + random {
            let w = try workout(StrideeBody.workout(["route": "[" + StrideeBody.point(["altitude": literal]) + "]"]))
            #expect(w.route.altitudes.first??.bitPattern == Double(literal)?.bitPattern, "\(literal)")
        }
    }
}
