import DemoData
import Foundation
import HealthPayload

/// healthd v1 bodies for tests, in the reference's exact shapes.
public enum Bodies {
    /// The shared fixtures folder (the reference's own example bytes).
    public static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HealthPayloadTests/Fixtures")
    }

    /// A fixture's bytes, e.g. `contract-example.json`.
    public static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    /// The CSV header row of version 1 (26 columns).
    public static let csvHeader = DemoEncoder.csvColumns.joined(separator: ",")

    /// A quantity sample object as JSON text, written by DemoData (timestamps in `start`'s offset).
    public static func quantity(uuid: String, type: String = "HKQuantityTypeIdentifierStepCount", group: String = "activity",
                                source: String = "com.apple.Health", start: String, end: String? = nil,
                                value: String, unit: String = "count", id: String? = nil) -> String {
        let from = instant(start), to = instant(end ?? start)
        return DemoEncoder.object(DemoSample(uuid: uuid, type: DemoType(identifier: type, group: group, kind: "quantity", unit: unit),
                                             source: source, start: from.millisecondsSinceEpoch, end: to.millisecondsSinceEpoch, value: value,
                                             id: id ?? String(repeating: "a", count: 64), offsetMinutes: from.offsetMinutes))
    }

    /// A JSON batch body around sample objects, written by DemoData; `schemaVersion` other than
    /// `1` makes the body the app's future (or a broken one).
    public static func json(samples: [String], exportId: String = "6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70", sequence: Int = 1,
                            isFinal: Bool = true, basis: String = "window", schemaVersion: String = "1") -> [UInt8] {
        let stamp = instant("2026-08-21T12:00:00.000+02:00"), dayBefore = instant("2026-08-20T12:00:00.000+02:00")
        let envelope = DemoEnvelope(exportId: exportId, generatedAt: stamp.millisecondsSinceEpoch, batchSequence: sequence, isFinalBatch: isFinal,
                                    basis: basis, windowStart: dayBefore.millisecondsSinceEpoch, windowEnd: stamp.millisecondsSinceEpoch,
                                    occasionStart: dayBefore.millisecondsSinceEpoch, occasionEnd: stamp.millisecondsSinceEpoch,
                                    offsetMinutes: stamp.offsetMinutes)
        let body = DemoEncoder.json(envelope, objects: samples)
        guard schemaVersion != "1" else { return body }
        return Array(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\"schemaVersion\":1,", with: "\"schemaVersion\":\(schemaVersion),").utf8)
    }

    /// The envelope `json(samples:)` writes, for other encodings of the same batch.
    public static func envelope(exportId: String = "6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70", sequence: Int = 1) -> DemoEnvelope {
        let stamp = instant("2026-08-21T12:00:00.000+02:00"), dayBefore = instant("2026-08-20T12:00:00.000+02:00")
        return DemoEnvelope(exportId: exportId, generatedAt: stamp.millisecondsSinceEpoch, batchSequence: sequence, isFinalBatch: true,
                            basis: "window", windowStart: dayBefore.millisecondsSinceEpoch, windowEnd: stamp.millisecondsSinceEpoch,
                            occasionStart: dayBefore.millisecondsSinceEpoch, occasionEnd: stamp.millisecondsSinceEpoch,
                            offsetMinutes: stamp.offsetMinutes)
    }

    /// A timestamp in the reference's shape, parsed (tests pass only valid ones).
    public static func instant(_ text: String) -> Timestamp {
        guard let stamp = Timestamp(text) else { preconditionFailure("not a timestamp like 2026-08-21T10:25:30.000+02:00: \(text)") }
        return stamp
    }

    /// A CSV body built to expand: the version 1 header plus an unknown column whose name is
    /// `nameBytes` long, then short valid rows (the unknown cell `x`) until the body is about
    /// `totalBytes`. Every row would repeat the name as a key: 2 MB × thousands of rows.
    public static func expandingCSV(nameBytes: Int, totalBytes: Int) -> [UInt8] {
        var out = Array((csvHeader + "," + String(repeating: "n", count: nameBytes) + "\n").utf8)
        let stamp = "2026-08-21T12:00:00.000+02:00", from = "2026-08-20T12:00:00.000+02:00"
        var n = 0
        while out.count < totalBytes {
            n += 1
            let digits = String(n)
            let uuid = "A1B2C3D4-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
            let row = "1,6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70,\(stamp),1,true,\(from),\(stamp),\(uuid),\(String(repeating: "a", count: 64)),"
                + "HKQuantityTypeIdentifierStepCount,activity,com.apple.Health,2026-08-21T10:25:30.000+02:00,2026-08-21T10:25:30.000+02:00,"
                + "quantity,\(n),count,,,,,,,window,\(from),\(stamp),x\n"
            out.append(contentsOf: row.utf8)
        }
        return out
    }
}
