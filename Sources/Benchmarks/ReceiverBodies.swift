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
    /// Distinct uuids over all bodies and what was held before them: the rows each person
    /// holds afterwards.
    let distinct: Int
    /// Those uuids (lower case), for bodies sent after these.
    let held: Set<String>

    /// `Content-Type` of the bodies.
    var contentType: String { format == .json ? "application/json" : "text/csv; charset=utf-8" }
    /// Samples over all bodies.
    var samples: Int { inserted.reduce(0, +) + duplicates.reduce(0, +) }
    var megabytes: Double { Double(bodies.reduce(0) { $0 + $1.count }) / 1_048_576 }

    /// The first day the timed bodies cover; a history ends the day before.
    static let firstTimedDay = CivilDate("2024-01-01")!

    /// `count` full batches of manual 30-day exports of a phone-and-watch user (seed 7), from
    /// 2024-01-01, sent after `history` (if any) is held. The expected counts come from
    /// Foundation's JSON parser over each body's samples (for CSV, over the sample objects the
    /// decoder builds), not from any receiver.
    init(count: Int, format: PayloadFormat, after history: ReceiverBodies? = nil) throws {
        var bodies: [[UInt8]] = []
        DemoGenerator(.init(start: Self.firstTimedDay, days: count + count / 4 + 30, format: format, seed: 7, manualExportDays: 30)).generate { body in
            if body.sampleCount == DemoGenerator.maxSamplesPerBatch, bodies.count < count { bodies.append(body.bytes) }
        }
        guard bodies.count == count else { throw BenchmarkError.usage("generated \(bodies.count) full batches, wanted \(count)") }
        try self.init(bodies: bodies, format: format, held: history?.held ?? [])
    }

    /// A person's history before the timed bodies: every body the same user's scheduled exports
    /// (a few a day, as the app sends them) sent over the `days` days before 2024-01-01
    /// (seed 8, so no uuid is shared with the timed bodies but by chance, which the counts
    /// would then show).
    static func history(days: Int, format: PayloadFormat) throws -> ReceiverBodies {
        var bodies: [[UInt8]] = []
        DemoGenerator(.init(start: firstTimedDay.adding(days: -days), days: days, format: format, seed: 8)).generate { body in
            bodies.append(body.bytes)
        }
        return try ReceiverBodies(bodies: bodies, format: format, held: [])
    }

    private init(bodies: [[UInt8]], format: PayloadFormat, held: Set<String>) throws {
        self.format = format
        var seen = held, inserted: [Int] = [], duplicates: [Int] = []
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
        self.held = seen
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
