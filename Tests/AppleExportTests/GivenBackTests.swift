@testable import AppleExport
import Foundation
import HealthPayload
import Testing

/// `person import`'s way back to the storage of `import-apple-health`: a record as `person export`
/// gives it back (its `healthExport` block whole) made again into what the mapping writes
/// (`ExportMapper.sharedApart`), without a database.
@Suite("A record given back by person export")
struct GivenBackTests {
    static let mapper = ExportMapper(catalog: ExportCatalog(entries: [
        "HKQuantityTypeIdentifierHeartRate": .init(group: "heart", kind: "quantity", unit: "count/min", rule: "mean")]))

    /// What the mapping writes of a heart rate record with these metadata and creation date (a
    /// watch's, with its device, version and unit: ReaderTests' shared members too).
    static func mapped(_ metadata: [(key: String, value: String)], creation: String) throws -> [UInt8] {
        var record = ExportRecord(attributes: ElementAttributes(pairs: [
            ("type", "HKQuantityTypeIdentifierHeartRate"), ("sourceName", "Watch"), ("sourceVersion", "10.3"),
            ("device", "<<HKDevice: 0x1>>"), ("unit", "count/min"), ("creationDate", creation),
            ("startDate", "2024-03-10 08:04:00 +0100"), ("endDate", "2024-03-10 08:04:00 +0100"), ("value", "72")]), line: 1)
        record.metadata = metadata
        guard case .success(let sample) = mapper.record(record) else { throw MappingFailure("not mapped") }
        return sample.json
    }

    static func object(_ json: [UInt8]) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: Data(json)) as? NSDictionary)
    }

    /// The sample as `health_store.full_payload` gives it back: the shared members and the
    /// creation date in its block again (members in the order written), the keys that held them gone.
    static func givenBack(_ json: [UInt8], creation: String?) throws -> [UInt8] {
        guard case .object(var members) = try JSONValue.parse(json) else { throw MappingFailure("not an object") }
        let shared = members.first { $0.key == "exportShared" }?.value
        guard case .object(var block)? = members.first(where: { $0.key == "healthExport" })?.value else { throw MappingFailure("no block") }
        if case .object(let sharedMembers)? = shared { block = sharedMembers + block }
        if let creation { block.append(("creationDate", .string(creation))) }
        members.removeAll { ["exportShared", "exportContext", "exportCreated", "healthExport"].contains($0.key) }
        members.append(("healthExport", .object(block)))
        var out: [UInt8] = []
        JSONValue.object(members).write(to: &out)
        return out
    }

    /// One sample through `ExportMapper.sharedApart(samplesJSON:)`.
    static func apart(_ sample: [UInt8]) throws -> [UInt8] {
        Array(try ExportMapper.sharedApart(samplesJSON: Array("[".utf8) + sample + Array("]".utf8)).dropFirst().dropLast())
    }

    @Test("shared members, shared metadata and a creation date of whole seconds go apart again: the object the import stored, its context's number included")
    func sharedAgain() throws {
        for (metadata, creation) in [([("HKMetadataKeyHeartRateMotionContext", "1")], "2024-03-10 08:05:00 +0100"),
                                     ([], "2024-03-10 08:04:07 +0100"), ([("HKExternalUUID", "A-1")], "2024-03-10 08:06:00 +0100")] {
            let stored = try Self.mapped(metadata, creation: creation)
            let back = try Self.givenBack(stored, creation: creation)
            #expect(try Self.object(back)["exportShared"] == nil, "the given-back form holds its members in the block")
            let again = try Self.apart(back)
            #expect(try Self.object(again) == (try Self.object(stored)), "\(metadata), \(creation): \(String(decoding: again, as: UTF8.self))")
        }
    }

    @Test("a creation date the end does not give back stays in the block, the shared members still go apart")
    func creationKept() throws {
        let stored = try Self.mapped([], creation: "2024-03-10 08:05:00 +0100")
        let back = try JSONValue.parse(try Self.givenBack(stored, creation: nil))
        guard case .object(var members) = back, case .object(var block)? = back["healthExport"] else { throw MappingFailure("shape") }
        block.append(("creationDate", .string("2024-03-10 08:05:00.5 +0100")))
        members.removeAll { $0.key == "healthExport" }
        members.append(("healthExport", .object(block)))
        var given: [UInt8] = []
        JSONValue.object(members).write(to: &given)
        let again = try Self.object(Self.apart(given))
        #expect(again["exportCreated"] == nil)
        #expect((again["healthExport"] as? NSDictionary)?["creationDate"] as? String == "2024-03-10 08:05:00.5 +0100")
        #expect((again["exportShared"] as? NSDictionary)?["device"] as? String == "<<HKDevice: 0x1>>")
    }

    @Test("kept as given: a workout, a block with a repeated key or a shared member that is not a string, a sample already apart, one with no block",
          arguments: [
            #"{"kind":"workout","end":"2024-03-10T08:04:00.000+01:00","healthExport":{"device":"d","creationDate":"2024-03-10 08:04:00 +0100"}}"#,
            #"{"kind":"quantity","end":"2024-03-10T08:04:00.000+01:00","healthExport":{"device":"d","device":"e"}}"#,
            #"{"kind":"quantity","end":"2024-03-10T08:04:00.000+01:00","healthExport":{"device":7,"sourceVersion":"1"}}"#,
            #"{"kind":"quantity","end":"2024-03-10T08:04:00.000+01:00","exportContext":5,"healthExport":{"device":"d"}}"#,
            #"{"kind":"quantity","end":"2024-03-10T08:04:00.000+01:00","value":1.50}"#,
          ])
    func keptWhole(sample: String) throws {
        let again = try Self.apart(Array(sample.utf8))
        #expect(String(decoding: again, as: UTF8.self) == sample)
    }
}
