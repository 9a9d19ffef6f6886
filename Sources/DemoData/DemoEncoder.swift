import HealthPayload

/// A batch's envelope, instants in ms, all written in one offset.
public struct DemoEnvelope: Sendable {
    /// The export run's UUID.
    public var exportId: String
    /// When the run's batches were built.
    public var generatedAt: Int64
    /// The 1-based position of the batch in its run, and whether it is the run's last.
    public var batchSequence: Int
    public var isFinalBatch: Bool
    /// `anchor` or `window`.
    public var basis: String
    /// No sample starts before `windowStart` or ends after `windowEnd`.
    public var windowStart: Int64
    public var windowEnd: Int64
    /// The run the batch belongs to: a label, not a filter.
    public var occasionStart: Int64
    public var occasionEnd: Int64
    /// The UTC offset (minutes east) every timestamp of the body is written in, unless a sample says otherwise.
    public var offsetMinutes: Int

    /// An envelope from its values.
    public init(exportId: String, generatedAt: Int64, batchSequence: Int = 1, isFinalBatch: Bool = true, basis: String = "window",
                windowStart: Int64, windowEnd: Int64, occasionStart: Int64, occasionEnd: Int64, offsetMinutes: Int) {
        self.exportId = exportId
        self.generatedAt = generatedAt
        self.batchSequence = batchSequence
        self.isFinalBatch = isFinalBatch
        self.basis = basis
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.occasionStart = occasionStart
        self.occasionEnd = occasionEnd
        self.offsetMinutes = offsetMinutes
    }
}

/// Writes bodies in the reference's exact shapes: JSON with the twelve envelope keys, keys
/// sorted, unindented, no trailing newline; CSV with the 26 columns, minimal quoting, LF after
/// every row, a header row on every body. The one writer of healthd bodies for the generator,
/// the tests and the benchmarks.
public enum DemoEncoder {
    /// The version 1 CSV header, in the app's column order.
    public static let csvColumns = [
        "schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd",
        "uuid", "id", "type", "group", "source", "start", "end", "kind", "value", "unit", "name",
        "activityType", "activityName", "durationSeconds", "distanceMeters", "activeEnergyKilocalories",
        "basis", "occasionStart", "occasionEnd",
    ]

    /// A JSON body: the envelope and the sample objects, keys in byte order as the app writes them.
    public static func json(_ e: DemoEnvelope, _ samples: [DemoSample]) -> [UInt8] {
        json(e, count: samples.count) { index, out in appendObject(samples[index], offsetMinutes: e.offsetMinutes, to: &out) }
    }

    /// A JSON body around sample objects given as JSON text (for tests that write a sample by hand).
    public static func json(_ e: DemoEnvelope, objects: [String]) -> [UInt8] {
        json(e, count: objects.count) { index, out in out.append(contentsOf: objects[index].utf8) }
    }

    private static func json(_ e: DemoEnvelope, count: Int, _ sample: (Int, inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count * 460 + 512)
        func raw(_ text: String) { out.append(contentsOf: text.utf8) }
        func string(_ text: String) { JSONString.append(quoting: text, to: &out) }
        func stamp(_ ms: Int64) { string(DemoTimestamp.text(ms, offsetMinutes: e.offsetMinutes)) }
        raw("{\"basis\":"); string(e.basis)
        raw(",\"batchSequence\":\(e.batchSequence),\"connectivityTest\":false,\"exportId\":"); string(e.exportId)
        raw(",\"generatedAt\":"); stamp(e.generatedAt)
        raw(",\"isFinalBatch\":" + (e.isFinalBatch ? "true" : "false"))
        raw(",\"occasionEnd\":"); stamp(e.occasionEnd)
        raw(",\"occasionStart\":"); stamp(e.occasionStart)
        raw(",\"samples\":[")
        for index in 0..<count {
            if index > 0 { raw(",") }
            sample(index, &out)
        }
        raw("],\"schemaVersion\":1,\"windowEnd\":"); stamp(e.windowEnd)
        raw(",\"windowStart\":"); stamp(e.windowStart)
        raw("}")
        return out
    }

