import Foundation

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
    public static let csvHeader = "schemaVersion,exportId,generatedAt,batchSequence,isFinalBatch,windowStart,windowEnd,uuid,id,type,group,source,start,end,kind,value,unit,name,activityType,activityName,durationSeconds,distanceMeters,activeEnergyKilocalories,basis,occasionStart,occasionEnd"

    /// A quantity sample object as JSON text.
    public static func quantity(uuid: String, type: String = "HKQuantityTypeIdentifierStepCount", group: String = "activity",
                                source: String = "com.apple.Health", start: String, end: String? = nil,
                                value: String, unit: String = "count", id: String? = nil) -> String {
        """
        {"end":"\(end ?? start)","group":"\(group)","id":"\(id ?? String(repeating: "a", count: 64))","kind":"quantity","source":\(quote(source)),"start":"\(start)","type":"\(type)","unit":"\(unit)","uuid":"\(uuid)","value":\(value)}
        """
    }

    /// A JSON batch body around sample objects.
    public static func json(samples: [String], exportId: String = "6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70", sequence: Int = 1,
                            isFinal: Bool = true, basis: String = "window", schemaVersion: String = "1") -> [UInt8] {
        let stamp = "2026-08-21T12:00:00.000+02:00"
        let text = """
            {"basis":"\(basis)","batchSequence":\(sequence),"connectivityTest":false,"exportId":"\(exportId)","generatedAt":"\(stamp)","isFinalBatch":\(isFinal),"occasionEnd":"\(stamp)","occasionStart":"2026-08-20T12:00:00.000+02:00","samples":[\(samples.joined(separator: ","))],"schemaVersion":\(schemaVersion),"windowEnd":"\(stamp)","windowStart":"2026-08-20T12:00:00.000+02:00"}
            """
        return Array(text.utf8)
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

    static func quote(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [])
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }
}
