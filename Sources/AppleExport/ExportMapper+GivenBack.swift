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
    /// The samples of one body `person export` wrote of the Health app's export
    /// (`apple-export/000001.json`: each record with its `healthExport` block whole, as
    /// `health_store.samples` gives it back), each as `record(_:)` maps a record: its shared
    /// members and creation date apart (`exportShared`, `exportContext`, `exportCreated`:
    /// `writeShared`), so that `person import` stores them as compactly as the import did
    /// (docs/apple-export.md, "Storage"). A sample that is not an object of that shape is kept as
    /// it is (`sharedApart(_:)`); what the body is not, the caller's decoder has said already.
    static func sharedApart(samplesJSON: [UInt8]) throws(PayloadError) -> [UInt8] {
        guard case .array(let samples) = try JSONValue.parse(samplesJSON) else { return samplesJSON }
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(samplesJSON.count)
        for (i, sample) in samples.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += sharedApart(sample)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// One sample given back (`sharedApart(samplesJSON:)`) as `record(_:)` writes it: the members
    /// of its `healthExport` block in `sharedKeys`, its metadata when `isShared`, and its
    /// `creationDate` when `createdSeconds` reads it against the sample's end, written apart by
    /// `writeShared`; the rest of the block and of the sample as they were. Kept whole: a workout
    /// (`workout(_:)` keeps its block whole), a sample with no block, with any of the keys
    /// `writeShared` writes, with a repeated key in its block, or whose shared members are not
    /// strings: such a sample is stored as it is, as any other.
    static func sharedApart(_ sample: JSONValue) -> [UInt8] {
        var whole: [UInt8] = []
        sample.write(to: &whole)
        guard case .object(let members) = sample, sample["kind"]?.stringValue != "workout",
              !members.contains(where: { ["exportShared", "exportContext", "exportCreated"].contains($0.key) }),
              case .object(let block)? = sample["healthExport"], Set(block.map(\.key)).count == block.count,
              let end = sample["end"]?.stringValue.flatMap(ExportTimestamp.init) else { return whole }
        var shared: [(name: String, value: String)] = [], metadata: [(key: String, value: String)] = []
        var created: Int?
        var kept: [(key: String, value: JSONValue)] = []
        for (key, value) in block {
            if sharedKeys.contains(key) {
                guard let text = value.stringValue else { return whole }
                shared.append((key, text))
            } else if key == "metadata", let pairs = stringMembers(value), isShared(pairs) {
                metadata = pairs
            } else if key == "creationDate", let text = value.stringValue, let seconds = createdSeconds(text, end: end) {
                created = seconds
            } else {
                kept.append((key, value))
            }
        }
        var w = JSONWriter(capacity: whole.count)
        w.beginObject()
        for (key, value) in members where key != "healthExport" {
            w.key(key)
            w.value { value.write(to: &$0) }
        }
        writeShared(shared, metadata: metadata, created: created, to: &w)
        w.key("healthExport")
        w.value { JSONValue.object(kept).write(to: &$0) }
        w.endObject()
        return w.bytes
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