    /// One sample object as JSON text, its timestamps in `offsetMinutes` unless it has its own.
    public static func object(_ s: DemoSample, offsetMinutes: Int = 0) -> String {
        var out: [UInt8] = []
        appendObject(s, offsetMinutes: offsetMinutes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The sample objects as one JSON array, as `health_store.store_batch` takes them.
    public static func array(_ samples: [DemoSample], offsetMinutes: Int = 0) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, s) in samples.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            appendObject(s, offsetMinutes: offsetMinutes, to: &out)
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// Keys in byte order, as the app writes them.
    private static func appendObject(_ s: DemoSample, offsetMinutes: Int, to out: inout [UInt8]) {
        func raw(_ text: String) { out.append(contentsOf: text.utf8) }
        func string(_ text: String) { JSONString.append(quoting: text, to: &out) }
        func stamp(_ ms: Int64) { string(DemoTimestamp.text(ms, offsetMinutes: s.offsetMinutes ?? offsetMinutes)) }
        raw("{")
        if s.type.kind == "workout" {
            if let kcal = s.activeEnergyKilocalories { raw("\"activeEnergyKilocalories\":" + kcal + ",") }
            if let name = s.activityName { raw("\"activityName\":"); string(name); raw(",") }
            raw("\"activityType\":" + String(s.activityType ?? 0) + ",")
            if let distance = s.distanceMeters { raw("\"distanceMeters\":" + distance + ",") }
            raw("\"durationSeconds\":" + (s.durationSeconds ?? "0") + ",")
        }
        raw("\"end\":"); stamp(s.end)
        raw(",\"group\":"); string(s.type.group)
        raw(",\"id\":"); string(s.id)
        raw(",\"kind\":"); string(s.type.kind)
        if let name = s.name { raw(",\"name\":"); string(name) }
        raw(",\"source\":"); string(s.source)
        raw(",\"start\":"); stamp(s.start)
        raw(",\"type\":"); string(s.type.identifier)
        if let unit = s.type.unit, s.type.kind == "quantity" { raw(",\"unit\":"); string(unit) }
        raw(",\"uuid\":"); string(s.uuid)
        if let value = s.value { raw(",\"value\":" + value) }
        raw("}")
    }

    /// A CSV body: the header row, then one row per sample with the envelope repeated.
    public static func csv(_ e: DemoEnvelope, _ samples: [DemoSample]) -> [UInt8] {
        var writer = CSVWriter()
        writer.writeRow(csvColumns)
        let stamp = { (ms: Int64) in DemoTimestamp.text(ms, offsetMinutes: e.offsetMinutes) }
        let sampleStamp = { (s: DemoSample, ms: Int64) in DemoTimestamp.text(ms, offsetMinutes: s.offsetMinutes ?? e.offsetMinutes) }
        let generatedAt = stamp(e.generatedAt), windowStart = stamp(e.windowStart), windowEnd = stamp(e.windowEnd)
        let occasionStart = stamp(e.occasionStart), occasionEnd = stamp(e.occasionEnd)
        let sequence = String(e.batchSequence), final = e.isFinalBatch ? "true" : "false"
        for s in samples {
            let workout = s.type.kind == "workout"
            writer.writeRow([
                "1", e.exportId, generatedAt, sequence, final, windowStart, windowEnd,
                s.uuid, s.id, s.type.identifier, s.type.group, s.source, sampleStamp(s, s.start), sampleStamp(s, s.end), s.type.kind,
                s.value ?? "", s.type.kind == "quantity" ? (s.type.unit ?? "") : "", s.name ?? "",
                workout ? String(s.activityType ?? 0) : "", s.activityName ?? "", s.durationSeconds ?? "",
                s.distanceMeters ?? "", s.activeEnergyKilocalories ?? "",
                e.basis, occasionStart, occasionEnd,
            ])
        }
        return writer.bytes
    }
}
