@testable import AppleExport
import Foundation
import Hashing
import HealthPayload
import Testing

/// The reading side alone, no database: libxml2's events, the repairs made to the bytes, the
/// timestamp and number shapes, the mapping's refusals.
@Suite("Reading an export")
struct ReaderTests {
    /// Items of a document fed in chunks of `chunk` bytes.
    static func items(_ xml: String, chunk: Int = 1 << 16) -> [ExportItem] {
        var items: [ExportItem] = []
        let reader = ExportDocumentReader { items.append($0) }
        let parser = XMLStreamParser(handler: reader, restartRoot: "HealthData")
        let bytes = Array(xml.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { parser.feed($0) }
        }
        parser.finish()
        reader.documentEnded(atLine: parser.inputLines)
        return items
    }

    static func summary(_ items: [ExportItem]) -> (records: [Int], skipped: [String]) {
        var records: [Int] = [], skipped: [String] = []
        for item in items {
            switch item {
            case .record(let r): records.append(r.line)
            case .skipped(let s): skipped.append(s.description)
            default: break
            }
        }
        return (records, skipped)
    }

    static func record(_ value: String, line: Int = 0, extra: String = "") -> String {
        " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\"\(extra) unit=\"count\" startDate=\"2024-03-10 08:00:0\(line % 10) +0100\" endDate=\"2024-03-10 08:01:00 +0100\" value=\"\(value)\"/>"
    }

    static func document(_ lines: [String], doctype: String = "") -> String {
        (["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"] + (doctype.isEmpty ? [] : [doctype]) + ["<HealthData locale=\"en_US\">"]
            + lines + ["</HealthData>", ""]).joined(separator: "\n")
    }

    @Test("UUIDv5 is RFC 9562's: the DNS namespace and www.example.com give 2ed6657d-e927-568b-95e1-2665a8aea6a2")
    func uuidVersion5() {
        let dns = UUIDv5.bytes("6ba7b810-9dad-11d1-80b4-00c04fd430c8")!
        #expect(UUIDv5.make(namespace: dns, name: Array("www.example.com".utf8)) == "2ED6657D-E927-568B-95E1-2665A8AEA6A2")
    }

    @Test("timestamps in every shape the exports and GPX files write become the reference's shape", arguments: [
        ("2019-06-11 15:00:00 +0100", "2019-06-11T15:00:00.000+01:00"),
        ("20150915113529+0200", "2015-09-15T11:35:29.000+02:00"),
        ("2016-11-14 07:25:41 -0700", "2016-11-14T07:25:41.000-07:00"),
        ("2019-06-11T22:00:42Z", "2019-06-11T22:00:42.000Z"),
        ("2019-06-11T22:00:42.5Z", "2019-06-11T22:00:42.500Z"),
        ("2019-06-11T22:00:42.123456+05:30", "2019-06-11T22:00:42.123+05:30"),
    ])
    func timestamps(written: String, shaped: String) {
        #expect(ExportTimestamp(written)?.text == shaped)
        #expect(Timestamp(shaped) != nil)
    }

    @Test("what is not a real instant is refused", arguments: ["2019-02-30 10:00:00 +0100", "2019-06-11 25:00:00 +0100", "2019-06-11 15:00:00",
                                                               "yesterday", "2019-06-11 15:00:00 +01", ""])
    func badTimestamps(written: String) {
        #expect(ExportTimestamp(written) == nil)
    }

