import Civil
import Foundation
import HealthPayload
import Testing
import TestSupport

@Suite("CSV reader and writer")
struct CSVReaderWriterTests {
    @Test("records carry their fields, number, starting line and raw byte range")
    func recordShape() throws {
        let text = "a,\"b,\"\"c\"\"\nd\",e\r\nf,,\rg"
        let bytes = Array(text.utf8)
        let records = try CSVReader.records(bytes)
        #expect(records.map(\.fields) == [["a", "b,\"c\"\nd", "e"], ["f", "", ""], ["g"]])
        #expect(records.map(\.number) == [1, 2, 3])
        #expect(records.map(\.line) == [1, 3, 4])
        #expect(records.map { String(decoding: bytes[$0.byteRange], as: UTF8.self) } == ["a,\"b,\"\"c\"\"\nd\",e", "f,,", "g"])
        #expect(records[1].location == "record 2 (line 3)")
    }

    @Test("a last row without terminator, a trailing terminator, and blank lines")
    func terminators() throws {
        #expect(try CSVReader.records(Array("x\n".utf8)).map(\.fields) == [["x"]])
        #expect(try CSVReader.records(Array("x".utf8)).map(\.fields) == [["x"]])
        #expect(try CSVReader.records(Array("".utf8)).isEmpty)
        let blanks = try CSVReader.records(Array("\n\r\n\rx".utf8))
        #expect(blanks.map(\.isBlank) == [true, true, true, false])
        #expect(blanks.map(\.line) == [1, 2, 3, 4])
        #expect(try CSVReader.records(Array("a,\n".utf8)).map(\.fields) == [["a", ""]])
        #expect(try CSVReader.records(Array("\"\"".utf8)).map(\.fields) == [[""]])
    }

    @Test("line numbers count CRLF once and newlines inside quotes")
    func lineNumbers() throws {
        let records = try CSVReader.records(Array("\"1\r\n2\r3\n4\"\r\nb\r\n".utf8))
        #expect(records.map(\.line) == [1, 5])
        #expect(records[0].fields == ["1\r\n2\r3\n4"])
    }

    @Test("a bare quote inside an unquoted field is kept as a character")
    func bareQuote() throws {
        #expect(try CSVReader.records(Array("5'11\",x\"y\n".utf8)).map(\.fields) == [["5'11\"", "x\"y"]])
    }

    @Test("a leading byte-order mark is not part of the first field")
    func byteOrderMark() throws {
        let records = try CSVReader.records([0xEF, 0xBB, 0xBF] + Array("uuid,x\n".utf8))
        #expect(records.first?.fields == ["uuid", "x"])
        #expect(records.first?.byteRange == 3..<9)
    }

    @Test("faults name the record and the line it starts on", arguments: [
        ("a\nb\n\"never closed\n\n", "record 3 (line 3): unterminated quoted field"),
        ("a\n\"x\"y\n", "record 2 (line 2): unexpected 'y' after a closing quote at byte 5"),
        ("a\n\"x\" \n", "record 2 (line 2): unexpected 0x20 after a closing quote at byte 5"),
        ("a\nb\u{0}\n", "record 2 (line 2): NUL byte at byte 3"),
    ])
    func faults(text: String, message: String) {
        let error = #expect(throws: PayloadError.self) { try CSVReader.records(Array(text.utf8)) }
        #expect(error?.message == message)
        #expect(error?.problem == .invalidCSV)
    }

    @Test("invalid UTF-8 is caught in plain fields, quoted fields, and across a doubled quote")
    func invalidUTF8() {
        let cases: [[UInt8]] = [
            Array("a,".utf8) + [0xFF],
            Array("a,\"".utf8) + [0xE2, 0x82] + Array("\"".utf8),
            Array("a,\"x".utf8) + [0xC3] + Array("\"\"".utf8) + [0xA9] + Array("\"".utf8),
        ]
        for bytes in cases {
            #expect(throws: PayloadError.self) { try CSVReader.records(bytes) }
        }
        #expect(throws: Never.self) { try CSVReader.records(Array("a,\"x\u{E9}\"\"\u{1F600}\"".utf8)) }
    }

