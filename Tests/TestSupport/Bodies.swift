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

    static func quote(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [])
        let array = String(decoding: data, as: UTF8.self)
        return String(array.dropFirst().dropLast())
    }
}
