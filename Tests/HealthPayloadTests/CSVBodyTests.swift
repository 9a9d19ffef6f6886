import Foundation
import HealthPayload
import Testing

/// Builds CSV bodies in the reference's 26-column layout.
enum CSVBody {
    static let columns = ["schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd",
                          "uuid", "id", "type", "group", "source", "start", "end", "kind", "value", "unit", "name", "activityType",
                          "activityName", "durationSeconds", "distanceMeters", "activeEnergyKilocalories", "basis", "occasionStart", "occasionEnd"]

    /// A quantity row as column → cell, with `changes` applied.
    static func row(_ changes: [String: String] = [:]) -> [String: String] {
        var cells: [String: String] = [
            "schemaVersion": "1", "exportId": Body.exportId, "generatedAt": Body.stamp, "batchSequence": "1", "isFinalBatch": "true",
            "windowStart": "2026-08-20T12:00:00.000+02:00", "windowEnd": Body.stamp, "uuid": "A1B2C3D4-0000-4000-8000-000000000001",
            "id": Body.id, "type": "HKQuantityTypeIdentifierStepCount", "group": "activity", "source": "com.apple.Health",
            "start": "2026-08-21T10:25:30.000+02:00", "end": "2026-08-21T10:25:30.000+02:00", "kind": "quantity", "value": "42",
            "unit": "count", "basis": "window", "occasionStart": "2026-08-20T12:00:00.000+02:00", "occasionEnd": Body.stamp,
        ]
        for (key, value) in changes { cells[key] = value }
        return cells
    }

    /// A document: header of `columns`, then the rows, written with the reference's dialect.
    static func document(_ rows: [[String: String]], columns: [String] = columns) -> String {
        var writer = CSVWriter()
        writer.writeRow(columns)
        for row in rows { writer.writeRow(columns.map { row[$0] ?? "" }) }
        return writer.text
    }

    static func batchList(_ text: String) throws -> [Batch] {
        try batches(try PayloadDecoder.decode(csv: Array(text.utf8)))
    }

    static func batch(_ text: String) throws -> Batch {
        let all = try batchList(text)
        try #require(all.count == 1)
        return all[0]
    }
}

@Suite("CSV bodies")
struct CSVBodyTests {
    @Test("the app's probe (a header and no rows) decodes to .probe, with or without its terminator")
    func probe() throws {
        let bytes = try Fixture.bytes("probe.csv")
        #expect(isProbe(try PayloadDecoder.decode(csv: bytes)))
        #expect(isProbe(try PayloadDecoder.decode(csv: Array(bytes.dropLast()))))
        #expect(isProbe(try PayloadDecoder.decode(csv: bytes + bytes)))
        #expect(isProbe(try PayloadDecoder.decode(csv: Array("uuid\n".utf8))))
    }

    @Test("the worked example as CSV gives the JSON worked example's envelope and sample objects")
    func workedExampleMatchesJSON() throws {
        let csv = try #require(try batches(PayloadDecoder.decode(csv: Fixture.bytes("contract-example.csv"))).first)
        let json = try jsonBatch(Fixture.bytes("contract-example.json"))
        #expect(csv.format == .csv)
        #expect(csv.validSampleCount == 3)
        #expect(csv.quarantined.isEmpty)
        #expect(csv.envelope == json.envelope)
        let fromCSV = try samplesByUUID(csv)
        let fromJSON = try samplesByUUID(json)
        #expect(fromCSV.count == 3)
        #expect(Set(fromCSV.keys) == Set(fromJSON.keys))
        for (uuid, object) in fromJSON {
            #expect(fromCSV[uuid] == object, "sample \(uuid)")
        }
        let run = try #require(fromCSV["A1B2C3D4-0000-4000-8000-000000000003"])
        #expect(run["value"] == nil && run["unit"] == nil && run["name"] == nil)
        let steps = try #require(fromCSV["A1B2C3D4-0000-4000-8000-000000000001"])
        #expect(steps["activityType"] == nil && steps["durationSeconds"] == nil && steps["name"] == nil)
        #expect(steps["value"] as? Int == 42)
    }

    @Test("CRLF and CR-only line ends decode to the same samples as LF", arguments: ["crlf-line-ends.good.csv", "cr-line-ends.good.csv"])
    func lineEnds(name: String) throws {
        let reference = try #require(try batches(PayloadDecoder.decode(csv: Fixture.bytes("contract-example.csv"))).first)
        let batch = try #require(try batches(PayloadDecoder.decode(csv: Fixture.bytes(name))).first)
        #expect(batch.samplesJSON == reference.samplesJSON)
        #expect(batch.envelope == reference.envelope)
    }

