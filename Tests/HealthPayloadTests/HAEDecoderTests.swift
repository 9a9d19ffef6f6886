import Foundation
import HealthPayload
import Testing

/// The decoder of Health Auto Export's JSON, pure: fixtures written from the app's documented
/// format (export version 2, version 1 workouts), both summarize modes, every metric shape.
@Suite("Health Auto Export decoder")
struct HAEDecoderTests {
    /// Decodes a fixture with the given `automation-aggregation` header.
    func decode(_ name: String, _ aggregation: String? = nil) throws -> HAEBody {
        try HAEDecoder.decode(Fixture.bytes(name), aggregation: aggregation)
    }

    /// The metric samples of a body as parsed JSON objects.
    func samples(_ body: HAEBody) throws -> [[String: Any]] {
        let json = body.samplesJSON(0..<body.metricSampleCount)
        return try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]])
    }

    func of(_ type: String, _ all: [[String: Any]]) -> [[String: Any]] {
        all.filter { $0["type"] as? String == "HKQuantityTypeIdentifier" + type || $0["type"] as? String == type }
    }

    func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    @Test("every metric of the table becomes its catalog type in the catalog's unit; a minutes bucket ends a minute after its date")
    func everyMetric() throws {
        let body = try decode("hae-metrics-summarized.good.json", "minutes")
        #expect(body.quarantined.isEmpty)
        let all = try samples(body)
        #expect(all.count == 31)
        let steps = of("StepCount", all)
        #expect(steps.map { number($0["value"]) } == [120, 80.5, 0])
        #expect(steps[0]["start"] as? String == "2025-03-10T10:00:00.000+01:00")
        #expect(steps[0]["end"] as? String == "2025-03-10T10:01:00.000+01:00")
        #expect(steps[0]["source"] as? String == "iPhone|Apple Watch")
        #expect(steps[0]["unit"] as? String == "count" && steps[0]["kind"] as? String == "quantity" && steps[0]["group"] as? String == "activity")
        #expect(steps[0]["haeBucket"] as? String == "minutes")
        #expect(of("DistanceWalkingRunning", all).map { number($0["value"]) } == [90, 60])
        #expect(of("ActiveEnergyBurned", all).map { number($0["value"]) } == [10, 5])
        #expect(of("Height", all).map { number($0["value"]) } == [1.78])
        #expect(of("BodyFatPercentage", all).map { number($0["value"]) } == [0.185])
        #expect(of("OxygenSaturation", all).map { number($0["value"]) } == [0.97])
        #expect(of("OxygenSaturation", all).first?["unit"] as? String == "fraction")
        #expect(of("VO2Max", all).first?["unit"] as? String == "ml/(kg*min)")
        #expect(of("HeartRateVariabilitySDNN", all).map { number($0["value"]) } == [48.2])
        let heart = of("HeartRate", all)
        #expect(heart.map { number($0["value"]) } == [64.5, 80])
        #expect(heart.map { number($0["Min"]) } == [58, 66] && heart.map { number($0["Max"]) } == [71, 112])
        #expect(of("BloodPressureSystolic", all).map { number($0["value"]) } == [118])
        #expect(of("BloodPressureDiastolic", all).map { number($0["value"]) } == [76])
        let unknown = of("hae:mindful_minutes", all)
        #expect(unknown.count == 1 && number(unknown[0]["value"]) == 5 && unknown[0]["unit"] as? String == "min")
        #expect(unknown[0]["group"] as? String == "other")
        #expect(Set(all.compactMap { $0["uuid"] as? String }).count == 31)
        #expect(all.allSatisfy { ($0["id"] as? String)?.count == 64 })
    }

    @Test("without a grouping each point is a reading at its instant, imperial units converted, the source as written")
    func imperialPoints() throws {
        let all = try samples(try decode("hae-imperial-points.good.json"))
        let distance = try #require(of("DistanceWalkingRunning", all).first)
        #expect(number(distance["value"]) == 19.9558656)  // 0.0124 mi, to 15 significant digits
        #expect(distance["start"] as? String == "2025-03-11T09:15:31.000-05:00" && distance["end"] as? String == distance["start"] as? String)
        #expect(distance["haeBucket"] == nil)
        #expect(distance["source"] as? String == "Jane's iPhone")
        #expect(number(of("BodyMass", all).first?["value"]) == 74.933459524)  // 165.2 lb
        #expect(number(of("BodyTemperature", all).first?["value"]) == 37)  // 98.6 °F
        #expect(number(of("Height", all).first?["value"]) == 1.7526)  // 5.75 ft
        let height = try #require(of("Height", all).first)
        #expect(height["source"] as? String == "Health Auto Export")
        #expect(number(of("HeartRate", all).first?["value"]) == 88 && of("HeartRate", all).first?["Min"] == nil)
    }

    @Test("a re-sent bucket keeps its uuid whatever its value; a point in time's uuid includes its value")
    func identity() throws {
        func uuids(_ text: String, _ aggregation: String?) throws -> [String] {
            try samples(try HAEDecoder.decode(Array(text.utf8), aggregation: aggregation)).compactMap { $0["uuid"] as? String }
        }
        let morning = #"{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":"2025-03-10 00:00:00 +0100","qty":1200,"source":"iPhone"}]}]}}"#
        let evening = morning.replacingOccurrences(of: "1200", with: "8450")
        #expect(try uuids(morning, "days") == uuids(evening, "days"))
        #expect(try uuids(morning, "days") != uuids(morning, "hours"))
        #expect(try uuids(morning, nil) != uuids(evening, nil))
        #expect(try uuids(morning, nil) == uuids(morning, nil))
        let otherSource = morning.replacingOccurrences(of: "iPhone", with: "Watch")
        #expect(try uuids(morning, "days") != uuids(otherSource, "days"))
    }

    @Test("buckets end one grouping after their date, in the offset written", arguments: [
        ("seconds", "2025-03-10T10:00:01.000+01:00"), ("minutes", "2025-03-10T10:01:00.000+01:00"),
        ("hours", "2025-03-10T11:00:00.000+01:00"), ("days", "2025-03-11T10:00:00.000+01:00"),
        ("weeks", "2025-03-17T10:00:00.000+01:00"), ("months", "2025-04-10T10:00:00.000+01:00"),
        ("years", "2026-03-10T10:00:00.000+01:00"), ("Day", "2025-03-11T10:00:00.000+01:00"),
    ])
    func bucketEnds(grouping: String, end: String) throws {
        let text = #"{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":"2025-03-10 10:00:00 +0100","qty":1}]}]}}"#
        let all = try samples(try HAEDecoder.decode(Array(text.utf8), aggregation: grouping))
        #expect(all.first?["end"] as? String == end)
    }

    @Test("a bucket still under way past the day after tomorrow is quarantined, as a healthd sample ending then would be")
    func bucketEndBound() throws {
        let now: Int64 = 1_796_644_800_000  // 2026-12-07T12:00:00Z
        let text = #"{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":"2026-12-07 00:00:00 +0000","qty":10,"source":"wk"},{"date":"2026-12-01 00:00:00 +0000","qty":70,"source":"wk"}]}]}}"#
        let weeks = try HAEDecoder.decode(Array(text.utf8), aggregation: "weeks", now: now)
        #expect(weeks.quarantined.map(\.reason) == ["data.metrics[0].data[0].date: the bucket's end (weeks) is after the day after tomorrow (2026-12-09 UTC)"])
        #expect(try samples(weeks).map { $0["end"] as? String } == ["2026-12-08T00:00:00.000+00:00"])
        #expect(try HAEDecoder.decode(Array(text.utf8), aggregation: "days", now: now).quarantined.isEmpty)
    }

    @Test("a point whose source is empty is Health Auto Export's, as one without a source")
    func emptySource() throws {
        let text = #"{"data":{"metrics":[{"name":"step_count","units":"count","data":[{"date":"2026-12-02 10:00:00 +0100","qty":5,"source":""},{"date":"2026-12-02 11:00:00 +0100","qty":6}]}]}}"#
        let all = try samples(try HAEDecoder.decode(Array(text.utf8), aggregation: nil))
        #expect(all.map { $0["source"] as? String } == ["Health Auto Export", "Health Auto Export"])
    }

    @Test("a month from the 31st ends on the next month's last day; a year from 29 February on the 28th")
    func calendarBuckets() {
        let stamp = Timestamp(microsecondsSinceEpoch: 1_706_659_200_000_000 + 3_600_000_000, offsetSeconds: -3600)  // 2024-01-31 00:00 -01:00
        var text: [UInt8] = []
        HAEAggregation.months.end(of: stamp).appendReferenceText(to: &text)
        #expect(String(decoding: text, as: UTF8.self) == "2024-02-29T00:00:00.000-01:00")
        let leap = Timestamp(microsecondsSinceEpoch: 1_709_164_800_000_000, offsetSeconds: 0)  // 2024-02-29
        text = []
        HAEAggregation.years.end(of: leap).appendReferenceText(to: &text)
        #expect(String(decoding: text, as: UTF8.self) == "2025-02-28T00:00:00.000+00:00")
    }

    @Test("an automation-aggregation header that names no grouping is refused; none and an empty one are points in time")
    func aggregationHeader() throws {
        #expect(try HAEAggregation.parse(header: "none") == nil)
        #expect(try HAEAggregation.parse(header: " ") == nil)
        #expect(try HAEAggregation.parse(header: "HOURS") == .hours)
        #expect(throws: StrideePayloadError.self) { try HAEAggregation.parse(header: "fortnights") }
        let error = try #require(catching { () throws(StrideePayloadError) in try HAEDecoder.decode(Array(#"{"data":{}}"#.utf8), aggregation: "fortnights") })
        #expect(error.description.hasPrefix("automation-aggregation: \"fortnights\" is not minutes"))
    }

    @Test("sleep segments are sleep samples of their stage, source as written, day of their end")
    func sleepSegments() throws {
        let all = try samples(try decode("hae-sleep-segments.good.json"))
        #expect(all.map { number($0["value"]) } == [0, 3, 4, 2, 5, 1])
        #expect(all.map { $0["name"] as? String } == ["inBed", "asleepCore", "asleepDeep", "awake", "asleepREM", "asleepUnspecified"])
        #expect(all[1]["start"] as? String == "2025-03-09T23:40:00.000+01:00" && all[1]["end"] as? String == "2025-03-10T01:10:00.000+01:00")
        #expect(all.allSatisfy { $0["kind"] as? String == "category" && $0["haeBucket"] == nil })
        #expect(all[0]["source"] as? String == "Jane's iPhone" && all[1]["source"] as? String == "Jane's Apple Watch")
    }

    @Test("a summarized night is one sample per stage of sleepSource, each ending at sleepEnd, lasting the stage's total")
    func sleepNights() throws {
        let body = try decode("hae-sleep-nights.good.json", "days")
        #expect(body.quarantined.isEmpty)
        let all = try samples(body)
        let first = all.filter { ($0["hae"] as? [String: Any])?["inBedStart"] as? String == "2025-03-09 22:45:00 +0100" }
        func minutes(_ s: [String: Any]) -> Double {
            let start = Timestamp(s["start"] as! String)!, end = Timestamp(s["end"] as! String)!
            return Double(end.microsecondsSinceEpoch - start.microsecondsSinceEpoch) / 60e6
        }
        let byStage = Dictionary(uniqueKeysWithValues: first.map { (Int(number($0["value"])!), minutes($0)) })
        #expect(byStage == [0: 480, 1: 30, 2: 15, 3: 210, 4: 90, 5: 120])
        #expect(first.allSatisfy { $0["end"] as? String == "2025-03-10T06:45:00.000+01:00" && $0["source"] as? String == "Jane's Apple Watch" })
        #expect(first.allSatisfy { $0["haeBucket"] as? String == "night" })
        // Version 1's night: asleep is the whole of it, unstaged.
        let second = all.filter { ($0["end"] as? String)?.hasPrefix("2025-03-11") == true }
        #expect(Dictionary(uniqueKeysWithValues: second.map { (Int(number($0["value"])!), minutes($0)) }) == [0: 420, 1: 375])
        // An iPhone alone: time in bed only, no minute asleep (asleep 0: its unstaged part spans nothing).
        let third = all.filter { ($0["end"] as? String)?.hasPrefix("2025-03-12") == true }
        #expect(Dictionary(uniqueKeysWithValues: third.map { (Int(number($0["value"])!), minutes($0)) }) == [0: 450, 1: 0])
        #expect(third.first?["source"] as? String == "Health Auto Export")
    }

    @Test("version 2 workouts: id, name, converted totals, heart rate stream from Avg, the route with its accuracies")
    func workoutsV2() throws {
        let body = try decode("hae-workouts-v2.good.json")
        #expect(body.quarantined.isEmpty && body.workouts.count == 2)
        let run = body.workouts[0]
        #expect(run.uuid == "3F6B2C1D-7A8E-4B9C-8D0E-1F2A3B4C5D6E")
        let sample = try #require(try JSONSerialization.jsonObject(with: Data(run.sampleJSON)) as? [String: Any])
        #expect(sample["type"] as? String == "HKWorkoutTypeIdentifier" && sample["kind"] as? String == "workout")
        #expect(sample["activityName"] as? String == "Outdoor Run" && number(sample["activityType"]) == 37)
        #expect(number(sample["durationSeconds"]) == 1795 && number(sample["distanceMeters"]) == 5200)
        #expect(number(sample["activeEnergyKilocalories"]) == 320)
        let kept = try #require(sample["hae"] as? [String: Any])
        #expect(kept["location"] as? String == "Outdoor" && kept["heartRateData"] == nil && kept["route"] == nil)
        #expect(kept["stepCount"] != nil && kept["heartRateRecovery"] != nil)
        #expect(run.streams.map(\.name) == ["heart_rate"])
        #expect(run.streams[0].stream.values == [125, 152, 168])
        #expect(run.route.count == 3 && run.route.latitudes[1] == 52.521 && run.route.horizontalAccuracies[0] == 4.5)
        #expect(run.route.speeds == [2.9, 3.0, 3.1] && run.route.courses[2] == nil)
        let strength = try #require(try JSONSerialization.jsonObject(with: Data(body.workouts[1].sampleJSON)) as? [String: Any])
        #expect(number(strength["activityType"]) == 50)
        #expect(abs(number(strength["activeEnergyKilocalories"])! - 250) < 1e-9)
        #expect(strength["distanceMeters"] == nil)
    }

    @Test("a version 1 workout gets a name-based uuid of name, start and end; activeEnergy, lat/lon and qty heart rate read")
    func workoutsV1() throws {
        let body = try decode("hae-workouts-v1.good.json")
        #expect(body.quarantined.isEmpty)
        let walk = try #require(body.workouts.first)
        #expect(walk.uuid == (try decode("hae-workouts-v1.good.json")).workouts.first?.uuid)
        #expect(walk.uuid.count == 36 && walk.uuid.dropFirst(14).first == "5")
        let sample = try #require(try JSONSerialization.jsonObject(with: Data(walk.sampleJSON)) as? [String: Any])
        #expect(number(sample["durationSeconds"]) == 2400 && number(sample["activeEnergyKilocalories"]) == 150)
        #expect(number(sample["distanceMeters"]) == 3379.6224 && number(sample["activityType"]) == 52)
        #expect(walk.streams[0].stream.values == [95, 105])
        #expect(walk.route.latitudes == [40.7128, 40.714] && walk.route.longitudes == [-74.006, -74.005])
    }

    @Test("the other arrays are kept as sent, one record each; data's own members only")
    func records() throws {
        let body = try decode("hae-records.good.json")
        #expect(body.recordCount == 6 && body.quarantined.isEmpty && body.metricSampleCount == 0)
        let records = try #require(try JSONSerialization.jsonObject(with: Data(body.recordsJSON())) as? [[String: Any]])
        #expect(records.map { $0["kind"] as? String } == ["symptoms", "ecg", "heartRateNotifications", "stateOfMind", "cycleTracking", "medications"])
        #expect((records[1]["item"] as? [String: Any])?["classification"] as? String == "Sinus Rhythm")
    }

    @Test("a point that breaks a bound is quarantined with its reason and path, the rest kept")
    func bounds() throws {
        let body = try decode("hae-bounds.partial.json")
        let reasons = body.quarantined.map(\.reason)
        let expected = [
            "data.metrics[0].data[0].Avg: 400 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400",
            "data.metrics[0].data[1].Min: 0 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400",
            "data.metrics[1].data[0].qty: -1 is outside the plausible range of HKQuantityTypeIdentifierStepCount: ≥ 0",
            "data.metrics[1].data[1].date: \"1969-12-31 23:00:00 +0000\" is before 1970-01-01",
            "data.metrics[1].data[3].date: \"10 March 2025\" is not a date like 2024-02-06 14:30:00 -0800",
            "data.metrics[1].data[4].qty: missing",
            "data.metrics[1].data[5].source: 1100 bytes, at most 1024",
            "data.metrics[2].data[0].qty: 1.2 is outside the plausible range of HKQuantityTypeIdentifierBodyFatPercentage: 0 to 1",
            "data.metrics[3].data[0].qty: 0 is outside the plausible range of HKQuantityTypeIdentifierBodyMassIndex: > 0",
            "data.metrics[4].units: \"stone\" of weight_body_mass cannot be converted to kg",
            "data.metrics[5].data[0]: systolic and diastolic are both missing",
            "data.metrics[6].data[0].value: \"Dozing\" is not a sleep stage (In Bed, Asleep, Unspecified, Awake, Core, Deep, REM)",
            "data.metrics[6].data[1].endDate: is before startDate",
            "data.metrics[7].name: 1030 bytes, at most 1024",
            "data.metrics[8].name: missing",
            "data.metrics[9].data: missing",
            "data.metrics[10]: not an object",
            "data.workouts[0].duration: -5 is outside its plausible range: ≥ 0",
            "data.workouts[1].id: \"not-a-uuid\" is not a UUID",
            "data.workouts[2].route[0].latitude: 95 is outside [-90, 90]",
            "data.workouts[3].heartRateData[0].Avg: 450 is outside its plausible range: > 0 and < 400",
            "data.symptoms[0]: contains the escape \\u0000",
        ]
        #expect(reasons.count == expected.count + 1)
        for reason in expected { #expect(reasons.contains(reason), "\(reason)") }
        #expect(reasons.contains { $0.hasPrefix("data.metrics[1].data[2].date: \"2999-01-01 00:00:00 +0000\" is after the day after tomorrow") })
        // What is left: heart rate 61, steps 9, the cycling workout, the cough.
        let all = try samples(body)
        #expect(all.map { number($0["value"]) } == [61, 9])
        #expect(body.workouts.count == 1 && body.recordCount == 1)
        #expect(Set(body.quarantined.map(\.position)).count == body.quarantined.count)
        #expect(body.quarantined.first?.raw.filter { !$0.isWhitespace } == #"{"date":"2025-03-1010:00:00+0100","Avg":400}"#)
    }

    @Test("a body that is not {\"data\": {…}} with arrays is refused, naming the JSON path", arguments: [
        ("hae-no-data.bad.json", "data: missing: the body must be {\"data\": {…}}"),
        ("hae-metrics-object.bad.json", "data.metrics: not an array"),
    ])
    func frame(name: String, message: String) throws {
        let bytes = try Fixture.bytes(name)
        let error = try #require(catching { () throws(StrideePayloadError) in try HAEDecoder.decode(bytes, aggregation: nil) })
        #expect(error.description == message)
    }

    @Test("not JSON, not an object, data not an object, a named array that is not one: refused with the path", arguments: [
        ("[]", "the body is not a JSON object"),
        (#"{"data": [1]}"#, "data: not an object: the body must be {\"data\": {…}}"),
        (#"{"data": {"workouts": 3}}"#, "data.workouts: not an array"),
        (#"{"data": {"symptoms": {}}}"#, "data.symptoms: not an array"),
        (#"{"data": {"metrics": [{"name": "x", "data": [1,]}]}}"#, "not valid JSON"),
    ])
    func refused(text: String, message: String) throws {
        let error = try #require(catching { () throws(StrideePayloadError) in try HAEDecoder.decode(Array(text.utf8), aggregation: nil) })
        #expect(error.description.contains(message), "\(error)")
    }

    @Test("null arrays are none; an array data does not name is kept as records of its name")
    func lenient() throws {
        let body = try HAEDecoder.decode(Array(#"{"data": {"metrics": null, "workouts": null, "sleepSchedules": [{"a": 1}], "version": 2}}"#.utf8),
                                         aggregation: nil)
        #expect(body.recordCount == 2 && body.quarantined.isEmpty)
        let records = try #require(try JSONSerialization.jsonObject(with: Data(body.recordsJSON())) as? [[String: Any]])
        #expect(records.map { $0["kind"] as? String } == ["sleepSchedules", "version"])
    }

    @Test("a metric's data before its name is read all the same")
    func memberOrder() throws {
        let text = #"{"data":{"metrics":[{"data":[{"qty":3,"date":"2025-03-10 10:00:00 +0100"}],"units":"count","name":"flights_climbed"}]}}"#
        let all = try samples(try HAEDecoder.decode(Array(text.utf8), aggregation: nil))
        #expect(all.first?["type"] as? String == "HKQuantityTypeIdentifierFlightsClimbed" && number(all.first?["value"]) == 3)
    }

    @Test("ingest tells Health Auto Export's files from healthd's by their top-level keys")
    func shape() throws {
        #expect(HAEDecoder.isHAEBody(try Fixture.bytes("hae-workouts-v2.good.json")))
        #expect(HAEDecoder.isHAEBody(Array(#"{"x": [1, {"y": "}"}], "data": {}}"#.utf8)))
        #expect(!HAEDecoder.isHAEBody(try Fixture.bytes("contract-example.json")))
        #expect(!HAEDecoder.isHAEBody(Array(#"{"data": {}, "schemaVersion": 1}"#.utf8)))
        #expect(!HAEDecoder.isHAEBody(Array("[]".utf8)))
    }

    /// The error a decode throws, or nil.
    func catching(_ body: () throws(StrideePayloadError) -> Any) -> StrideePayloadError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }
}
