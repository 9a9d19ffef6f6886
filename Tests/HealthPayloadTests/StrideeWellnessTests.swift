import DemoData
import Foundation
import HealthPayload
import Testing
import TestSupport

@Suite("Stridee healthkit.wellness.v1 items")
struct StrideeWellnessTests {
    @Test("the seed's example decodes to its three items, each keeping its exact text")
    func seedExample() throws {
        let body = try Fixture.text("stridee-wellness.good.json")
        let items = try wellness(body)
        try #require(items.count == 3)
        let daily = items[0]
        #expect(daily.kind == .daily)
        #expect(daily.calendarDate == "2026-10-01")
        #expect(daily.start == Timestamp(microsecondsSinceEpoch: micros(2026, 9, 30, 22), offsetSeconds: 0))
        #expect(daily.end?.microsecondsSinceEpoch == micros(2026, 10, 1, 22))
        #expect(daily.tzOffsetSeconds == 7200)
        #expect(daily.isFinal)
        #expect(daily.id == nil)
        let sleep = items[1]
        #expect(sleep.kind == .sleep && sleep.calendarDate == "2026-10-02")
        #expect(sleep.end?.microsecondsSinceEpoch == micros(2026, 10, 2, 4, 10))
        let hrv = items[2]
        #expect(hrv.kind == .hrv && hrv.end == nil && hrv.tzOffsetSeconds == nil)
        #expect(hrv.start.microsecondsSinceEpoch == micros(2026, 10, 2, 1))
        for item in items { #expect(body.contains(item.json)) }
        #expect(daily.json.hasPrefix("{\n      \"kind\": \"daily\"") && daily.json.hasSuffix("\"restingHeartRate\": 52\n    }"))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(sleep.json.utf8)) as? [String: Any])
        #expect((parsed["stages"] as? [Any])?.count == 2)
    }

    @Test("the relay reference's example body is refused at its null item")
    func relayExample() throws {
        #expect(wellnessError(try Fixture.text("stridee-relay-wellness.bad.json"))?.description == "items[0]: not an object")
    }

    @Test("format may be absent, null or healthkit.wellness.v1; anything else is unsupportedFormat",
          arguments: [
              (nil, true), ("null", true), (#""healthkit.wellness.v1""#, true),
              (#""healthkit.v1""#, false), (#""healthkit.wellness.v2""#, false), ("0", false), ("{}", false),
          ] as [(String?, Bool)])
    func formatRule(format: String?, accepted: Bool) throws {
        let body = StrideeBody.wellness([StrideeBody.item()], format: format)
        if accepted {
            #expect(try wellness(body).count == 1)
        } else {
            let error = try #require(wellnessError(body))
            #expect(error.reason == .unsupportedFormat)
            #expect(error.description == "format: \(format!) is not \"healthkit.wellness.v1\"")
        }
    }

    @Test("a body without items, or whose items is not an array, is refused naming items")
    func itemsRequired() throws {
        #expect(wellnessError(#"{"format":"healthkit.wellness.v1"}"#)?.description == "items: missing")
        #expect(wellnessError(#"{"items":{}}"#)?.description == "items: not an array")
        #expect(wellnessError(#"{"items":null}"#)?.description == "items: not an array")
        #expect(try wellness(#"{"items":[]}"#).isEmpty)
    }

    @Test("a required item field that is missing names itself with the item's index",
          arguments: ["kind", "calendarDate", "startTime"])
    func requiredMissing(key: String) throws {
        let body = StrideeBody.wellness([StrideeBody.item(), StrideeBody.item("sleep"), StrideeBody.item("hrv", [key: nil])])
        let error = try #require(wellnessError(body))
        #expect(error.description == "items[2].\(key): missing")
        #expect(error.path == "items[2].\(key)")
    }

    @Test("a kind Apple Health does not send refuses the body with the contract's words")
    func unknownKind() throws {
        let items = (0..<12).map { _ in StrideeBody.item() } + [StrideeBody.item("stress")]
        let error = try #require(wellnessError(StrideeBody.wellness(items)))
        #expect(error.description == "items[12]: `stress` is not a kind Apple Health sends")
        #expect(error.path == "items[12]")
        #expect(error.reason == .invalid)
    }

    @Test("a common field of the wrong type or value names itself", arguments: [
        ("kind", "7", "items[0].kind: not a string"),
        ("kind", #""Daily""#, "items[0]: `Daily` is not a kind Apple Health sends"),
        ("calendarDate", #""2026-10-1""#, "items[0].calendarDate: not a date like 2026-10-01"),
        ("calendarDate", "20261001", "items[0].calendarDate: not a date like 2026-10-01"),
        ("calendarDate", #""2026-02-29""#, "items[0].calendarDate: 2026-02-29 is not a real date"),
        ("calendarDate", #""0000-01-01""#, "items[0].calendarDate: 0000-01-01 is not a real date"),
        ("startTime", #""2026-09-30""#, "items[0].startTime: not an ISO 8601 timestamp"),
        ("startTime", "null", "items[0].startTime: not an ISO 8601 timestamp"),
        ("endTime", #""late""#, "items[0].endTime: not an ISO 8601 timestamp"),
        ("endTime", #""2026-09-30T21:59:59.999Z""#, "items[0].endTime: 2026-09-30T21:59:59.999000Z is before startTime 2026-09-30T22:00:00.000000Z"),
        ("tzOffsetSeconds", "7200.5", "items[0].tzOffsetSeconds: not an integer"),
        ("tzOffsetSeconds", #""7200""#, "items[0].tzOffsetSeconds: not an integer"),
        ("tzOffsetSeconds", "64801", "items[0].tzOffsetSeconds: 64801 is outside [-64800, 64800]"),
        ("tzOffsetSeconds", "-64801", "items[0].tzOffsetSeconds: -64801 is outside [-64800, 64800]"),
        ("final", #""yes""#, "items[0].final: not a boolean"),
        ("id", "42", "items[0].id: not a string"),
        ("note", #""\u0000""#, #"items[0]: contains the escape \u0000"#),
        ("note", "1E+1001", "items[0]: holds 1E+1001, beyond PostgreSQL's numeric range"),
    ])
    func commonFieldRules(key: String, value: String, message: String) throws {
        let error = try #require(wellnessError(StrideeBody.wellness([StrideeBody.item("daily", [key: value])])))
        #expect(error.description == message)
        #expect(error.reason == .invalid)
    }

    @Test("each kind's own fields are checked for type and range", arguments: [
        ("daily", "steps", "-1", "items[0].steps: -1 is negative"),
        ("daily", "distanceMeters", #""5km""#, "items[0].distanceMeters: not a number"),
        ("daily", "maxHeartRate", "2e15", "items[0].maxHeartRate: 2e15 is beyond ±1e15"),
        ("daily", "exerciseMinutes", "-0.5", "items[0].exerciseMinutes: -0.5 is negative"),
        ("sleep", "stages", "{}", "items[0].stages: not an array"),
        ("sleep", "stages", #"[{"stage":"light","start":"2026-10-01T20:41:00Z","end":"2026-10-01T22:05:00Z"}]"#,
         "items[0].stages[0].stage: `light` is not one of core, deep, rem, awake, inBed, asleepUnspecified"),
        ("sleep", "stages", #"[{"stage":"core","start":"2026-10-01T20:41:00Z","end":"2026-10-01T22:05:00Z"},{"stage":"rem","start":"2026-10-01T22:05:00Z","end":"2026-10-01T22:04:59Z"}]"#,
         "items[0].stages[1].end: 2026-10-01T22:04:59.000000Z is before start 2026-10-01T22:05:00.000000Z"),
        ("sleep", "stages", #"[{"stage":"deep","end":"2026-10-01T22:05:00Z"}]"#, "items[0].stages[0].start: missing"),
        ("sleep", "stages", #"[{"start":"2026-10-01T22:05:00Z","end":"2026-10-01T22:05:00Z"}]"#, "items[0].stages[0].stage: missing"),
        ("sleep", "stages", #"[{"stage":4,"start":"2026-10-01T22:05:00Z","end":"2026-10-01T22:05:00Z"}]"#, "items[0].stages[0].stage: not a string"),
        ("sleep", "stages", "[1]", "items[0].stages[0]: not an object"),
        ("hrv", "samples", #"[{"t":"2026-10-02T01:00:00Z","v":48.2},{"t":"01:05","v":50}]"#, "items[0].samples[1].t: not an ISO 8601 timestamp"),
        ("hrv", "samples", #"[{"t":"2026-10-02T01:00:00Z"}]"#, "items[0].samples[0].v: missing"),
        ("respiration", "samples", #"[{"v":14}]"#, "items[0].samples[0].t: missing"),
        ("respiration", "samples", "7", "items[0].samples: not an array"),
        ("pulse_ox", "samples", #"[{"t":"2026-10-02T01:00:00Z","v":100.5}]"#, "items[0].samples[0].v: 100.5 is outside [0, 100]"),
        ("pulse_ox", "samples", #"[{"t":"2026-10-02T01:00:00Z","v":-1}]"#, "items[0].samples[0].v: -1 is outside [0, 100]"),
        ("fitness", "vo2Max", #""high""#, "items[0].vo2Max: not a number"),
        ("body_composition", "bodyFatPercent", "101", "items[0].bodyFatPercent: 101 is outside [0, 100]"),
        ("body_composition", "weightKg", "[72]", "items[0].weightKg: not a number"),
        ("body_composition", "bodyMassIndex", "true", "items[0].bodyMassIndex: not a number"),
        ("blood_pressure", "systolic", #""118""#, "items[0].systolic: not a number"),
        ("blood_pressure", "diastolic", "1e400", "items[0].diastolic: 1e400 is beyond ±1e15"),
        ("skin_temperature", "celsius", "{}", "items[0].celsius: not a number"),
    ])
    func kindFieldRules(kind: String, key: String, value: String, message: String) throws {
        let error = try #require(wellnessError(StrideeBody.wellness([StrideeBody.item(kind, [key: value])])))
        #expect(error.description == message)
    }

    @Test("every kind decodes with its own fields at their bounds, nulls as absent, and another kind's field names are extras")
    func kindsAccepted() throws {
        let items = [
            StrideeBody.item("daily", ["steps": "0", "distanceMeters": "1e15", "activeKilocalories": "512.5", "basalKilocalories": "null",
                                       "flightsClimbed": "7", "exerciseMinutes": "34", "restingHeartRate": "52", "avgHeartRate": "71",
                                       "minHeartRate": "48", "maxHeartRate": "162", "celsius": #""not mine""#]),
            StrideeBody.item("sleep", ["stages": #"[{"stage":"inBed","start":"2026-10-01T20:30:00Z","end":"2026-10-01T20:30:00Z"},{"stage":"asleepUnspecified","start":"2026-10-01T20:30:00+00:00","end":"2026-10-01T23:00:00+0100"}]"#]),
            StrideeBody.item("hrv", ["samples": #"[{"t":"2026-10-02T01:00:00Z","v":48.2}]"#]),
            StrideeBody.item("fitness", ["vo2Max": "44.1"]),
            StrideeBody.item("respiration", ["samples": "[]"]),
            StrideeBody.item("pulse_ox", ["samples": #"[{"t":"2026-10-02T01:00:00Z","v":0},{"t":"2026-10-02T01:01:00Z","v":100}]"#]),
            StrideeBody.item("body_composition", ["weightKg": "72.4", "bodyFatPercent": "0", "bodyMassIndex": "22.9"]),
            StrideeBody.item("blood_pressure", ["systolic": "118", "diastolic": "76"]),
            StrideeBody.item("skin_temperature", ["celsius": "-1.5", "steps": #""not mine either""#]),
        ]
        let decoded = try wellness(StrideeBody.wellness(items))
        #expect(decoded.map(\.kind) == WellnessKind.allCases)
        #expect(decoded.map(\.json) == items)
    }

    @Test("final absent or null is true; id and endTime are optional")
    func optionalCommonFields() throws {
        let items = try wellness(StrideeBody.wellness([
            StrideeBody.item("fitness", ["final": nil, "endTime": nil, "tzOffsetSeconds": nil, "startTime": "\"2026-09-30T20:00:00Z\""]),
            StrideeBody.item("fitness", ["final": "null", "endTime": "null", "tzOffsetSeconds": "null", "id": "null",
                                         "startTime": "\"2026-09-30T21:00:00Z\""]),
            StrideeBody.item("fitness", ["final": "false", "id": #""0A4C2C36-9B0E-4F59-8D63-6D1B3B4A7E10""#, "tzOffsetSeconds": "-64800"]),
        ]))
        #expect(items.map(\.isFinal) == [true, true, false])
        #expect(items.map(\.id) == [nil, nil, "0A4C2C36-9B0E-4F59-8D63-6D1B3B4A7E10"])
        #expect(items.map(\.end) == [nil, nil, Timestamp(iso8601: "2026-10-01T22:00:00Z")])
        #expect(items.map(\.tzOffsetSeconds) == [nil, nil, -64800])
    }

    @Test("unknown fields are kept in the item's json, byte for byte")
    func extrasKept() throws {
        let item = #"{"kind":"daily","calendarDate":"2026-10-01","startTime":"2026-09-30T22:00:00+0000" , "steps":8123,"# +
            #""source":{"name":"iPhone","os":[17,"5"]},"standHours":11,"note":"caf\u00e9 \ud83d\ude00"}"#
        let items = try wellness("{\"items\":[ \(item)\n]}")
        #expect(items.first?.json == item)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(items[0].json.utf8)) as? [String: Any])
        #expect(parsed["standHours"] as? Int == 11)
        #expect(parsed["note"] as? String == "café 😀")
        #expect(items[0].start.offsetSeconds == 0)
    }

    @Test("2,000 items decode; 2,001 is tooManyItems, even when an item is also bad")
    func itemLimit() throws {
        let item = StrideeBody.item("fitness", ["vo2Max": "44"])
        // 2,000 identities: one item a second.
        let distinct = (0..<2000).map { k in
            StrideeBody.item("fitness", ["vo2Max": "44", "startTime": "\"2026-09-29T00:\(Self.two(k / 60)):\(Self.two(k % 60))Z\""])
        }
        let atLimit = try wellness(StrideeBody.wellness(distinct))
        #expect(atLimit.count == 2000)

        let over = try #require(wellnessError(StrideeBody.wellness(Array(repeating: item, count: 2001))))
        #expect(over.reason == .tooManyItems)
        #expect(over.path == "items")
        #expect(over.description == "items: more than 2000 items; send at most 2000 in one body")

        let badAndOver = Array(repeating: item, count: 5) + [StrideeBody.item("stress")] + Array(repeating: item, count: 1995)
        #expect(wellnessError(StrideeBody.wellness(badAndOver))?.reason == .tooManyItems)
        let badAtLimit = Array(repeating: item, count: 5) + [StrideeBody.item("stress")] + Array(repeating: item, count: 1994)
        #expect(wellnessError(StrideeBody.wellness(badAtLimit))?.description == "items[5]: `stress` is not a kind Apple Health sends")
    }

    @Test("a generated 2,000-item body of all nine kinds decodes in body order")
    func generatedBatch() throws {
        let items = try wellness(String(decoding: StrideeBodies.wellness(count: 2000), as: UTF8.self))
        #expect(items.count == 2000)
        #expect(items[0].kind == .daily && items[8].kind == .skinTemperature && items[1999].kind == WellnessKind.allCases[1999 % 9])
        #expect(items[9].calendarDate == "2026-01-02")
        #expect(items[9].start.microsecondsSinceEpoch == micros(2026, 1, 1, 23))
        #expect(items.allSatisfy { $0.tzOffsetSeconds == 3600 && $0.isFinal })
    }

    @Test("other top-level keys are ignored, but must still be valid JSON")
    func topLevelExtras() throws {
        #expect(try wellness(#"{"sdk":{"version":"1.2"},"items":[],"pages":[1,2]}"#).isEmpty)
        #expect(wellnessError(#"{"sdk":{"version":},"items":[]}"#)?.description.hasPrefix("not valid JSON at byte 18") == true)
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    @Test("items sharing an identity (kind, startTime as an instant) are one item, the later in the body kept in the earlier's place")
    func onePerIdentity() throws {
        let items = try wellness(StrideeBody.wellness([
            StrideeBody.item("fitness", ["vo2Max": "40"]),
            StrideeBody.item("daily", ["steps": "10"]),
            StrideeBody.item("fitness", ["vo2Max": "41", "startTime": "\"2026-10-01T00:00:00+02:00\""]),
        ]))
        #expect(items.map(\.kind) == [.fitness, .daily])
        #expect(items.first?.json.contains("\"vo2Max\":41") == true)
    }
}
