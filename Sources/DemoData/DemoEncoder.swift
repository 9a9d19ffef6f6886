import HealthPayload

/// A batch's envelope, instants in ms, all written in one offset.
struct DemoEnvelope {
    var exportId: String
    var generatedAt: Int64
    var batchSequence: Int
    var isFinalBatch: Bool
    var basis: String
    var windowStart: Int64
    var windowEnd: Int64
    var occasionStart: Int64
    var occasionEnd: Int64
    var offsetMinutes: Int
}

/// Writes bodies in the reference's exact shapes: JSON with the twelve envelope keys, keys
/// sorted, unindented, no trailing newline; CSV with the 26 columns, minimal quoting, LF after
/// every row, a header row on every body.
enum DemoEncoder {
    static let csvColumns = [
        "schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd",
        "uuid", "id", "type", "group", "source", "start", "end", "kind", "value", "unit", "name",
        "activityType", "activityName", "durationSeconds", "distanceMeters", "activeEnergyKilocalories",
        "basis", "occasionStart", "occasionEnd",
    ]

    static func json(_ e: DemoEnvelope, _ samples: [DemoSample]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(samples.count * 460 + 512)
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
        for (index, s) in samples.enumerated() {
            if index > 0 { raw(",") }
            // Keys in byte order, as the app writes them.
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
        raw("],\"schemaVersion\":1,\"windowEnd\":"); stamp(e.windowEnd)
        raw(",\"windowStart\":"); stamp(e.windowStart)
        raw("}")
        return out
    }

    static func csv(_ e: DemoEnvelope, _ samples: [DemoSample]) -> [UInt8] {
        var writer = CSVWriter()
        writer.writeRow(csvColumns)
        let stamp = { (ms: Int64) in DemoTimestamp.text(ms, offsetMinutes: e.offsetMinutes) }
        let generatedAt = stamp(e.generatedAt), windowStart = stamp(e.windowStart), windowEnd = stamp(e.windowEnd)
        let occasionStart = stamp(e.occasionStart), occasionEnd = stamp(e.occasionEnd)
        let sequence = String(e.batchSequence), final = e.isFinalBatch ? "true" : "false"
        for s in samples {
            let workout = s.type.kind == "workout"
            writer.writeRow([
                "1", e.exportId, generatedAt, sequence, final, windowStart, windowEnd,
                s.uuid, s.id, s.type.identifier, s.type.group, s.source, stamp(s.start), stamp(s.end), s.type.kind,
                s.value ?? "", s.type.kind == "quantity" ? (s.type.unit ?? "") : "", s.name ?? "",
                workout ? String(s.activityType ?? 0) : "", s.activityName ?? "", s.durationSeconds ?? "",
                s.distanceMeters ?? "", s.activeEnergyKilocalories ?? "",
                e.basis, occasionStart, occasionEnd,
            ])
        }
        return writer.bytes
    }
}
