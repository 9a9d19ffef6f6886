import Foundation
import HealthPayload
import Testing

@Suite("Sample validation and quarantine")
struct SampleRulesTests {
    static let expectedQuarantine: [(position: Int, reason: String)] = [
        (2, "uuid is not a UUID"),
        (3, "start is not a timestamp like 2026-08-21T10:25:30.000+02:00"),
        (4, "value is missing (kind quantity)"),
        (5, "distanceMeters is null"),
        (6, "value is not a number (kind quantity)"),
        (7, "source contains the escape \\u0000"),
        (8, "source contains an unpaired surrogate escape"),
        (9, "value is not finite as double precision (kind quantity)"),
        (10, "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind quantity)"),
        (12, "sample is not an object"),
        (13, "value is not an integer (kind category)"),
        (14, "activityType does not fit a 32-bit integer (kind workout)"),
        (16, "note contains the escape \\u0000"),
        (18, "future holds a number beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits"),
    ]

    @Test("the keys each kind always carries, one rule for healthd's samples and the export's records: a quantity its value and unit, a category its value, a workout its activityType and durationSeconds, another kind none")
    func requiredKeys() {
        func missing(_ kind: String, _ held: Set<String>) -> String? { SampleRequirement.missingReason(kind: kind) { held.contains($0) } }
        #expect(missing("quantity", ["unit"]) == "value is missing (kind quantity)")
        #expect(missing("quantity", ["value"]) == "unit is missing (kind quantity)")
        #expect(missing("quantity", ["value", "unit"]) == nil)
        #expect(missing("category", []) == "value is missing (kind category)")
        #expect(missing("category", ["value"]) == nil)
        #expect(missing("workout", ["activityType"]) == "durationSeconds is missing (kind workout)")
        #expect(missing("mood", []) == nil)
    }

    @Test("malformed samples are quarantined with their reason and the rest of the batch stays valid")
    func malformedFixture() throws {
        let batch = try jsonBatch(Fixture.bytes("malformed-samples.partial.json"))
        #expect(batch.sampleCount == 19)
        #expect(batch.validSampleCount == 5)
        #expect(batch.quarantined.map(\.position) == Self.expectedQuarantine.map(\.position))
        for (got, want) in zip(batch.quarantined, Self.expectedQuarantine) {
            #expect(got.reason == want.reason, "position \(want.position)")
        }
        let valid = try sampleObjects(batch).compactMap { $0["uuid"] as? String }
        #expect(valid == [1, 11, 15, 17, 19].map { String(format: "A1B2C3D4-0000-4000-8000-%012d", $0) })
    }

    @Test("a quarantined sample's raw text is exactly its bytes in the body")
    func rawIsExact() throws {
        let body = try Fixture.text("malformed-samples.partial.json")
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        let batch = try jsonBatch(Array(body.utf8))
        for sample in batch.quarantined {
            // The fixture puts sample n on line n + 1, followed by a comma except for the last.
            var line = String(lines[sample.position])
            if line.hasSuffix(",") { line.removeLast() }
            #expect(sample.raw == line, "position \(sample.position)")
        }
        #expect(batch.quarantined.first { $0.position == 12 }?.raw == "42")
    }

    @Test("the last occurrence of a repeated sample key counts")
    func repeatedKey() throws {
        let batch = try jsonBatch(Body.json(samples: [
            Body.quantity(["value": "\"x\""]).replacingOccurrences(of: "}", with: ",\"value\":7}"),
            Body.quantity(["value": "7"]).replacingOccurrences(of: "}", with: ",\"value\":null}"),
        ]))
        #expect(batch.validSampleCount == 1)
        #expect(batch.quarantined.map(\.reason) == ["value is null (kind quantity)"])
    }