    @Test("the writer quotes only fields holding a comma, a quote, LF or CR, and ends every row with LF", arguments: [
        (["plain", "", "with space", "tab\there"], "plain,,with space,tab\there\n"),
        (["a,b"], "\"a,b\"\n"),
        (["say \"hi\""], "\"say \"\"hi\"\"\"\n"),
        (["line\nbreak", "cr\rhere"], "\"line\nbreak\",\"cr\rhere\"\n"),
        (["é😀"], "é😀\n"),
        ([], "\n"),
    ])
    func writer(fields: [String], expected: String) {
        #expect(CSVWriter.row(fields) == expected)
    }

    @Test("random fields written by CSVWriter read back identically (seeded, 3000 records)")
    func roundTrip() throws {
        var rng = SeededGenerator(seed: 0xC5F_4180)
        let alphabet: [String] = ["a", "Z", "0", " ", ",", "\"", "\r", "\n", "\r\n", "é", "😀", "👩‍👩‍👧", "\t", "'", "\\", ";", "\u{2028}"]
        var rows: [[String]] = []
        var writer = CSVWriter()
        for _ in 0..<3000 {
            // A single empty field would be a blank line, which the reader reports as one empty field anyway.
            let count = Int.random(in: 1...8, using: &rng)
            var row: [String] = []
            for _ in 0..<count {
                let length = Int.random(in: 0...12, using: &rng)
                var field = ""
                for _ in 0..<length { field += alphabet.randomElement(using: &rng)! }
                row.append(field)
            }
            rows.append(row)
            writer.writeRow(row)
        }
        let records = try CSVReader.records(writer.bytes)
        #expect(records.count == rows.count)
        var mismatches = 0
        for (record, row) in zip(records, rows) where record.fields != row {
            mismatches += 1
        }
        #expect(mismatches == 0)
        // Each record's byte range is exactly the row as written, without its LF.
        for (record, row) in zip(records.prefix(200), rows) {
            #expect(Array(writer.bytes[record.byteRange]) + [0x0A] == Array(CSVWriter.row(row).utf8))
        }
    }
}

@Suite("Timestamp")
struct TimestampTests {
    @Test("parses the reference's shape into milliseconds since the epoch and the written offset", arguments: [
        ("1970-01-01T00:00:00.000Z", 0, 0),
        ("2026-08-21T10:25:30.000+02:00", 1_787_300_730_000, 120),
        ("2026-08-21T08:25:30.000Z", 1_787_300_730_000, 0),
        ("2026-08-21T00:25:30.123-08:00", 1_787_300_730_123, -480),
        ("2000-02-29T23:59:59.999+05:45", 951_848_099_999, 345),
        ("1969-12-31T23:59:59.999Z", -1, 0),
        ("0001-01-01T00:00:00.000Z", -62_135_596_800_000, 0),
        ("9999-12-31T23:59:59.999+15:59", 253_402_243_259_999, 959),
    ] as [(String, Int64, Int)])
    func parses(text: String, milliseconds: Int64, offset: Int) throws {
        let stamp = try #require(Timestamp(text))
        #expect(stamp.millisecondsSinceEpoch == milliseconds)
        #expect(stamp.offsetMinutes == offset)
    }

    @Test("rejects anything else", arguments: [
        "", "2026-08-21", "2026-08-21T10:25:30Z", "2026-08-21T10:25:30.00Z", "2026-08-21T10:25:30.0000Z",
        "2026-08-21t10:25:30.000Z", "2026-08-21T10:25:30.000z", "2026-08-21T10:25:30.000+0200", "2026-08-21T10:25:30.000+02",
        "2026-08-21T10:25:30,000Z", "2026/08/21T10:25:30.000Z", "2026-00-21T10:25:30.000Z", "2026-13-21T10:25:30.000Z",
        "2026-08-00T10:25:30.000Z", "2026-08-32T10:25:30.000Z", "2026-04-31T10:25:30.000Z", "2026-02-29T10:25:30.000Z",
        "1900-02-29T10:25:30.000Z", "2026-08-21T24:00:00.000Z", "2026-08-21T10:60:30.000Z", "2026-08-21T10:25:60.000Z",
        "2026-08-21T10:25:30.000+16:00", "2026-08-21T10:25:30.000+02:60", "0000-01-01T00:00:00.000Z",
        "+2026-08-21T10:25:30.000Z", "2026-08-21T10:25:30.000 02:00", "２026-08-21T10:25:30.000Z", "2026-08-21T10:25:3a.000Z",
    ])
    func rejects(text: String) {
        #expect(Timestamp(text) == nil)
    }