    @Test("a quoted comma, a doubled quote and a newline in source, empty cells and an appended column")
    func quotedSource() throws {
        let batch = try #require(try batches(PayloadDecoder.decode(csv: Fixture.bytes("quoted-source.good.csv"))).first)
        #expect(batch.validSampleCount == 3)
        let samples = try samplesByUUID(batch)
        let steps = try #require(samples["A1B2C3D4-0000-4000-8000-000000000011"])
        #expect(steps["source"] as? String == "Acme, Inc. \"Pedometer\"\nv2")
        #expect(steps["value"] as? Double == 1200.5)
        #expect(steps["note"] as? String == "from the gym")
        #expect(steps["name"] == nil && steps["activityType"] == nil && steps["distanceMeters"] == nil)
        let workout = try #require(samples["A1B2C3D4-0000-4000-8000-000000000012"])
        #expect(Set(workout.allKeys.compactMap { $0 as? String }) == ["uuid", "id", "type", "group", "source", "start", "end", "kind", "activityType", "durationSeconds"])
        #expect(workout["activityType"] as? Int == 14)
        #expect(workout["durationSeconds"] as? Int == 1800)
        let sleep = try #require(samples["A1B2C3D4-0000-4000-8000-000000000013"])
        #expect(sleep["value"] as? Int == 7)
        #expect(sleep["name"] == nil)
        #expect(sleep["note"] as? String == "x,y")
    }

    @Test("the built sample text puts known keys in reference order and numbers as sent")
    func builtText() throws {
        let batch = try CSVBody.batch(CSVBody.document([CSVBody.row(["value": "1.5e-7", "source": "a\"b\\c\u{1}"])]))
        let expected = #"[{"uuid":"A1B2C3D4-0000-4000-8000-000000000001","id":"\#(Body.id)","type":"HKQuantityTypeIdentifierStepCount","group":"activity","source":"a\"b\\c\u0001","start":"2026-08-21T10:25:30.000+02:00","end":"2026-08-21T10:25:30.000+02:00","kind":"quantity","value":1.5e-7,"unit":"count"}]"#
        #expect(String(decoding: batch.samplesJSON, as: UTF8.self) == expected)
    }

    @Test("appended bodies become batches in order, each header row skipped")
    func appendedBodies() throws {
        let all = try batches(PayloadDecoder.decode(csv: Fixture.bytes("appended-bodies.good.csv")))
        #expect(all.map(\.envelope.batchSequence) == [1, 2])
        #expect(all.map(\.envelope.isFinalBatch) == [false, true])
        #expect(all.map(\.validSampleCount) == [2, 1])
        #expect(try sampleObjects(all[1]).first?["unit"] as? String == "count/min")
    }

    @Test("rows are grouped into the batch they state, in order of first appearance, positions counted per batch")
    func interleavedBatches() throws {
        let a = ["batchSequence": "1", "isFinalBatch": "false"]
        let b = ["batchSequence": "2", "isFinalBatch": "true"]
        let text = CSVBody.document([
            CSVBody.row(a.merging(["uuid": "A1B2C3D4-0000-4000-8000-000000000001"]) { $1 }),
            CSVBody.row(b.merging(["uuid": "A1B2C3D4-0000-4000-8000-000000000002"]) { $1 }),
            CSVBody.row(a.merging(["uuid": "bad"]) { $1 }),
        ])
        let all = try CSVBody.batchList(text)
        #expect(all.map(\.envelope.batchSequence) == [1, 2])
        #expect(all[0].validSampleCount == 1)
        #expect(all[0].quarantined.map(\.position) == [2])
        #expect(all[0].quarantined.first?.reason == "uuid is not a UUID")
        #expect(all[1].validSampleCount == 1)
    }

    @Test("a schemaVersion other than exactly 1 on any row rejects the whole body", arguments: ["2", "1.0", "01", " 1", ""])
    func badVersion(version: String) throws {
        let text = CSVBody.document([CSVBody.row(), CSVBody.row(["schemaVersion": version, "uuid": "A1B2C3D4-0000-4000-8000-000000000002"])])
        #expect(csvError(text) == "record 3 (line 3): schemaVersion is \"\(version)\"; only 1 is accepted")
    }