    @Test("a creation date is held as seconds after the end only when they write its text back in the end's offset")
    func creationDates() throws {
        let end = try #require(ExportTimestamp("2016-03-02 10:00:00 +0100"))
        let cases: [(String, Int?)] = [
            ("2016-03-02 10:00:05 +0100", 5), ("2016-02-29 10:00:00 +0100", -172_800), ("2016-03-02 10:00:00 +0100", 0),
            ("2016-03-02 08:00:05 -0100", nil),  // the same kind of text in another offset than the end's
            ("2016-03-02 09:00:05 +0000", nil), ("2015-02-29 10:00:00 +0100", nil), ("2016-02-30 10:00:00 +0100", nil),
            ("2016-13-02 10:00:05 +0100", nil), ("2016-03-02 1O:00:05 +0100", nil), ("2016-03-02 10:00:05 +0100 ", nil),
            ("20160302100005+0100", nil),  // iOS 8's layout: kept as written
            ("2016-03-02T10:00:05Z", nil), ("1950-03-02 10:00:05 +0100", nil),  // beyond 20,000 days
            ("0000-00-00 99:99:99 +9999", nil), ("", nil),
        ]
        for (written, seconds) in cases {
            #expect(ExportMapper.createdSeconds(written, end: end) == seconds, "\(written)")
        }
        #expect(ExportMapper.createdSeconds(nil, end: end) == nil)
        let offEnd = try #require(ExportTimestamp("2019-06-11T22:00:42.5Z"))
        #expect(ExportMapper.createdSeconds("2019-06-11 22:00:45 +0000", end: offEnd) == nil, "an end with a fraction of a second")
        #expect(String(decoding: ExportTimestamp.exportText(milliseconds: end.milliseconds + 5_000, offsetMinutes: -90), as: UTF8.self)
                == "2016-03-02 07:30:05 -0130")
    }

    @Test("a record's shared members are sent apart under the number of their text; its block keeps the rest")
    func sharedMembers() throws {
        func mapped(_ metadata: [(key: String, value: String)], creation: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(GivenBackTests.mapped(metadata, creation: creation))) as? [String: Any])
        }
        let shared = try mapped([("HKMetadataKeyHeartRateMotionContext", "1")], creation: "2024-03-10 08:05:00 +0100")
        let members = #"{"sourceVersion":"10.3","device":"<<HKDevice: 0x1>>","unit":"count/min","metadata":{"HKMetadataKeyHeartRateMotionContext":"1"}}"#
        #expect(shared["exportContext"] as? Int == SHA256.hash(Array(members.utf8)).prefix(8).reduce(0) { $0 << 8 | Int($1) })
        #expect(NSDictionary(dictionary: shared["exportShared"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: [
            "sourceVersion": "10.3", "device": "<<HKDevice: 0x1>>", "unit": "count/min", "metadata": ["HKMetadataKeyHeartRateMotionContext": "1"]]))
        #expect(shared["exportCreated"] as? Int == 60)
        #expect(NSDictionary(dictionary: shared["healthExport"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: ["value": "72"]))
        // Metadata with a key of its own stays in the block; a creation date in another offset too.
        let own = try mapped([("HKMetadataKeyHeartRateMotionContext", "1"), ("HKExternalUUID", "A1")], creation: "2024-03-10 07:05:00 +0000")
        #expect(NSDictionary(dictionary: own["exportShared"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: [
            "sourceVersion": "10.3", "device": "<<HKDevice: 0x1>>", "unit": "count/min"]))
        #expect(own["exportCreated"] == nil)
        #expect(NSDictionary(dictionary: own["healthExport"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: [
            "value": "72", "creationDate": "2024-03-10 07:05:00 +0000",
            "metadata": ["HKMetadataKeyHeartRateMotionContext": "1", "HKExternalUUID": "A1"]]))
        #expect(own["exportContext"] as? Int != shared["exportContext"] as? Int)
    }

    @Test("numbers: plain decimals and exponents, a locale's decimal comma; never inf, nan or hexadecimal")
    func numbers() {
        #expect(ExportNumber.parse("72") == 72)
        #expect(ExportNumber.parse("-0.4971749504535062") == -0.4971749504535062)
        #expect(ExportNumber.parse("1e3") == 1000)
        #expect(ExportNumber.parse("1,75") == 1.75)
        for bad in ["inf", "nan", "0x10", "", "1.2.3", "1e", "1 000", "1e999"] { #expect(ExportNumber.parse(bad) == nil, "\(bad)") }
        #expect(ExportNumber.secondsOfDay("7:47:41.86 PM") == 71_261.86)
        #expect(ExportNumber.secondsOfDay("12:00:01.00 AM") == 1)
        #expect(ExportNumber.secondsOfDay("00:20:37,80") == 1237.8)
        #expect(ExportNumber.secondsOfDay("25:00:00") == nil)
    }

    @Test("units become the catalog's: km, mi, cm, lb, °F, kJ, Cal, count/s, %; an unknown one is refused")
    func units() {
        func convert(_ v: Double, _ from: String, _ to: String) -> Double? { CatalogUnits.conversion(from: from, to: to)?.apply(v) }
        #expect(convert(5.2, "km", "m") == 5200)
        #expect(convert(1, "mi", "m") == 1609.344)
        #expect(convert(150, "lb", "kg")! - 68.0388555 < 1e-12)
        #expect(abs(convert(98.6, "degF", "degC")! - 37) < 1e-12)
        #expect(abs(convert(418.4, "kJ", "kcal")! - 100) < 1e-12)
        #expect(convert(35.5, "Cal", "kcal") == 35.5)
        #expect(convert(1.2, "count/s", "count/min") == 72)
        #expect(convert(0.97, "%", "fraction") == 0.97)
        #expect(convert(1, "furlong", "m") == nil)
        #expect(convert(3, "", "count") == 3, "no unit written: the catalog's")
    }

    @Test("a broken DTD (iOS 16's unclosed ATTLIST, a stray '>') is blanked, line numbers kept, at any chunk boundary", arguments: [1, 7, 4096])
    func brokenDoctype(chunk: Int) {
        let unclosed = "<!DOCTYPE HealthData [\n<!ATTLIST Attachment\n  identifier CDATA #IMPLIED\n\n\n]>"
        let stray = "<!DOCTYPE HealthData [\n<!ATTLIST Attachment\n  identifier CDATA #IMPLIED\n>\n>\n]>"
        for doctype in [unclosed, stray] {
            let (records, skipped) = Self.summary(Self.items(Self.document([Self.record("1"), Self.record("2", line: 1)], doctype: doctype), chunk: chunk))
            #expect(skipped.isEmpty, "\(skipped)")
            #expect(records == [9, 10], "lines as in the file")
        }
    }

    @Test("an entity of the DTD never reads a file: the DTD is blanked, the reference is unreadable, its record skipped and named")
    func externalEntity() {
        let doctype = "<!DOCTYPE HealthData [\n<!ENTITY secret SYSTEM \"file:///etc/passwd\">\n]>"
        let items = Self.items(Self.document([Self.record("1", extra: " note=\"&secret;\""), Self.record("2", line: 1)], doctype: doctype))
        let (records, skipped) = Self.summary(items)
        #expect(records == [7])
        #expect(skipped.first?.hasPrefix("line 6: Record skipped: Entity 'secret' not defined") == true, "\(skipped)")
        for case .record(let r) in items { #expect(r.attributes.pairs.allSatisfy { !$0.value.contains("root:") }) }
    }

    @Test("a control character XML forbids (\\u{0B}) is read as a space, and its record kept")
    func controlCharacter() {
        let items = Self.items(Self.document([Self.record("1", extra: " device=\"iPhone\u{0B}X\"")]))
        guard case .record(let r) = items.first else { Issue.record("\(items)"); return }
        #expect(r.attributes["device"] == "iPhone X")
    }

    /// Each broken line, and how it is named: by the line where libxml2 found it unreadable
    /// (for a tag without its `>`, the next line, where it met the next `<`).
    @Test("elements that cannot be read are skipped and named with their line; the records around them are read", arguments: [
        (Self.record("2", line: 1, extra: " Withings User Identifier=\"1\""), "line 4: Record skipped: Specification mandates value for attribute Withings"),
        (Self.record("2", line: 1, extra: " sourceVersion=1.0"), "line 4: Record skipped: AttValue: \" or ' expected"),
        (Self.record("2", line: 1, extra: " note=\"a < b\""), "line 4: Record skipped: Unescaped '<' not allowed in attributes values"),
        (Self.record("2", line: 1, extra: " note=\"a & b\""), "line 4: Record skipped: xmlParseEntityRef: no name"),
        (Self.record("2", line: 1).replacingOccurrences(of: "/>", with: ""), "line 5: Record skipped: error parsing attribute name"),
    ])
    func brokenElements(line: String, named: String) {
        let (records, skipped) = Self.summary(Self.items(Self.document([Self.record("1"), line, Self.record("3", line: 2), Self.record("4", line: 3)])))
        #expect(records == [3, 5, 6])
        #expect(skipped.first?.hasPrefix(named) == true, "\(skipped)")
        #expect(skipped.count == 1, "\(skipped)")
    }

    /// A record or workout whose child cannot be read: libxml2 ends only the child at the
    /// parent's end tag, and read every element after it as the parent's child (an audit's
    /// export lost its 480 records after one such line, unnamed).
    @Test("a record or workout with a child that cannot be read is skipped and named; everything after it is read", arguments: [
        ("  <MetadataEntry key=\"a\" value=\"1\" Withings User=\"2\"/>", "Specification mandates value for attribute Withings (its MetadataEntry) at line 5"),
        ("  <MetadataEntry key=\"a\" value=1/>", "AttValue: \" or ' expected (its MetadataEntry) at line 5"),
        ("  <MetadataEntry key=\"a\" value=\"1<2\"/>", "Unescaped '<' not allowed in attributes values"),
        ("  <MetadataEntry key=\"a\" value=\"b\">", "Opening and ending tag mismatch: MetadataEntry line 5 and Record at line 6"),
    ], [1 << 16, 1, 7])
    func brokenChildren(broken: (child: String, named: String), chunk: Int) {
        let (child, named) = broken
        let open = Self.record("2", line: 1).replacingOccurrences(of: "/>", with: ">")
        let lines = [Self.record("1"), open, child, " </Record>", Self.record("3", line: 2), Self.record("4", line: 3)]
        let (records, skipped) = Self.summary(Self.items(Self.document(lines), chunk: chunk))
        #expect(records == [3, 7, 8])
        #expect(skipped == ["line 4: Record skipped: " + named])
        let workout = " <Workout workoutActivityType=\"HKWorkoutActivityTypeRunning\" duration=\"30\" durationUnit=\"min\" sourceName=\"Watch\""
            + " startDate=\"2024-03-10 07:00:00 +0100\" endDate=\"2024-03-10 07:30:00 +0100\">"
        let inWorkout = [Self.record("1"), workout, child, " </Workout>", Self.record("3", line: 2), Self.record("4", line: 3)]
        let (afterWorkout, skippedWorkout) = Self.summary(Self.items(Self.document(inWorkout), chunk: chunk))
        #expect(afterWorkout == [3, 7, 8])
        #expect(skippedWorkout == ["line 4: Workout skipped: " + named.replacingOccurrences(of: "and Record", with: "and Workout")])
    }

    @Test("a document cut off inside a record names it; a document that is not an export says so; text that is not XML too")
    func notWhole() {
        let cut = Self.document([Self.record("1"), " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Phone\">", "  <MetadataEntry key=\"a\" value=\"b\"/>"])
            .replacingOccurrences(of: "</HealthData>\n", with: "")
        let (records, skipped) = Self.summary(Self.items(cut))
        #expect(records == [3])
        #expect(skipped.last?.hasPrefix("line 4: Record skipped: the document ends inside it") == true, "\(skipped)")
        let cda = Self.summary(Self.items("<?xml version=\"1.0\"?>\n<ClinicalDocument><component/></ClinicalDocument>\n"))
        #expect(cda.skipped == ["line 2: ClinicalDocument skipped: the document's root element is <ClinicalDocument>, not <HealthData>: this is not the Health app's export.xml"])
        let csv = Self.summary(Self.items("Name,Date of Birth\nAnna,1990-01-01\n"))
        #expect(csv.records.isEmpty)
        #expect(csv.skipped == ["line 1: document skipped: Document is empty"])
    }

    @Test("a record the mapping cannot use is refused with the reason, a bound or not: no start, an unconvertible unit, a value that is no number, a unit over 1,024 bytes before any conversion, no value")
    func refusals() {
        let catalog = ExportCatalog(entries: ["HKQuantityTypeIdentifierStepCount": .init(group: "activity", kind: "quantity", unit: "count", rule: "total"),
                                              "HKCategoryTypeIdentifierSleepAnalysis": .init(group: "sleep", kind: "category", unit: nil, rule: "sleep")])
        let mapper = ExportMapper(catalog: catalog)
        func reason(_ pairs: [(String, String)]) -> String? {
            guard case .failure(let f) = mapper.record(ExportRecord(attributes: ElementAttributes(pairs: pairs.map { ($0.0, $0.1) }), line: 1)) else { return nil }
            return f.reason + (f.isBound ? " (bound)" : "")
        }
        let base = [("type", "HKQuantityTypeIdentifierStepCount"), ("sourceName", "Phone"), ("startDate", "2024-03-10 08:00:00 +0100"),
                    ("endDate", "2024-03-10 08:01:00 +0100")]
        #expect(reason(base + [("value", "12"), ("unit", "count")]) == nil)
        #expect(reason(Array(base.dropLast(2)) + [("endDate", "2024-03-10 08:01:00 +0100")]) == "it has no startDate")
        #expect(reason(base + [("value", "12"), ("unit", "furlong")]) == "unit \"furlong\" of HKQuantityTypeIdentifierStepCount cannot be converted to count")
        #expect(reason(base + [("value", "many")]) == "value \"many\" is not a number")
        #expect(reason(base + [("value", "1e16")])?.contains("beyond ±1e15") == true)
        #expect(reason(base + [("value", "12"), ("unit", String(repeating: "u", count: 1025))]) == "unit is 1025 bytes, at most 1024 (bound)")
        #expect(reason(base + [("unit", "count")]) == "value is missing (kind quantity)")
        #expect(reason([("type", "HKCategoryTypeIdentifierSleepAnalysis")] + base.dropFirst()) == "value is missing (kind category)")
        // The Health app writes no value where none applies (a mindful session): kept.
        #expect(reason([("type", "HKCategoryTypeIdentifierMindfulSession")] + base.dropFirst()) == nil)
    }
}
