import Civil
import DemoData
import Foundation
import HealthPayload

/// The receiver section's bodies: full 1000-sample batches as the app sends them, with what
/// every receiver must answer for each when they are sent in order to an empty store.
struct ReceiverBodies: Sendable {
    /// JSON or CSV.
    let format: PayloadFormat
    /// The bodies as sent.
    let bodies: [[UInt8]]
    /// Per body, in order: samples whose uuid no earlier sample carried (stored as new), and
    /// the rest (already held: the same sample sent again by an overlapping export).
    let inserted: [Int]
    let duplicates: [Int]
    /// Distinct uuids over all bodies: the rows each person holds afterwards.
    let distinct: Int

    /// `Content-Type` of the bodies.
    var contentType: String { format == .json ? "application/json" : "text/csv; charset=utf-8" }
    /// Samples over all bodies.
    var samples: Int { inserted.reduce(0, +) + duplicates.reduce(0, +) }
    var megabytes: Double { Double(bodies.reduce(0) { $0 + $1.count }) / 1_048_576 }

    /// `count` full batches of manual 30-day exports of a phone-and-watch user (seed 7). The
    /// expected counts come from Foundation's JSON parser over each body's samples (for CSV,
    /// over the sample objects the decoder builds), not from any receiver.
    init(count: Int, format: PayloadFormat) throws {
        self.format = format
        var bodies: [[UInt8]] = []
        DemoGenerator(.init(start: CivilDate("2024-01-01")!, days: count + count / 4 + 30, format: format, seed: 7, manualExportDays: 30)).generate { body in
            if body.sampleCount == DemoGenerator.maxSamplesPerBatch, bodies.count < count { bodies.append(body.bytes) }
        }
        guard bodies.count == count else { throw BenchmarkError.usage("generated \(bodies.count) full batches, wanted \(count)") }
        var seen = Set<String>(), inserted: [Int] = [], duplicates: [Int] = []
        for body in bodies {
            var new = 0, again = 0
            for uuid in try Self.uuids(body, format: format) {
                if seen.insert(uuid.lowercased()).inserted { new += 1 } else { again += 1 }
            }
            inserted.append(new)
            duplicates.append(again)
        }
        self.bodies = bodies
        self.inserted = inserted
        self.duplicates = duplicates
        distinct = seen.count
    }

    /// The samples' uuids in body order.
    private static func uuids(_ body: [UInt8], format: PayloadFormat) throws -> [String] {
        let samples: Any
        if format == .json {
            samples = (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["samples"] as Any
        } else {
            guard case .batches(let batches) = try PayloadDecoder.decode(body, format: .csv), let batch = batches.first,
                  batch.quarantined.isEmpty else { throw BenchmarkError.usage("a generated CSV body did not decode whole") }
            samples = try JSONSerialization.jsonObject(with: Data(batch.samplesJSON))
        }
        guard let list = samples as? [[String: Any]] else { throw BenchmarkError.usage("a generated body has no samples array") }
        return try list.map {
            guard let uuid = $0["uuid"] as? String else { throw BenchmarkError.usage("a generated sample has no uuid") }
            return uuid
        }
    }

    /// Checks one answer's counts against body `index`'s; `duplicates` counts what the
    /// receiver reports as already held (ours: duplicates + replaced).
    func check(index: Int, inserted got: Int?, duplicates gotAgain: Int?, receiver: String) throws {
        guard got == inserted[index], gotAgain == duplicates[index] else {
            throw BenchmarkError.usage("\(receiver): body \(index) answered inserted \(got.map(String.init) ?? "none"), duplicates \(gotAgain.map(String.init) ?? "none"); expected \(inserted[index]) and \(duplicates[index])")
        }
    }
}
