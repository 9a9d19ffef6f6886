import Foundation
import HealthPayload

/// 1000-sample bodies shaped like a phone-and-watch user's day: heart rate, steps, distance
/// and energy from two sources, sleep stages, a workout. Seeded, so runs compare.
struct BenchmarkBodies {
    private var state: UInt64
    private var clock = 1_767_225_600_000 // 2026-01-01T00:00:00Z in ms
    private let exportId: String

    init(seed: UInt64) {
        state = seed &* 0x9E37_79B9_7F4A_7C15
        exportId = "B0000000-0000-4000-8000-\(String(format: "%012d", seed))"
    }

    /// SplitMix64.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func uuid() -> String {
        let a = next(), b = next()
        let hex = String(format: "%016llX%016llX", a, b)
        let c = Array(hex)
        return "\(String(c[0..<8]))-\(String(c[8..<12]))-4\(String(c[13..<16]))-8\(String(c[17..<20]))-\(String(c[20..<32]))"
    }

    /// `2026-01-01T01:00:00.000+01:00` for a time in ms since the epoch, written at +01:00.
    static func stamp(_ ms: Int) -> String {
        let local = ms + 3_600_000
        let days = Int((Double(local) / 86_400_000).rounded(.down))
        var z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        z = yoe + era * 400 + (m <= 2 ? 1 : 0)
        let rest = local - days * 86_400_000
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d+01:00", z, m, d, rest / 3_600_000, rest / 60_000 % 60,
                      rest / 1000 % 60, rest % 1000)
    }

    struct Sample {
        var fields: [(String, String)] // key and JSON value text, in key order
    }

    mutating func sample(type: String, group: String, source: String, start: Int, end: Int, kind: String,
                         extra: [(String, String)]) -> Sample {
        var fields: [(String, String)] = [
            ("end", JSONString.quoted(Self.stamp(end))), ("group", JSONString.quoted(group)),
            ("id", JSONString.quoted(String(format: "%016llx%016llx%016llx%016llx", next(), next(), next(), next()))),
            ("kind", JSONString.quoted(kind)), ("source", JSONString.quoted(source)), ("start", JSONString.quoted(Self.stamp(start))),
            ("type", JSONString.quoted(type)), ("uuid", JSONString.quoted(uuid())),
        ]
        fields += extra
        fields.sort { $0.0 < $1.0 }
        return Sample(fields: fields)
    }

    /// One body of 1000 samples covering the next stretch of time.
    mutating func body(sequence: Int, isFinal: Bool, format: PayloadFormat) -> [UInt8] {
        var samples: [Sample] = []
        let phone = "com.apple.health.6C1F4A7E-2B1D-4E8A-9F00-1A2B3C4D5E6F"
        let watch = "com.apple.health.Watch, Series 9"
        while samples.count < 1000 {
            let t = clock
            clock += 5 * 60_000
            let r = uniform()
            if r < 0.45 {
                samples.append(sample(type: "HKQuantityTypeIdentifierHeartRate", group: "heart", source: watch, start: t, end: t, kind: "quantity",
                                      extra: [("unit", "\"count/min\""), ("value", String(55 + Int(uniform() * 60)))]))
            } else if r < 0.85 {
                let source = uniform() < 0.5 ? phone : watch
                let types = [("HKQuantityTypeIdentifierStepCount", "count", String(Int(uniform() * 600))),
                             ("HKQuantityTypeIdentifierDistanceWalkingRunning", "m", String(format: "%.3f", uniform() * 400)),
                             ("HKQuantityTypeIdentifierActiveEnergyBurned", "kcal", String(format: "%.4f", uniform() * 30))]
                let (type, unit, value) = types[Int(uniform() * 3)]
                samples.append(sample(type: type, group: "activity", source: source, start: t, end: t + 4 * 60_000, kind: "quantity",
                                      extra: [("unit", JSONString.quoted(unit)), ("value", value)]))
            } else if r < 0.98 {
                let value = [0, 1, 2, 3, 4, 5][Int(uniform() * 6)]
                let names = ["inBed", "asleepUnspecified", "awake", "asleepCore", "asleepDeep", "asleepREM"]
                samples.append(sample(type: "HKCategoryTypeIdentifierSleepAnalysis", group: "sleep", source: watch, start: t, end: t + 4 * 60_000,
                                      kind: "category", extra: [("name", JSONString.quoted(names[value])), ("value", String(value))]))
            } else {
                var extra: [(String, String)] = [("activityName", "\"running\""), ("activityType", "37"), ("durationSeconds", "1800")]
                if uniform() < 0.7 { extra += [("distanceMeters", String(format: "%.1f", 3000 + uniform() * 4000)), ("activeEnergyKilocalories", "320")] }
                samples.append(sample(type: "HKWorkoutTypeIdentifier", group: "workouts", source: watch, start: t, end: t + 1_800_000,
                                      kind: "workout", extra: extra))
            }
        }
        let generatedAt = Self.stamp(clock)
        let windowStart = Self.stamp(clock - 1000 * 5 * 60_000)
        let windowEnd = Self.stamp(clock + 1_800_000)
        switch format {
        case .json:
            var text = "{\"basis\":\"anchor\",\"batchSequence\":\(sequence),\"connectivityTest\":false,\"exportId\":\"\(exportId)\",\"generatedAt\":\"\(generatedAt)\",\"isFinalBatch\":\(isFinal),\"occasionEnd\":\"\(generatedAt)\",\"occasionStart\":\"\(windowStart)\",\"samples\":["
            for (i, s) in samples.enumerated() {
                if i > 0 { text += "," }
                text += "{" + s.fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
            }
            text += "],\"schemaVersion\":1,\"windowEnd\":\"\(windowEnd)\",\"windowStart\":\"\(windowStart)\"}"
            return Array(text.utf8)
        case .csv:
            let columns = ["schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd", "uuid", "id",
                           "type", "group", "source", "start", "end", "kind", "value", "unit", "name", "activityType", "activityName",
                           "durationSeconds", "distanceMeters", "activeEnergyKilocalories", "basis", "occasionStart", "occasionEnd"]
            var writer = CSVWriter()
            writer.writeRow(columns)
            for s in samples {
                var values: [String: String] = [:]
                for (key, json) in s.fields {
                    values[key] = json.hasPrefix("\"") ? String(json.dropFirst().dropLast()) : json
                }
                values["schemaVersion"] = "1"; values["exportId"] = exportId; values["generatedAt"] = generatedAt
                values["batchSequence"] = String(sequence); values["isFinalBatch"] = String(isFinal)
                values["windowStart"] = windowStart; values["windowEnd"] = windowEnd; values["basis"] = "anchor"
                values["occasionStart"] = windowStart; values["occasionEnd"] = generatedAt
                writer.writeRow(columns.map { values[$0] ?? "" })
            }
            return writer.bytes
        }
    }
}
