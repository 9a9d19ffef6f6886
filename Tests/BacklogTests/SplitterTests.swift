@testable import Backlog
import Foundation
import HealthPayload
import Testing

@Suite("Cutting files into bodies")
struct SplitterTests {
    /// Feeds `bytes` in chunks of `chunk` bytes and collects the units.
    static func split(_ splitter: inout some BodySplitter, _ bytes: [UInt8], chunk: Int) -> [BodyUnit] {
        var units: [BodyUnit] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            bytes[offset..<end].withUnsafeBytes { splitter.feed($0) { units.append($0) } }
            offset = end
        }
        splitter.finish { units.append($0) }
        return units
    }

    static let header = "schemaVersion,exportId,uuid\n"

    @Test("CSV: bodies start at header rows; records and lines counted as the decoder counts them, whatever the chunking", arguments: [1, 3, 7, 4096])
    func csvSegments(chunk: Int) {
        // Body 1: a quoted field holding CRLF and a doubled quote; body 2 after a CRLF-terminated row; a blank line.
        let text = Self.header + "1,\"a\r\nb\"\"c\",x\r\n" + "1,e,y\n" + "\n" + Self.header + "1,f,z\r" + "1,g,w\n"
        var splitter = CSVBodySplitter(from: .start, mayGrow: true)
        let units = Self.split(&splitter, Array(text.utf8), chunk: chunk)
        let segments = units.flatMap { unit in unit.segments.map { (unit, $0) } }
        #expect(segments.count == 2)
        #expect(units.count == 1, "same header: one unit")
        #expect(segments[0].1.start == StreamPosition(offset: 0, line: 1, records: 0))
        let secondStart = Int64(text.utf8.count - (Self.header + "1,f,z\r1,g,w\n").utf8.count)
        // Records: header, the quoted row (2 lines), the plain row, the blank line: 4 records over 5 lines.
        #expect(segments[0].1.end == StreamPosition(offset: secondStart, line: 6, records: 4))
        #expect(segments[1].1.start == segments[0].1.end)
        #expect(segments[1].1.end == StreamPosition(offset: Int64(text.utf8.count), line: 9, records: 7))
        #expect(segments.allSatisfy { $0.1.unfinished == nil })
        let second = segments[1]
        #expect(String(decoding: second.0.bytes[second.1.range], as: UTF8.self) == Self.header + "1,f,z\r1,g,w\n")
    }

    @Test("CSV: a different header starts another unit; an unterminated last record is named, not decoded")
    func csvHeadersAndUnfinished() {
        let text = Self.header + "1,a,b\n" + "schemaVersion,exportId,uuid,extra\n" + "1,a,b,c\n" + "1,\"open"
        var splitter = CSVBodySplitter(from: .start, mayGrow: true)
        let units = Self.split(&splitter, Array(text.utf8), chunk: 5)
        #expect(units.count == 2)
        #expect(units[1].segments.last?.unfinished?.message.hasPrefix("record 5 (line 5): unterminated quoted field") == true)
        var gz = CSVBodySplitter(from: .start, mayGrow: false)
        #expect(Self.split(&gz, Array(text.utf8), chunk: 5).last?.segments.last?.unfinished == nil, "a .gz file is complete: decode it")
    }

    @Test("CSV: a record over 16 MiB (a quoted field that never closes) stops the file, named, instead of filling memory")
    func csvRecordTooLong() {
        var text = Array((Self.header + "1,a,b\n1,\"").utf8)
        text += [UInt8](repeating: UInt8(ascii: "x"), count: BodyLimits.maxRecordBytes + 1)
        var splitter = CSVBodySplitter(from: .start, mayGrow: false)
        let units = Self.split(&splitter, text, chunk: 1 << 20)
        #expect(splitter.failure == "record 3 (line 3) is longer than 16 MiB: not a healthd row (a quoted field that never closes?)")
        #expect(units.flatMap(\.segments).isEmpty, "nothing of the failed body is handed on")
    }

    @Test("CSV: resuming at a ledger position continues its numbering")
    func csvResume() {
        var splitter = CSVBodySplitter(from: StreamPosition(offset: 100, line: 11, records: 9), mayGrow: true)
        let units = Self.split(&splitter, Array((Self.header + "1,a,b\n").utf8), chunk: 4)
        #expect(units.first?.segments.first?.start == StreamPosition(offset: 100, line: 11, records: 9))
        #expect(units.first?.segments.first?.end == StreamPosition(offset: 100 + Int64(Self.header.utf8.count) + 6, line: 13, records: 11))
    }

    @Test("the decoder's record and line become the file's")
    func relocate() {
        let at = StreamPosition(offset: 500, line: 20, records: 10).payloadStart
        let unterminated = PayloadError("unterminated quoted field", problem: .invalidCSV, at: PayloadLocation(record: 2, line: 3, byteOffset: 40))
        #expect(unterminated.shifted(by: at, format: .csv).message == "record 12 (line 22): unterminated quoted field")
        #expect(unterminated.shifted(by: at, format: .csv).location == PayloadLocation(record: 12, line: 22, byteOffset: 540))
        #expect(PayloadError("something else").shifted(by: at, format: .csv).message == "body starting at record 11 (line 20): something else")
        // A JSON line: the file's line, and a syntax error's byte in the file.
        let line3 = StreamPosition(offset: 30, line: 3, records: 0).payloadStart
        #expect(PayloadError("schemaVersion is 2; only 1 is accepted").shifted(by: line3, format: .json).message
                == "line 3: schemaVersion is 2; only 1 is accepted")
        let syntax = PayloadError("unexpected value; expected a value", problem: .invalidJSON, at: PayloadLocation(line: 1, column: 6, byteOffset: 5))
        #expect(syntax.shifted(by: line3, format: .json).message == "not valid JSON at byte 35 (line 3, column 6): unexpected value; expected a value")
    }

    @Test("JSON lines: one segment a line, blank lines blank, an unterminated last line kept", arguments: [1, 2, 64])
    func jsonLines(chunk: Int) {
        let text = "{\"a\":1}\r\n  \n{\"b\":2}\n{\"c\":3}"
        var splitter = JSONLinesSplitter(from: .start)
        let segments = Self.split(&splitter, Array(text.utf8), chunk: chunk).flatMap { unit in unit.segments.map { String(decoding: unit.bytes[$0.body], as: UTF8.self) } }
        #expect(segments == ["{\"a\":1}", "  ", "{\"b\":2}", "{\"c\":3}"])
        var again = JSONLinesSplitter(from: .start)
        let flags = Self.split(&again, Array(text.utf8), chunk: chunk).flatMap { $0.segments.map { ($0.isBlank, $0.start.line) } }
        #expect(flags.map(\.0) == [false, true, false, false])
        #expect(flags.map(\.1) == [1, 2, 3, 4])
    }

    @Test("standard input: { starts JSON (one body a line when the first line is a whole object), anything else is CSV")
    func sniff() {
        #expect(FormatSniffer.sniff(Array("{\"a\":1}\n{\"b\":2}\n".utf8)) == .jsonLines)
        #expect(FormatSniffer.sniff(Array("{\n  \"a\": 1\n}\n".utf8)) == .json)
        #expect(FormatSniffer.sniff(Array("  {\"a\":1}".utf8)) == .json)
        #expect(FormatSniffer.sniff(Array("schemaVersion,uuid\n".utf8)) == .csv)
    }

    @Test("folders are walked depth first in name order; hidden and unknown names skipped; a file named twice is read once")
    func walk() throws {
        let folder = try TempFolder()
        defer { folder.remove() }
        for name in ["b.csv", "a/z.json", "a/y.ndjson.gz", "B.jsonl", ".git/x.json", "c.txt", "a.json", "a/.x.json"] {
            try folder.write(name, Array("x".utf8))
        }
        let (files, failures) = BacklogWalker.walk([folder.path, folder.path + "/b.csv"], format: nil)
        #expect(failures.isEmpty)
        #expect(files.map { String($0.displayPath.dropFirst(folder.path.count + 1)) } == ["B.jsonl", "a/y.ndjson.gz", "a/z.json", "a.json", "b.csv"])
        #expect(files.map(\.format) == [.jsonLines, .jsonLines, .json, .json, .csv])
        #expect(files.map(\.compressed) == [false, true, false, false, false])
        #expect(files[0].absolutePath == real(folder.path + "/B.jsonl"))
    }
}