    @Test("leap years follow the Gregorian rule")
    func leapYears() {
        #expect(Timestamp("2000-02-29T00:00:00.000Z") != nil)
        #expect(Timestamp("2024-02-29T00:00:00.000Z") != nil)
        #expect(Timestamp("2100-02-29T00:00:00.000Z") == nil)
        #expect(Timestamp("2023-02-29T00:00:00.000Z") == nil)
    }

    @Test("agrees with Foundation's calendar on random instants (seeded)")
    func agreesWithFoundation() throws {
        var rng = SeededGenerator(seed: 8601)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        for _ in 0..<2000 {
            let year = Int.random(in: 1971...2200, using: &rng)
            let month = Int.random(in: 1...12, using: &rng)
            let day = Int.random(in: 1...CivilDate.daysInMonth(year: year, month: month), using: &rng)
            let (h, mi, s, ms) = (Int.random(in: 0...23, using: &rng), Int.random(in: 0...59, using: &rng), Int.random(in: 0...59, using: &rng), Int.random(in: 0...999, using: &rng))
            let offset = Int.random(in: -15 * 60...15 * 60, using: &rng)
            let sign = offset < 0 ? "-" : "+"
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d%@%02d:%02d", year, month, day, h, mi, s, ms, sign, abs(offset) / 60, abs(offset) % 60)
            let stamp = try #require(Timestamp(text), "\(text)")
            let components = DateComponents(year: year, month: month, day: day, hour: h, minute: mi, second: s)
            let local = try #require(calendar.date(from: components))
            let expected = Int64(local.timeIntervalSince1970) * 1000 + Int64(ms) - Int64(offset) * 60_000
            #expect(stamp.millisecondsSinceEpoch == expected, "\(text)")
            #expect(stamp.offsetMinutes == offset)
        }
    }

    @Test("the same instant under two offsets has equal milliseconds")
    func sameInstant() throws {
        let a = try #require(Timestamp("2026-08-21T10:25:30.000+02:00"))
        let b = try #require(Timestamp("2026-08-21T08:25:30.000Z"))
        #expect(a.millisecondsSinceEpoch == b.millisecondsSinceEpoch)
        #expect(a != b)
        #expect(a.millisecondsSinceEpoch == 1_787_300_730_000)
    }

    @Test("parses from UTF-8 bytes without a String")
    func fromBytes() {
        let bytes = Array("2026-08-21T08:25:30.000Z".utf8)
        let stamp = bytes.withUnsafeBufferPointer { Timestamp(utf8: $0) }
        #expect(stamp?.millisecondsSinceEpoch == 1_787_300_730_000)
    }
}

@Suite("JSON string escaping")
struct JSONStringTests {
    @Test("escapes quotes, backslashes and control characters only", arguments: [
        ("plain", "\"plain\""), ("a\"b", #""a\"b""#), ("a\\b", #""a\\b""#), ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#),
        ("\u{1}\u{1F}", #""\u0001\u001f""#), ("é/😀\u{7F}", "\"é/😀\u{7F}\""), ("", "\"\""),
    ])
    func escapes(text: String, expected: String) {
        #expect(JSONString.quoted(text) == expected)
        var bytes: [UInt8] = []
        JSONString.append(quoting: text, to: &bytes)
        #expect(bytes == Array(expected.utf8))
    }

    @Test("random text round-trips through Foundation's JSON parser (seeded)")
    func roundTrip() throws {
        var rng = SeededGenerator(seed: 8259)
        for _ in 0..<2000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...20, using: &rng) {
                let pick = Int.random(in: 0...3, using: &rng)
                let scalar: UInt32 = switch pick {
                case 0: UInt32.random(in: 1...0x7F, using: &rng)
                case 1: UInt32.random(in: 0x80...0xD7FF, using: &rng)
                case 2: UInt32.random(in: 0xE000...0xFFFD, using: &rng)
                default: UInt32.random(in: 0x10000...0x10FFFF, using: &rng)
                }
                text.unicodeScalars.append(Unicode.Scalar(scalar)!)
            }
            let json = "[" + JSONString.quoted(text) + "]"
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String]
            #expect(parsed == [text])
        }
    }
}