    @Test("the schemaVersion 2 fixture is rejected")
    func versionTwoFixture() throws {
        #expect(csvError(try Fixture.bytes("schema-v2.bad.csv")) == "record 2 (line 2): schemaVersion is \"2\"; only 1 is accepted")
    }

    @Test("schemaVersion is checked on every row before any other envelope cell")
    func versionBeforeEnvelope() throws {
        let text = CSVBody.document([CSVBody.row(["exportId": "nope"]), CSVBody.row(["schemaVersion": "2"])])
        #expect(csvError(text) == "record 3 (line 3): schemaVersion is \"2\"; only 1 is accepted")
    }

    @Test("bodies without a usable header are rejected", arguments: [
        ("", "body is empty; expected a CSV header row"),
        ("\n\n", "body is empty; expected a CSV header row"),
        ("\u{FEFF}", "body is empty; expected a CSV header row"),
        ("schemaVersion,exportId\n1,x\n", "record 1 (line 1): the header has no uuid column; is this a healthd CSV body, its header row first?"),
        ("1,6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70,x\n", "record 1 (line 1): the header has no uuid column; is this a healthd CSV body, its header row first?"),
        // A body without its header row: its first data row's empty cells repeat, but what it lacks is the header.
        ("1,6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70,,,1,true\n", "record 1 (line 1): the header has no uuid column; is this a healthd CSV body, its header row first?"),
        ("uuid,source,uuid\n", "record 1 (line 1): the header repeats the column \"uuid\""),
        ("uuid,,\n", "record 1 (line 1): the header repeats the column \"\""),
    ])
    func badHeader(text: String, message: String) {
        #expect(csvError(text) == message)
    }

    @Test("a header repeating a column name is rejected even when data rows follow")
    func duplicateHeaderWithRows() {
        let text = CSVBody.document([CSVBody.row()], columns: CSVBody.columns + ["source"])
        #expect(csvError(text) == "record 1 (line 1): the header repeats the column \"source\"")
    }

    @Test("a row with more or fewer fields than the header is rejected, naming record and line")
    func fieldCount() {
        var text = CSVBody.document([CSVBody.row(["source": "multi\nline"]), CSVBody.row()])
        text += "1,2,3\n"
        #expect(csvError(text) == "record 4 (line 5): 3 fields; the header has 26")
        let extra = CSVBody.document([CSVBody.row()]).replacingOccurrences(of: "2026-08-21T12:00:00.000+02:00\n", with: "2026-08-21T12:00:00.000+02:00,extra\n")
        #expect(csvError(extra) == "record 2 (line 2): 27 fields; the header has 26")
    }

    @Test("a version 2 body is rejected for its version even when its other columns differ")
    func versionBeforeColumns() {
        let columns = CSVBody.columns.map { $0 == "exportId" ? "runId" : $0 }
        let text = CSVBody.document([CSVBody.row(["schemaVersion": "2", "runId": Body.exportId])], columns: columns)
        #expect(csvError(text) == "record 2 (line 2): schemaVersion is \"2\"; only 1 is accepted")
    }

    @Test("a missing envelope column is rejected, naming it", arguments: [
        "schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd", "basis", "occasionStart", "occasionEnd",
    ])
    func missingEnvelopeColumn(column: String) {
        let text = CSVBody.document([CSVBody.row()], columns: CSVBody.columns.filter { $0 != column })
        #expect(csvError(text) == "record 1 (line 1): the header has no \(column) column")
    }

    @Test("a malformed envelope cell is rejected, naming record and column", arguments: [
        ("exportId", "not-a-uuid", "exportId is not a UUID: \"not-a-uuid\""),
        ("generatedAt", "2026-08-21", "generatedAt is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"2026-08-21\""),
        ("batchSequence", "0", "batchSequence is not an integer from 1 to 2147483647: \"0\""),
        ("batchSequence", "1.0", "batchSequence is not an integer from 1 to 2147483647: \"1.0\""),
        ("batchSequence", "", "batchSequence is not an integer from 1 to 2147483647: \"\""),
        ("batchSequence", "2147483648", "batchSequence is not an integer from 1 to 2147483647: \"2147483648\""),
        ("isFinalBatch", "TRUE", "isFinalBatch is not true or false: \"TRUE\""),
        ("isFinalBatch", "", "isFinalBatch is not true or false: \"\""),
        ("windowStart", "", "windowStart is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"\""),
        ("windowEnd", "yesterday", "windowEnd is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"yesterday\""),
        ("occasionStart", "2026-13-01T00:00:00.000Z", "occasionStart is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"2026-13-01T00:00:00.000Z\""),
        ("occasionEnd", "x", "occasionEnd is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"x\""),
    ])
    func badEnvelopeCell(column: String, value: String, message: String) {
        let text = CSVBody.document([CSVBody.row(), CSVBody.row([column: value, "uuid": "A1B2C3D4-0000-4000-8000-000000000002"])])
        #expect(csvError(text) == "record 3 (line 3): " + message)
    }

