import HealthPayload

/// Records of the Health app's export as `person export` gives them back (docs/people.md), made
/// again into what `import-apple-health` stores: `person import`'s way to the same storage.
public enum GivenBackRecords {
    /// Every sample of a body's `samples` array as `ExportMapper.record(_:)` writes a record
    /// (`ExportMapper.sharedApart(samplesJSON:)`).
    public static func sharedApart(samplesJSON: [UInt8]) throws(PayloadError) -> [UInt8] {
        try ExportMapper.sharedApart(samplesJSON: samplesJSON)
    }
}

extension ExportMapper {
    /// A sample's members: each key with its value's JSON text as written.
    typealias Members = [(key: String, text: ArraySlice<UInt8>)]

    /// The samples of one body `person export` wrote of the Health app's export
    /// (`apple-export/000001.json`: each record with its `healthExport` block whole, as
    /// `health_store.samples` gives it back), each as `record(_:)` maps a record: its shared
    /// members and creation date apart (`exportShared`, `exportContext`, `exportCreated`:
    /// `writeShared`), so that `person import` stores them as compactly as the import did
    /// (docs/apple-export.md, "Storage"). Only the blocks are read; every other value is passed on
    /// as written. A body that is not an array of objects is returned as it is (its decoder has
    /// said what it is).
    static func sharedApart(samplesJSON: [UInt8]) throws(PayloadError) -> [UInt8] {
        guard let samples = try JSONValue.membersOfEachObject(samplesJSON) else { return samplesJSON }
        var w = JSONWriter(capacity: samplesJSON.count)
        w.beginArray()
        for members in samples { sharedApart(members, to: &w) }
        w.endArray()
        return w.bytes
    }

    /// One sample given back (`sharedApart(samplesJSON:)`) as `record(_:)` writes it: the members
    /// of its `healthExport` block in `sharedKeys`, its metadata when `isShared`, and its
    /// `creationDate` when `createdSeconds` reads it against the sample's end, written apart by
    /// `writeShared`; the rest of the block and of the sample as they were. Written as it came: a
    /// workout (`workout(_:)` keeps its block whole), a sample with no block, with any of the keys
    /// `writeShared` writes, with a repeated key in its block, or whose shared members are not
    /// strings: such a sample is stored as it is, as any other.
    static func sharedApart(_ members: Members, to w: inout JSONWriter) {
        func text(_ key: String) -> ArraySlice<UInt8>? { members.last { $0.key == key }?.text }
        w.beginObject()
        defer { w.endObject() }
        guard text("kind").map(JSONValue.string) != .some("workout"), !members.contains(where: { keysApart.contains($0.key) }),
              let json = text("healthExport"), case .object(let block)? = try? JSONValue.parse(Array(json)),
              !block.indices.contains(where: { i in block[..<i].contains { $0.key == block[i].key } }),
              let end = text("end").flatMap(JSONValue.string).flatMap(ExportTimestamp.init),
              let (shared, metadata, created, kept) = Self.apart(block, end: end) else {
            for (key, value) in members { w.key(key); w.value { $0 += value } }
            return
        }
        for (key, value) in members where key != "healthExport" { w.key(key); w.value { $0 += value } }
        writeShared(shared, metadata: metadata, created: created, to: &w)
        w.key("healthExport")
        w.value { JSONValue.object(kept).write(to: &$0) }
    }

    /// The keys `writeShared` writes.
    private static let keysApart: Set<String> = ["exportShared", "exportContext", "exportCreated"]

    /// A given-back block's shared members, shared metadata and creation date (as seconds after
    /// `end`), and what else it holds; nil when a shared member is not a string.
    private static func apart(_ block: [(key: String, value: JSONValue)], end: ExportTimestamp)
        -> (shared: [(name: String, value: String)], metadata: [(key: String, value: String)], created: Int?,
            kept: [(key: String, value: JSONValue)])? {
        var shared: [(name: String, value: String)] = [], metadata: [(key: String, value: String)] = []
        var created: Int?
        var kept: [(key: String, value: JSONValue)] = []
        for (key, value) in block {
            if sharedKeys.contains(key) {
                guard let text = value.stringValue else { return nil }
                shared.append((key, text))
            } else if key == "metadata", let pairs = stringMembers(value), isShared(pairs) {
                metadata = pairs
            } else if key == "creationDate", let text = value.stringValue, let seconds = createdSeconds(text, end: end) {
                created = seconds
            } else {
                kept.append((key, value))
            }
        }
        return (shared, metadata, created, kept)
    }

    /// An object's members when every one is a string; nil otherwise.
    private static func stringMembers(_ value: JSONValue) -> [(key: String, value: String)]? {
        guard case .object(let members) = value else { return nil }
        var pairs: [(key: String, value: String)] = []
        for (key, member) in members {
            guard let text = member.stringValue else { return nil }
            pairs.append((key, text))
        }
        return pairs
    }
}
