import Foundation
import HealthPayload
import Testing

@Suite("JSON bodies")
struct JSONBodyTests {
    @Test("the app's probe bytes decode to .probe")
    func probe() throws {
        #expect(isProbe(try PayloadDecoder.decode(json: Fixture.bytes("probe.json"))))
    }

    @Test("connectivityTest true needs nothing but schemaVersion 1")
    func minimalProbe() throws {
        #expect(isProbe(try PayloadDecoder.decode(json: Array(#"{"schemaVersion":1,"connectivityTest":true}"#.utf8))))
    }

    @Test("the worked example decodes to one batch of three valid samples with the envelope as sent")
    func workedExample() throws {
        let batch = try jsonBatch(Fixture.bytes("contract-example.json"))
        #expect(batch.format == .json)
        #expect(batch.validSampleCount == 3)
        #expect(batch.quarantined.isEmpty)
        #expect(batch.sampleCount == 3)
        #expect(batch.envelope == Envelope(
            exportId: "6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70", generatedAt: "2026-08-21T12:00:00.000+02:00",
            batchSequence: 1, isFinalBatch: true, basis: "window",
            windowStart: "2026-08-20T12:00:00.000+02:00", windowEnd: "2026-08-21T12:00:00.000+02:00",
            occasionStart: "2026-08-20T12:00:00.000+02:00", occasionEnd: "2026-08-21T12:00:00.000+02:00"))
        let samples = try samplesByUUID(batch)
        let steps = try #require(samples["A1B2C3D4-0000-4000-8000-000000000001"])
        #expect(steps["value"] as? Int == 42)
        #expect(steps["unit"] as? String == "count")
        let sleep = try #require(samples["A1B2C3D4-0000-4000-8000-000000000002"])
        #expect(sleep["value"] as? Int == 4)
        #expect(sleep["name"] as? String == "asleepDeep")
        let run = try #require(samples["A1B2C3D4-0000-4000-8000-000000000003"])
        #expect(run["activityType"] as? Int == 37)
        #expect(run["distanceMeters"] as? Int == 5000)
        #expect(run["value"] == nil && run["unit"] == nil && run["name"] == nil)
    }

    @Test("samplesJSON is the body's own sample bytes, not a re-serialization")
    func exactSlices() throws {
        let body = try Fixture.text("contract-example.json")
        let batch = try jsonBatch(Array(body.utf8))
        let samplesText = String(decoding: batch.samplesJSON, as: UTF8.self)
        #expect(body.contains("\"samples\":" + samplesText + ",\"schemaVersion\""))
    }

    @Test("whitespace between samples is dropped but each sample keeps its own bytes")
    func slicesWithWhitespace() throws {
        let a = Body.quantity(["value": "1.50E+2", "note": "\"  spaced  \""])
        let b = Body.category()
        let batch = try jsonBatch(Body.json(samples: [" \n" + a + " \r\n", "\t" + b]))
        #expect(String(decoding: batch.samplesJSON, as: UTF8.self) == "[" + a + "," + b + "]")
    }

    @Test("Envelope.jsonText is an object of exactly the nine keys, escaped")
    func envelopeJSONText() throws {
        let batch = try jsonBatch(Body.json(samples: [], overriding: ["basis": #""say \"hi\"\n""#, "batchSequence": "7"]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(batch.envelope.jsonText.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["exportId", "generatedAt", "batchSequence", "isFinalBatch", "basis", "windowStart", "windowEnd", "occasionStart", "occasionEnd"])
        #expect(object["basis"] as? String == "say \"hi\"\n")
        #expect(object["batchSequence"] as? Int == 7)
        #expect(object["isFinalBatch"] as? Bool == true)
        #expect(object["exportId"] as? String == Body.exportId)
    }

    @Test("an empty samples array is a batch with no samples")
    func emptySamples() throws {
        let batch = try jsonBatch(Body.json(samples: []))
        #expect(batch.validSampleCount == 0)
        #expect(String(decoding: batch.samplesJSON, as: UTF8.self) == "[]")
    }

    @Test("two samples with the same id and different uuids are both valid")
    func sharedId() throws {
        let batch = try jsonBatch(Fixture.bytes("shared-id.good.json"))
        #expect(batch.validSampleCount == 2)
        let objects = try sampleObjects(batch)
        #expect(Set(objects.compactMap { $0["id"] as? String }).count == 1)
        #expect(Set(objects.compactMap { $0["uuid"] as? String }).count == 2)
    }

    @Test("a version other than the integer 1 is rejected, naming schemaVersion", arguments: [
        ("2", "schemaVersion is 2; only 1 is accepted"),
        ("\"1\"", "schemaVersion is \"1\"; only 1 is accepted"),
        ("1.5", "schemaVersion is 1.5; only 1 is accepted"),
        ("1.0", "schemaVersion is 1.0; only 1 is accepted"),
        ("1e0", "schemaVersion is 1e0; only 1 is accepted"),
        ("true", "schemaVersion is true; only 1 is accepted"),
        ("null", "schemaVersion is null; only 1 is accepted"),
    ])
    func badVersion(value: String, message: String) {
        #expect(jsonError(Body.json(samples: [Body.quantity()], overriding: ["schemaVersion": value])) == message)
    }

    @Test("schemaVersion 2 fixture is rejected")
    func versionTwoFixture() throws {
        #expect(jsonError(try Fixture.bytes("schema-v2.bad.json")) == "schemaVersion is 2; only 1 is accepted")
    }

    @Test("a missing schemaVersion is rejected, even on a probe")
    func missingVersion() {
        #expect(jsonError(Body.json(samples: [], overriding: ["schemaVersion": nil])) == "schemaVersion is missing; only 1 is accepted")
        #expect(jsonError(#"{"connectivityTest":true}"#) == "schemaVersion is missing; only 1 is accepted")
    }

    @Test("schemaVersion is checked before every other key")
    func versionFirst() {
        #expect(jsonError(#"{"schemaVersion":2}"#) == "schemaVersion is 2; only 1 is accepted")
        #expect(jsonError(#"{"samples":5,"schemaVersion":3,"exportId":1}"#) == "schemaVersion is 3; only 1 is accepted")
    }

    @Test("each missing envelope key is named", arguments: [
        "connectivityTest", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "basis",
        "windowStart", "windowEnd", "occasionStart", "occasionEnd", "samples",
    ])
    func missingEnvelopeKey(key: String) {
        #expect(jsonError(Body.json(samples: [Body.quantity()], overriding: [key: String?.none])) == "\(key) is missing")
    }

    @Test("each mistyped envelope key is named", arguments: [
        ("connectivityTest", "\"false\"", "connectivityTest is not a boolean"),
        ("connectivityTest", "0", "connectivityTest is not a boolean"),
        ("exportId", "42", "exportId is not a string"),
        ("exportId", "\"6C7F1E22-1B3D-4A5E-9F00\"", "exportId is not a UUID: \"6C7F1E22-1B3D-4A5E-9F00\""),
        ("exportId", "null", "exportId is not a string"),
        ("generatedAt", "\"2026-08-21T12:00:00+02:00\"", "generatedAt is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"2026-08-21T12:00:00+02:00\""),
        ("generatedAt", "1755770400", "generatedAt is not a string"),
        ("batchSequence", "\"1\"", "batchSequence is not an integer"),
        ("batchSequence", "1.0", "batchSequence is not an integer"),
        ("batchSequence", "0", "batchSequence is 0; it must be at least 1"),
        ("batchSequence", "-3", "batchSequence is -3; it must be at least 1"),
        ("batchSequence", "2147483648", "batchSequence does not fit a 32-bit integer"),
        ("isFinalBatch", "\"true\"", "isFinalBatch is not a boolean"),
        ("basis", "\"\"", "basis is empty"),
        ("basis", "[\"window\"]", "basis is not a string"),
        ("basis", "\"win\\u0000dow\"", "basis contains the escape \\u0000"),
        ("basis", "\"win\\udc00dow\"", "basis contains an unpaired surrogate escape"),
        ("windowStart", "\"2026-02-30T00:00:00.000Z\"", "windowStart is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"2026-02-30T00:00:00.000Z\""),
        ("windowEnd", "\"\"", "windowEnd is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"\""),
        ("occasionStart", "false", "occasionStart is not a string"),
        ("occasionEnd", "\"2026-08-21T12:00:00.000+0200\"", "occasionEnd is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"2026-08-21T12:00:00.000+0200\""),
        ("samples", "{}", "samples is not an array"),
        ("samples", "null", "samples is not an array"),
    ])
    func mistypedEnvelopeKey(key: String, value: String, message: String) {
        #expect(jsonError(Body.json(samples: [Body.quantity()], overriding: [key: value])) == message)
    }

    @Test("batchSequence at the top of Int32 is accepted")
    func largestSequence() throws {
        #expect(try jsonBatch(Body.json(samples: [], overriding: ["batchSequence": "2147483647"])).envelope.batchSequence == 2_147_483_647)
    }

    @Test("a connectivityTest that is not true does not make a probe")
    func falseProbe() throws {
        let batch = try jsonBatch(Body.json(samples: [Body.quantity()], overriding: ["connectivityTest": "false"]))
        #expect(batch.validSampleCount == 1)
    }

    @Test("envelope strings with escapes are decoded")
    func escapedEnvelope() throws {
        let batch = try jsonBatch(Body.json(samples: [], overriding: [
            "exportId": #""6c7f1e22-1b3d-4a5e-9f00-2c1d4e5a6b7\u0030""#, "basis": #""\u00e9t\u00e9 \ud83d\ude00""#,
        ]))
        #expect(batch.envelope.exportId == "6c7f1e22-1b3d-4a5e-9f00-2c1d4e5a6b70")
        #expect(batch.envelope.basis == "été 😀")
    }

    @Test("unknown envelope keys are ignored and a repeated key counts by its last occurrence")
    func unknownAndRepeatedKeys() throws {
        var text = Body.json(samples: [Body.quantity()])
        text.removeLast()
        text += #","futureKey":{"a":[1,2]},"batchSequence":5,"basis":"anchor"}"#
        let batch = try jsonBatch(text)
        #expect(batch.envelope.batchSequence == 5)
        #expect(batch.envelope.basis == "anchor")
        #expect(batch.validSampleCount == 1)
    }

    @Test("a body that is JSON but not an object is rejected", arguments: ["[]", "\"text\"", "1", "null", "[{\"schemaVersion\":1}]"])
    func notAnObject(text: String) {
        #expect(jsonError(text) == "body is not a JSON object")
    }

    @Test("text that is not strict RFC 8259 JSON is rejected with its byte offset", arguments: [
        "", "   ", "{", #"{"schemaVersion":1,}"#, #"{"schemaVersion":NaN}"#, #"{"schemaVersion":Infinity}"#,
        #"{"schemaVersion":-Infinity}"#, #"{'schemaVersion':1}"#, #"{"schemaVersion":01}"#, #"{"schemaVersion":1} x"#,
        #"{"schemaVersion":1 /* c */}"#, "{\"a\":\"tab\there\"}", #"{"a":[1,2,]}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#,
        #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":1.}"#, #"{"a":1e}"#, #"{"a":tru}"#, #"{"a" 1}"#, #"{"a":1 "b":2}"#,
        #"{"a":"unterminated}"#, "{\"a\":1}\u{0}",
    ])
    func invalidJSON(text: String) throws {
        let message = try #require(jsonError(text))
        #expect(message.hasPrefix("not valid JSON at byte "))
        #expect(message.contains("(line "))
    }

    @Test("the error names line and column of the fault")
    func errorLocation() {
        #expect(jsonError("{\n  \"schemaVersion\": 1,\n  \"a\": nul\n}") == "not valid JSON at byte 31 (line 3, column 8): unexpected value; expected a value")
    }

    @Test("invalid UTF-8 anywhere is rejected", arguments: [
        [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80],
    ] as [[UInt8]])
    func invalidUTF8(bad: [UInt8]) throws {
        var body = Array(Body.json(samples: [Body.quantity(["source": "\"SRC\""])]).utf8)
        let at = try #require(body.firstRange(of: Array("SRC".utf8)))
        body.replaceSubrange(at, with: bad)
        let message = try #require(jsonError(body))
        #expect(message.hasPrefix("body is not valid UTF-8 (byte "))
    }

    @Test("a leading byte-order mark is skipped")
    func byteOrderMark() throws {
        let batch = try jsonBatch([0xEF, 0xBB, 0xBF] + Fixture.bytes("contract-example.json"))
        #expect(batch.validSampleCount == 3)
        #expect(isProbe(try PayloadDecoder.decode(json: [0xEF, 0xBB, 0xBF] + Fixture.bytes("probe.json"))))
    }

    @Test("nesting up to 64 levels is accepted and deeper is rejected")
    func nestingLimit() throws {
        // Envelope (1) › samples (2) › sample (3) › 61 more arrays = 64.
        let ok = Body.quantity(["deep": String(repeating: "[", count: 61) + String(repeating: "]", count: 61)])
        #expect(try jsonBatch(Body.json(samples: [ok])).validSampleCount == 1)
        let tooDeep = Body.quantity(["deep": String(repeating: "[", count: 62) + String(repeating: "]", count: 62)])
        let message = try #require(jsonError(Body.json(samples: [tooDeep])))
        #expect(message.hasSuffix("nesting deeper than 64"))
    }

    @Test("decode(_:format:) dispatches on the format")
    func formatDispatch() throws {
        #expect(isProbe(try PayloadDecoder.decode(Fixture.bytes("probe.json"), format: .json)))
        #expect(isProbe(try PayloadDecoder.decode(Fixture.bytes("probe.csv"), format: .csv)))
    }
}