    @Test("an empty basis is rejected")
    func emptyBasis() {
        #expect(csvError(CSVBody.document([CSVBody.row(["basis": ""])])) == "record 2 (line 2): basis is empty")
    }

    @Test("rows of one batch must carry one envelope")
    func envelopeMismatch() {
        let text = CSVBody.document([CSVBody.row(), CSVBody.row(["isFinalBatch": "false"]), CSVBody.row()])
        #expect(csvError(text) == "record 3 (line 3): isFinalBatch differs from earlier rows of the same batch (exportId \(Body.exportId), batchSequence 1)")
        let later = CSVBody.document([CSVBody.row(), CSVBody.row(["occasionEnd": "2026-08-21T12:00:00.001+02:00"])])
        #expect(csvError(later) == "record 3 (line 3): occasionEnd differs from earlier rows of the same batch (exportId \(Body.exportId), batchSequence 1)")
    }

    @Test("syntax faults reject the body, naming record and line", arguments: [
        ("uuid,source\nA,\"open\nB,c\n", "record 2 (line 2): unterminated quoted field"),
        ("uuid,source\nA,\"closed\"x\n", "record 2 (line 2): unexpected 'x' after a closing quote at byte 22"),
        ("uuid,source\nA,b\u{0}c\n", "record 2 (line 2): NUL byte at byte 15"),
        ("uuid,source\nA,\"b\u{0}c\"\n", "record 2 (line 2): NUL byte at byte 16"),
    ])
    func syntaxFaults(text: String, message: String) {
        #expect(csvError(text) == message)
    }

    @Test("invalid UTF-8 rejects the body")
    func invalidUTF8() throws {
        var bytes = try Fixture.bytes("contract-example.csv")
        let at = try #require(bytes.firstRange(of: Array("com.apple.Health".utf8)))
        bytes.replaceSubrange(at, with: [0x63, 0xFF, 0x63])
        let message = try #require(csvError(bytes))
        #expect(message.hasPrefix("record 2 (line 2): invalid UTF-8 at byte "))
        var quoted = Array("uuid,source\nA,\"x\"\"\u{00E9}\"\n".utf8)
        quoted[quoted.count - 3] = 0xC3
        quoted[quoted.count - 4] = 0xC3  // a lead byte followed by a quote: split sequence
        #expect(csvError(quoted) != nil)
    }

    @Test("a leading byte-order mark is skipped")
    func byteOrderMark() throws {
        let bytes = [0xEF, 0xBB, 0xBF] + (try Fixture.bytes("contract-example.csv"))
        let batch = try #require(try batches(PayloadDecoder.decode(csv: bytes)).first)
        #expect(batch.validSampleCount == 3)
    }

    @Test("blank lines carry nothing and are skipped")
    func blankLines() throws {
        let text = "\n" + CSVBody.document([CSVBody.row()]) + "\n\r\n"
        #expect(try CSVBody.batch(text).validSampleCount == 1)
    }

