@testable import AppleExport
import DemoData
import Foundation
import HealthPayload
import Testing

/// The reader's bounds, without a database: no token libxml2 sees is longer than
/// `XMLInputFilter.tokenLimit`, what is longer is skipped and named with its line, and a
/// route file is one file however a workout spells its name.
@Suite("The export reader's bounds")
struct BoundsTests {
    static let limit = XMLInputFilter.tokenLimit

    /// A Record whose start tag, from `<` to `>`, is `bytes` long, its `note` padded with `filler`.
    static func record(startTagBytes bytes: Int, filler: String = "x") -> String {
        let bare = ReaderTests.record("5", line: 5, extra: " note=\"\"")
        let pad = bytes - (bare.utf8.count - 1)
        let unit = filler.utf8.count
        return ReaderTests.record("5", line: 5, extra: " note=\"" + String(repeating: filler, count: pad / unit) + String(repeating: "x", count: pad % unit) + "\"")
    }

    @Test("a start tag of exactly the limit is read; one byte more and its Record is skipped and named with its line, the records around it read",
          arguments: [4096, 1 << 16, (1 << 20) + 3])
    func startTagAtTheLimit(chunk: Int) {
        let longest = ReaderTests.summary(ReaderTests.items(ReaderTests.document([ReaderTests.record("1"), Self.record(startTagBytes: Self.limit),
                                                                                   ReaderTests.record("2", line: 2)]), chunk: chunk))
        #expect(longest.records == [3, 4, 5])
        #expect(longest.skipped.isEmpty, "\(longest.skipped)")
        let over = ReaderTests.summary(ReaderTests.items(ReaderTests.document([ReaderTests.record("1"), Self.record(startTagBytes: Self.limit + 1),
                                                                                ReaderTests.record("2", line: 2)]), chunk: chunk))
        #expect(over.records == [3, 5])
        #expect(over.skipped == ["line 4: Record skipped: <Record> has a start tag of \(Self.limit + 1) bytes; at most \(Self.limit) are read"])
    }

    @Test("line breaks inside what is left out still count: the record after a start tag of 1,000 lines is named by its own line")
    func linesKept() {
        let huge = Self.record(startTagBytes: Self.limit + 10_000, filler: String(repeating: "y", count: 1100) + "\n")
        let newlines = huge.filter { $0 == "\n" }.count
        #expect(newlines > 900)
        let items = ReaderTests.items(ReaderTests.document([ReaderTests.record("1"), huge, ReaderTests.record("2", line: 2)]), chunk: 1 << 16)
        let (records, skipped) = ReaderTests.summary(items)
        #expect(records == [3, 5 + newlines])
        #expect(skipped.count == 1 && skipped[0].hasPrefix("line 4: Record skipped: <Record> has a start tag of"), "\(skipped)")
    }

    @Test("a comment, a text, a processing instruction, a CDATA section, and a child's attribute over the limit are named with their line; the records around them are read",
          arguments: [
            (" <!--%-->", "line 4: content skipped: a comment of"),
            (" %", "line 4: content skipped: a text of"),
            (" <?note %?>", "line 4: content skipped: a processing instruction of"),
            (" <![CDATA[%]]>", "line 4: content skipped: a CDATA section of"),
            (" <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\" unit=\"count\" startDate=\"2024-03-10 09:00:00 +0100\" endDate=\"2024-03-10 09:00:00 +0100\" value=\"3\">\n  <MetadataEntry key=\"k\" value=\"%\"/>\n </Record>",
             "line 4: Record skipped: <MetadataEntry> has a start tag of"),
          ])
    func oversizedTokens(template: String, named: String) {
        let huge = template.replacingOccurrences(of: "%", with: String(repeating: "a", count: Self.limit + 5))
        let lines = huge.filter { $0 == "\n" }.count
        for chunk in [7, 1 << 16] {
            let (records, skipped) = ReaderTests.summary(ReaderTests.items(ReaderTests.document([ReaderTests.record("1"), huge, ReaderTests.record("2", line: 2)]),
                                                                         chunk: chunk))
            #expect(records == [3, 5 + lines], "chunk \(chunk)")
            #expect(skipped.count == 1 && skipped[0].hasPrefix(named) && skipped[0].contains("at most \(Self.limit) are read"), "chunk \(chunk): \(skipped)")
        }
    }

    @Test("a DTD of any length is left out: the records after it are read with their lines")
    func longDoctype() {
        let doctype = "<!DOCTYPE HealthData [\n" + String(repeating: "<!ATTLIST Record note CDATA #IMPLIED>\n", count: 60_000) + "]>"
        let (records, skipped) = ReaderTests.summary(ReaderTests.items(ReaderTests.document([ReaderTests.record("1")], doctype: doctype), chunk: 1 << 16))
        #expect(skipped.isEmpty, "\(skipped)")
        #expect(records == [60_005])
    }

    @Test("a GPX field over 256 bytes, an <ele> over the limit, or more points than the workout may have skip the route file, named")
    func gpxBounds() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func read(_ ele: String, points: Int = 1, maxPoints: Int = 10) throws -> Result<WorkoutRoute, MappingFailure> {
            let trkpt = "<trkpt lat=\"52.5\" lon=\"13.4\"><ele>%</ele><time>2024-03-10T08:00:00Z</time></trkpt>\n"
            let gpx = "<gpx><trk><trkseg>\n" + String(repeating: trkpt.replacingOccurrences(of: "%", with: ele), count: points) + "</trkseg></trk></gpx>\n"
            let path = folder.appendingPathComponent("route.gpx").path
            try Data(gpx.utf8).write(to: URL(fileURLWithPath: path))
            return try GPXReader.read(FileStream(path: path), name: "route.gpx", maxPoints: maxPoints)
        }
        #expect(try read(String(repeating: "1", count: 256)).map(\.count).get() == 1)
        for ele in [String(repeating: "1", count: 257), String(repeating: "1", count: Self.limit + 1)] {
            guard case .failure(let f) = try read(ele) else { Issue.record("read a field of \(ele.count) bytes"); continue }
            #expect(f.reason == "line 2: a field of more than 256 bytes")
        }
        #expect(try read("40", points: 10).map(\.count).get() == 10)
        guard case .failure(let f) = try read("40", points: 11) else { Issue.record("read 11 points"); return }
        #expect(f.reason == "more than 10 route points for one workout")
    }

    @Test("a route file is one file however a FileReference spells it: /./, //, .., letter case; a path above the export is outside it")
    func routeSpellings() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("export.zip").path
        let zip = try ZipWriter(path: archive, modified: 1_710_230_400)
        for entry in HostileExport.entries(.routeSpellings, hugeBytes: 0) { try zip.add(entry.name, entry.next) }
        try zip.close()
        let source = try ExportSource(path: archive)
        let located = Set(HostileExport.routeReferences.map(source.locate))
        #expect(HostileExport.routeReferences.count == 100 && Set(HostileExport.routeReferences).count == 100)
        #expect(located.count == 1)
        #expect(located.first.map { if case .entry = $0 { true } else { false } } == true)
        #expect(source.locate("/../workout-routes/route_1.gpx") == .outside)
        #expect(source.locate("/workout-routes/none.gpx") == .missing)
    }
}