    @Test("a quantity sample's value and its bounds", arguments: [
        ("0", nil), ("-0", nil), ("0.0e-5000", "value is beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits (kind quantity)"),
        ("1e-300", nil), ("-1e-300", nil), ("9.99e-301", "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind quantity)"),
        ("1e-301", "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind quantity)"),
        ("0.00000000000000000000000000000001", nil),
        ("1.7976931348623157e308", Self.huge), ("1.8e308", "value is not finite as double precision (kind quantity)"),
        ("-1e309", "value is not finite as double precision (kind quantity)"),
        ("1e1001", "value is beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits (kind quantity)"),
        ("123456789012345678901234567890", Self.huge), ("12.5E+3", nil), ("\"12\"", "value is not a number (kind quantity)"),
        ("null", "value is null (kind quantity)"), ("true", "value is not a number (kind quantity)"),
        ("[42]", "value is not a number (kind quantity)"),
    ] as [(String, String?)])
    func quantityValue(literal: String, reason: String?) throws {
        // Body temperature has no plausible range (Plausibility): only the number's own bounds apply.
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(["value": literal, "type": Self.unbounded])]))
        #expect(batch.quarantined.first?.reason == reason)
        #expect(batch.validSampleCount == (reason == nil ? 1 : 0))
    }

    static let huge = "value is beyond ±1e15 in magnitude, more than the daily rollups sum (kind quantity)"
    /// A catalog type without a plausible range, so a test of a number's own bounds sees only them.
    static let unbounded = "\"HKQuantityTypeIdentifierBodyTemperature\""

    @Test("a number the rollups sum or average is at most 1e15 in magnitude, to the last digit", arguments: [
        ("1e15", nil), ("-1e15", nil), ("1000000000000000", nil), ("-1000000000000000.000", nil), ("10.0e14", nil),
        ("0.001e18", nil), ("999999999999999.9", nil), ("-0.0", nil), ("1e-300", nil),
        ("1000000000000000.5", Self.huge), ("1.0000000000000001e15", Self.huge), ("-1000000000000001", Self.huge),
        ("2e15", Self.huge), ("1e16", Self.huge), ("1e308", Self.huge), ("-1e308", Self.huge),
        ("1.7976931348623157e308", Self.huge), ("-1.7976931348623157E+308", Self.huge),
        ("4.9e-324", "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind quantity)"),
    ] as [(String, String?)])
    func summableBound(literal: String, reason: String?) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(["value": literal, "type": Self.unbounded])]))
        #expect(batch.quarantined.first?.reason == reason)
        #expect(batch.validSampleCount == (reason == nil ? 1 : 0))
    }

    @Test("the bound holds for every key the rollups sum, whatever the kind, and for CSV cells", arguments: [
        (Body.workout(["durationSeconds": "1e16"]), "durationSeconds is beyond ±1e15 in magnitude, more than the daily rollups sum (kind workout)"),
        (Body.workout(["distanceMeters": "-1e300"]), "distanceMeters is beyond ±1e15 in magnitude, more than the daily rollups sum"),
        (Body.workout(["activeEnergyKilocalories": "1.7976931348623157e308"]),
         "activeEnergyKilocalories is beyond ±1e15 in magnitude, more than the daily rollups sum"),
        (Body.workout(["value": "1e300"]), "value is beyond ±1e15 in magnitude, more than the daily rollups sum (kind workout)"),
        (Body.quantity(["kind": "\"somethingNew\"", "value": "1e300"]),
         "value is beyond ±1e15 in magnitude, more than the daily rollups sum (kind somethingNew)"),
        (Body.workout(["distanceMeters": "1e15", "durationSeconds": "1e15"]), nil),
    ] as [(String, String?)])
    func summableBoundEveryKey(sample: String, reason: String?) throws {
        let batch = try jsonBatch(Body.json(samples: [sample]))
        #expect(batch.quarantined.first?.reason == reason)
    }

    @Test("a number the rollups sum is kept only up to 1e15 in a CSV cell too")
    func summableBoundCSV() throws {
        let text = CSVBody.document([CSVBody.row(["value": "1e308"]), CSVBody.row(["uuid": "A1B2C3D4-0000-4000-8000-000000000002", "value": "1e15"])])
        let decoded = try batches(try PayloadDecoder.decode(csv: Array(text.utf8)))
        #expect(decoded.count == 1)
        #expect(decoded[0].quarantined.map(\.reason) == [Self.huge])
        #expect(decoded[0].quarantined.map(\.position) == [1])
        #expect(decoded[0].validSampleCount == 1)
    }

    @Test("a number with more than 1000 digits is quarantined even in an unknown key")
    func longNumber() throws {
        let digits = "1" + String(repeating: "0", count: 1000)
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(["count": digits])]))
        #expect(batch.quarantined.first?.reason == "count holds a number beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits")
    }

    @Test("a category value is an integer that fits Int32", arguments: [
        ("4", nil), ("0", nil), ("-2147483648", nil), ("2147483647", nil),
        ("2147483648", "value does not fit a 32-bit integer (kind category)"),
        ("-2147483649", "value does not fit a 32-bit integer (kind category)"),
        ("99999999999999999999", "value does not fit a 32-bit integer (kind category)"),
        ("4.0", "value is not an integer (kind category)"), ("4e0", "value is not an integer (kind category)"),
        ("\"4\"", "value is not an integer (kind category)"), ("null", "value is null (kind category)"),
    ] as [(String, String?)])
    func categoryValue(literal: String, reason: String?) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.category(["value": literal])]))
        #expect(batch.quarantined.first?.reason == reason)
    }

    @Test("a category without a name is valid; without a value it is not")
    func categoryKeys() throws {
        #expect(try jsonBatch(Body.json(samples: [Body.category(["name": nil])])).validSampleCount == 1)
        #expect(try jsonBatch(Body.json(samples: [Body.category(["value": nil])])).quarantined.first?.reason == "value is missing (kind category)")
        #expect(try jsonBatch(Body.json(samples: [Body.category(["name": "7"])])).quarantined.first?.reason == "name is not a string")
    }

    @Test("a workout's keys and their types", arguments: [
        (["activityName": nil, "distanceMeters": nil, "activeEnergyKilocalories": nil], nil),
        (["activityType": nil], "activityType is missing (kind workout)"),
        (["durationSeconds": nil], "durationSeconds is missing (kind workout)"),
        (["activityType": "37.5"], "activityType is not an integer (kind workout)"),
        (["activityType": "\"37\""], "activityType is not an integer (kind workout)"),
        (["activityType": "-2147483649"], "activityType does not fit a 32-bit integer (kind workout)"),
        (["durationSeconds": "\"1800\""], "durationSeconds is not a number (kind workout)"),
        (["durationSeconds": "1e-320"], "durationSeconds is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind workout)"),
        (["distanceMeters": "null"], "distanceMeters is null"),
        (["distanceMeters": "\"5 km\""], "distanceMeters is not a number"),
        (["activeEnergyKilocalories": "1e400"], "activeEnergyKilocalories is not finite as double precision"),
        (["activeEnergyKilocalories": "1e-400"], "activeEnergyKilocalories is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects"),
        (["activityName": "14"], "activityName is not a string"),
        (["value": "1e-999"], "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind workout)"),
        (["value": "\"anything\""], nil),
    ] as [([String: String?], String?)])
    func workoutKeys(changes: [String: String?], reason: String?) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.workout(changes)]))
        #expect(batch.quarantined.first?.reason == reason)
    }

    @Test("each of the eight common keys is required and a string", arguments: ["uuid", "id", "type", "group", "source", "start", "end", "kind"])
    func commonKeys(key: String) throws {
        #expect(try jsonBatch(Body.json(samples: [Body.quantity([key: nil])])).quarantined.first?.reason == "\(key) is missing")
        #expect(try jsonBatch(Body.json(samples: [Body.quantity([key: "null"])])).quarantined.first?.reason == "\(key) is null")
        #expect(try jsonBatch(Body.json(samples: [Body.quantity([key: "1"])])).quarantined.first?.reason == "\(key) is not a string")
    }

    @Test("uuid is 8-4-4-4-12 hex digits in either case", arguments: [
        ("a1b2c3d4-0000-4000-8000-00000000000f", true), ("A1B2C3D4-0000-4000-8000-00000000000F", true),
        ("A1B2C3D4000040008000000000000001", false), ("A1B2C3D4-0000-4000-8000-00000000000G", false),
        ("{A1B2C3D4-0000-4000-8000-000000000001}", false), ("A1B2C3D4-0000-4000-8000-0000000000011", false),
        ("A1B2C3D4_0000_4000_8000_000000000001", false), ("", false),
    ])
    func uuidShape(uuid: String, valid: Bool) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(uuid: uuid)]))
        #expect(batch.validSampleCount == (valid ? 1 : 0))
        if !valid { #expect(batch.quarantined.first?.reason == "uuid is not a UUID") }
    }

    @Test("an unknown kind or type is valid and kept as sent")
    func unknownKindAndType() throws {
        let sample = Body.quantity(["kind": "\"measurement\"", "type": "\"HKQuantityTypeIdentifierNewThing\"", "value": "\"high\"", "unit": nil])
        let batch = try jsonBatch(Body.json(samples: [sample]))
        #expect(batch.validSampleCount == 1)
        #expect(String(decoding: batch.samplesJSON, as: UTF8.self) == "[" + sample + "]")
    }

    @Test("unknown keys inside a sample are kept, with any JSON value but unsafe strings or numbers")
    func unknownKeys() throws {
        let kept = Body.quantity(["extra": #"{"a":[null,true,-1.5e-3,"\ud83d\ude00"],"b":{}}"#, "n": "null"])
        let batch = try jsonBatch(Body.json(samples: [kept]))
        #expect(batch.validSampleCount == 1)
        let object = try #require(try sampleObjects(batch).first)
        #expect(object["n"] is NSNull)
        #expect((object["extra"] as? [String: Any])?["b"] != nil)
    }

    @Test("escapes PostgreSQL rejects are quarantined wherever they are", arguments: [
        (#"{"deep":["ok","\u0000"]}"#, "nested contains the escape \\u0000"),
        (#""\udbff""#, "nested contains an unpaired surrogate escape"),
        (#""\ud800\u0041""#, "nested contains an unpaired surrogate escape"),
        (#""\udc00\ud800""#, "nested contains an unpaired surrogate escape"),
        (#"{"k\u0000":1}"#, "nested contains the escape \\u0000"),
        (#"[1e-5000]"#, "nested holds a number beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits"),
        (#"[1e999]"#, "nested holds a number that is not finite as double precision"),
        (#""\\u0000""#, nil),
        (#""\ud83d\ude00""#, nil),
    ] as [(String, String?)])
    func postgresUnsafe(value: String, reason: String?) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(["nested": value])]))
        #expect(batch.quarantined.first?.reason == reason)
    }

    @Test("a key that itself holds a bad escape is quarantined")
    func badKey() throws {
        let sample = Body.quantity().replacingOccurrences(of: "}", with: #","bad\u0000key":1}"#)
        #expect(try jsonBatch(Body.json(samples: [sample])).quarantined.first?.reason == "a key contains the escape \\u0000")
    }

    @Test("known keys may be spelled with escapes, as jsonb would read them")
    func escapedKeys() throws {
        let sample = Body.quantity().replacingOccurrences(of: "\"value\":42", with: #""v\u0061lue":"x""#)
        #expect(try jsonBatch(Body.json(samples: [sample])).quarantined.first?.reason == "value is not a number (kind quantity)")
        let escapedUUID = Body.quantity(uuid: #"A1B2C3D4-0000-4000-8000-00000000000\u0031"#)
        #expect(try jsonBatch(Body.json(samples: [escapedUUID])).validSampleCount == 1)
    }

    @Test("timestamps must have the reference's exact shape", arguments: [
        ("2026-08-21T10:25:30.000Z", true), ("2026-08-21T10:25:30.000-09:30", true), ("2024-02-29T00:00:00.000Z", true),
        ("2026-02-29T00:00:00.000Z", false), ("2026-08-21T10:25:30Z", false), ("2026-08-21T10:25:30.00Z", false),
        ("2026-08-21T10:25:30.0000Z", false), ("2026-08-21 10:25:30.000Z", false), ("2026-08-21T24:00:00.000Z", false),
        ("2026-08-21T10:25:30.000+0200", false), ("2026-08-21T10:25:30.000z", false), ("2026-08-21T10:25:30.000+16:00", false),
    ])
    func timestampShape(stamp: String, valid: Bool) throws {
        let batch = try jsonBatch(Body.json(samples: [Body.quantity(["start": "\"2000-01-01T00:00:00.000Z\"", "end": "\"\(stamp)\""])]))
        #expect(batch.validSampleCount == (valid ? 1 : 0))
        if !valid { #expect(batch.quarantined.first?.reason == "end is not a timestamp like 2026-08-21T10:25:30.000+02:00") }
    }
}