    @Test("numeric cells are typed by kind; text that is not a JSON number is quarantined where a number is required", arguments: [
        (["value": "abc"], "value is not a number (kind quantity)"),
        (["value": "1,5"], "value is not a number (kind quantity)"),
        (["value": "+3"], "value is not a number (kind quantity)"),
        (["value": ".5"], "value is not a number (kind quantity)"),
        (["value": "NaN"], "value is not a number (kind quantity)"),
        (["value": "1e400"], "value is not finite as double precision (kind quantity)"),
        (["value": "1e-400"], "value is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind quantity)"),
        (["value": ""], "value is missing (kind quantity)"),
        (["unit": ""], "unit is missing (kind quantity)"),
        (["kind": "category", "value": "4.5", "unit": ""], "value is not an integer (kind category)"),
        (["kind": "category", "value": "four", "unit": ""], "value is not an integer (kind category)"),
        (["kind": "category", "value": "3000000000", "unit": ""], "value does not fit a 32-bit integer (kind category)"),
        (["kind": "workout", "value": "", "unit": "", "activityType": "37", "durationSeconds": "1800", "distanceMeters": "far"], "distanceMeters is not a number"),
        (["kind": "workout", "value": "", "unit": "", "activityType": "x", "durationSeconds": "1800"], "activityType is not an integer (kind workout)"),
        (["kind": "workout", "value": "", "unit": "", "activityType": "37", "durationSeconds": "1e-320"], "durationSeconds is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects (kind workout)"),
        (["kind": "workout", "value": "", "unit": "", "activityType": "37"], "durationSeconds is missing (kind workout)"),
        (["uuid": "a1b2c3d4-0000-4000-8000-00000000000x"], "uuid is not a UUID"),
        (["start": "2026-08-21T10:25:30.000+02:00 "], "start is not a timestamp like 2026-08-21T10:25:30.000+02:00"),
        (["source": ""], "source is missing"),
    ] as [([String: String], String)])
    func cellTyping(changes: [String: String], reason: String) throws {
        let batch = try CSVBody.batch(CSVBody.document([CSVBody.row(changes)]))
        #expect(batch.validSampleCount == 0)
        #expect(batch.quarantined.first?.reason == reason)
        #expect(batch.quarantined.first?.position == 1)
    }

    @Test("a numeric cell of an unknown kind is a number when it reads as one, else a string")
    func unknownKindValue() throws {
        let batch = try CSVBody.batch(CSVBody.document([
            CSVBody.row(["kind": "mood", "value": "happy", "unit": ""]),
            CSVBody.row(["uuid": "A1B2C3D4-0000-4000-8000-000000000002", "kind": "mood", "value": "-2.5", "unit": ""]),
        ]))
        #expect(batch.validSampleCount == 2)
        let samples = try samplesByUUID(batch)
        #expect(samples["A1B2C3D4-0000-4000-8000-000000000001"]?["value"] as? String == "happy")
        #expect(samples["A1B2C3D4-0000-4000-8000-000000000002"]?["value"] as? Double == -2.5)
    }

    @Test("a quarantined row's raw text is the record's bytes without the terminator")
    func rawRecord() throws {
        let row = CSVBody.row(["value": "oops", "source": "two\r\nlines, \"quoted\""])
        let text = CSVBody.document([row])
        let batch = try CSVBody.batch(text)
        let expected = CSVWriter.row(CSVBody.columns.map { row[$0] ?? "" }).dropLast()
        #expect(batch.quarantined.first?.raw == String(expected))
        #expect(batch.quarantined.first?.raw.contains("\"two\r\nlines, \"\"quoted\"\"\"") == true)
    }

    @Test("an unknown column's non-empty cell is kept as a string under its header name; empty ones are absent")
    func unknownColumns() throws {
        let columns = CSVBody.columns + ["heartbeat", "odd \"name\"", "zero"]
        let batch = try CSVBody.batch(CSVBody.document([CSVBody.row(["heartbeat": "72", "odd \"name\"": "v", "zero": ""])], columns: columns))
        let object = try #require(try sampleObjects(batch).first)
        #expect(object["heartbeat"] as? String == "72")
        #expect(object["odd \"name\""] as? String == "v")
        #expect(object["zero"] == nil)
        #expect(object["schemaVersion"] == nil && object["exportId"] == nil && object["basis"] == nil)
    }

    @Test("columns are found by name, not position")
    func columnOrder() throws {
        let shuffled = CSVBody.columns.reversed().map { $0 }
        let a = try CSVBody.batch(CSVBody.document([CSVBody.row()], columns: shuffled))
        let b = try CSVBody.batch(CSVBody.document([CSVBody.row()]))
        #expect(a.samplesJSON == b.samplesJSON)
        #expect(a.envelope == b.envelope)
    }

    @Test("1000 rows of one batch decode into one batch of 1000 samples")
    func thousandRows() throws {
        let rows = (1...1000).map { CSVBody.row(["uuid": String(format: "A1B2C3D4-0000-4000-8000-%012d", $0)]) }
        let batch = try CSVBody.batch(CSVBody.document(rows))
        #expect(batch.validSampleCount == 1000)
        #expect(try sampleObjects(batch).count == 1000)
    }
}
