import Foundation
import HealthPayload
import Testing

/// Fixture files, named by outcome (`*.good.*`, `*.bad.*`, `*.partial.*`).
enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"), "fixture \(name)")
        return Array(try Data(contentsOf: url))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try bytes(name), as: UTF8.self)
    }
}

/// The batches of a decoded body, failing the test on a probe.
func batches(_ body: DecodedBody) throws -> [Batch] {
    guard case .batches(let batches) = body else {
        Issue.record("expected batches, got a probe")
        throw CancellationError()
    }
    return batches
}

/// The single batch of a JSON body.
func jsonBatch(_ body: [UInt8]) throws -> Batch {
    let all = try batches(try PayloadDecoder.decode(json: body))
    try #require(all.count == 1)
    return all[0]
}

func jsonBatch(_ text: String) throws -> Batch {
    try jsonBatch(Array(text.utf8))
}

func isProbe(_ body: DecodedBody) -> Bool {
    if case .probe = body { return true }
    return false
}

/// The valid samples, parsed independently with Foundation.
func sampleObjects(_ batch: Batch) throws -> [[String: Any]] {
    let parsed = try JSONSerialization.jsonObject(with: Data(batch.samplesJSON), options: [.fragmentsAllowed])
    return try #require(parsed as? [[String: Any]], "samplesJSON is an array of objects")
}

/// The valid samples keyed by uuid.
func samplesByUUID(_ batch: Batch) throws -> [String: NSDictionary] {
    var result: [String: NSDictionary] = [:]
    for object in try sampleObjects(batch) {
        let uuid = try #require(object["uuid"] as? String)
        result[uuid] = object as NSDictionary
    }
    return result
}

/// The error message of a body that must be rejected.
func jsonError(_ text: String) -> String? {
    jsonError(Array(text.utf8))
}

func jsonError(_ bytes: [UInt8]) -> String? {
    do {
        _ = try PayloadDecoder.decode(json: bytes)
        return nil
    } catch {
        return error.message
    }
}

func csvError(_ text: String) -> String? {
    csvError(Array(text.utf8))
}

func csvError(_ bytes: [UInt8]) -> String? {
    do {
        _ = try PayloadDecoder.decode(csv: bytes)
        return nil
    } catch {
        return error.message
    }
}


/// Builders for JSON bodies used across suites.
enum Body {
    static let exportId = "6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70"
    static let stamp = "2026-08-21T12:00:00.000+02:00"
    static let id = "3cae82ce29b729ba872bdd31f1db79f0a31013c3546710bd4fe1adb8192ec011"

    /// The envelope members in reference order, each as `"key":value` text.
    static var envelopeMembers: [(key: String, json: String)] {
        [
            ("schemaVersion", "1"), ("connectivityTest", "false"), ("exportId", "\"\(exportId)\""),
            ("generatedAt", "\"\(stamp)\""), ("batchSequence", "1"), ("isFinalBatch", "true"), ("basis", "\"window\""),
            ("windowStart", "\"2026-08-20T12:00:00.000+02:00\""), ("windowEnd", "\"\(stamp)\""),
            ("occasionStart", "\"2026-08-20T12:00:00.000+02:00\""), ("occasionEnd", "\"\(stamp)\""),
        ]
    }

    /// A body with the given samples (JSON texts) and envelope overrides (nil removes a key).
    static func json(samples: [String], overriding: [String: String?] = [:]) -> String {
        var members: [String] = []
        for (key, value) in envelopeMembers {
            if let override = overriding[key] {
                if let override { members.append("\"\(key)\":\(override)") }
            } else {
                members.append("\"\(key)\":\(value)")
            }
        }
        if let override = overriding["samples"] {
            if let override { members.append("\"samples\":\(override)") }
        } else {
            members.append("\"samples\":[\(samples.joined(separator: ","))]")
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// A quantity sample, with `members` replacing or adding keys (raw JSON values; nil removes a key).
    static func quantity(uuid: String = "A1B2C3D4-0000-4000-8000-000000000001", _ members: [String: String?] = [:]) -> String {
        sample([
            "uuid": "\"\(uuid)\"", "id": "\"\(id)\"", "type": "\"HKQuantityTypeIdentifierStepCount\"", "group": "\"activity\"",
            "source": "\"com.apple.Health\"", "start": "\"2026-08-21T10:25:30.000+02:00\"", "end": "\"2026-08-21T10:25:30.000+02:00\"",
            "kind": "\"quantity\"", "value": "42", "unit": "\"count\"",
        ], members)
    }

    static func category(_ members: [String: String?] = [:]) -> String {
        sample([
            "uuid": "\"A1B2C3D4-0000-4000-8000-000000000002\"", "id": "\"\(id)\"", "type": "\"HKCategoryTypeIdentifierSleepAnalysis\"",
            "group": "\"sleep\"", "source": "\"com.apple.Health\"", "start": "\"2026-08-21T00:10:00.000+02:00\"",
            "end": "\"2026-08-21T00:55:00.000+02:00\"", "kind": "\"category\"", "value": "4", "name": "\"asleepDeep\"",
        ], members)
    }

    static func workout(_ members: [String: String?] = [:]) -> String {
        sample([
            "uuid": "\"A1B2C3D4-0000-4000-8000-000000000003\"", "id": "\"\(id)\"", "type": "\"HKWorkoutTypeIdentifier\"",
            "group": "\"workouts\"", "source": "\"com.apple.Health\"", "start": "\"2026-08-21T07:00:00.000+02:00\"",
            "end": "\"2026-08-21T07:30:00.000+02:00\"", "kind": "\"workout\"", "activityType": "37", "activityName": "\"running\"",
            "durationSeconds": "1800", "distanceMeters": "5000", "activeEnergyKilocalories": "320",
        ], members)
    }

    private static let order = ["uuid", "id", "type", "group", "source", "start", "end", "kind", "value", "unit", "name",
                                "activityType", "activityName", "durationSeconds", "distanceMeters", "activeEnergyKilocalories"]

    private static func sample(_ base: [String: String], _ members: [String: String?]) -> String {
        var values = base
        var extra: [String] = []
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            if values[key] == nil && !order.contains(key) { extra.append(key) }
            if let value { values[key] = value } else { values[key] = nil }
        }
        var parts: [String] = []
        for key in order + extra {
            if let value = values[key] { parts.append("\"\(key)\":\(value)") }
        }
        return "{" + parts.joined(separator: ",") + "}"
    }
}
