import DemoData
import Foundation
import Hashing
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

/// A sample whose number no daily sum can hold must not sink its batch: the decoder quarantines
/// it, and every batch it passes stores with its rollups, whatever the mix.
@Suite("Extreme numbers through the decoder and store_batch")
struct PoisonNumberTests {
    /// Literals at and beyond the edges, written into every key the rollups sum or average.
    static let extremes = [
        "1e15", "-1e15", "1000000000000000", "999999999999999.9", "1000000000000000.5", "-1000000000000001",
        "1e308", "-1e308", "1.7976931348623157e308", "-1.7976931348623157e308", "5e-324", "-5e-324",
        "2.2250738585072014e-308", "-0.0", "0", "1e-300",
    ]

    /// What the decoder must do with a literal in a summed key: the bound it breaks, or nil
    /// when it stores. The number's own bounds first, then the key's plausible range
    /// (`Plausibility`: a step count or a workout's distance is never negative, a heart rate
    /// is more than 0 and less than 400, a body mass more than 0).
    static func brokenBound(_ literal: String, plausible range: PlausibleRange?) -> String? {
        let value = Double(literal)!
        if value != 0 && abs(value) < 1e-300 { return "1e-300" }
        if abs(value) > 1e15 { return "±1e15" }
        if let range, !range.contains(value) { return "plausible range" }
        return nil
    }

    static let person = "poison"
    static let phone = "com.apple.health.11111111-2222-4333-8444-555555555555"
    static let watch = "com.apple.health.66666666-7777-4888-9999-AAAAAAAAAAAA"
    /// 2026-03-02T00:00:00Z, a Monday; samples fall on its first four days (UTC+1).
    static let monday: Int64 = 1_772_409_600_000

    /// A sample and the key and bound it must be quarantined for, if any.
    struct Drawn {
        var sample: DemoSample
        var expected: (key: String, bound: String)?
    }

    @Test("random batches of ordinary and extreme numbers: every batch stores, extremes quarantined with their reason, rollups equal a recompute, every view answers",
          arguments: [UInt64(0xB00B_0001), UInt64(0xB00B_0002), UInt64(0xB00B_0003)])
    func randomBatches(seed: UInt64) throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let store = BatchStore(pool: pool)
            try db.query("SELECT health.set_time_zone($1, 'Europe/Berlin')", [Self.person])
            var rng = SeededGenerator(seed: seed)
            var random = SeededRandom(seed: seed)
            var stored: Set<String> = []
            var quarantined: [String: (key: String, bound: String)] = [:]

            var batches = (1...24).map { _ in (0..<Int.random(in: 1...40, using: &rng)).map { _ in Self.draw(&rng, &random) } }
            // Many 1e15 values in one day key: the sum of millions of them stays finite (a negative
            // step count is implausible, quarantined like the draws below).
            batches.append((0..<600).map { n in
                let start = Self.monday + Int64(n) * 60_000
                return Drawn(sample: DemoSample(uuid: random.uuid(), type: .steps, source: Self.watch, start: start, end: start + 60_000,
                                                value: "1e15"), expected: nil)
            })
            for (n, drawn) in batches.enumerated() {
                let envelope = DemoEnvelope(exportId: random.uuid(), generatedAt: Self.monday + 5 * 86_400_000, batchSequence: 1,
                                            windowStart: Self.monday - 86_400_000, windowEnd: Self.monday + 5 * 86_400_000,
                                            occasionStart: Self.monday, occasionEnd: Self.monday + 5 * 86_400_000, offsetMinutes: 60)
                let format: PayloadFormat = n % 2 == 0 ? .json : .csv
                let samples = drawn.map(\.sample)
                let body = format == .json ? DemoEncoder.json(envelope, samples) : DemoEncoder.csv(envelope, samples)
                guard case .batches(let decoded) = try PayloadDecoder.decode(body, format: format) else {
                    Issue.record("batch \(n) decoded as a probe")
                    continue
                }
                let reasons = decoded.flatMap(\.quarantined).map(\.reason)
                for (index, item) in drawn.enumerated() {
                    guard let expected = item.expected else { continue }
                    let quarantine = decoded.flatMap(\.quarantined).first { $0.raw.contains(item.sample.uuid) }
                    #expect(quarantine != nil, "seed \(seed) batch \(n) sample \(index): \(expected.key) should be quarantined")
                }
                #expect(reasons.count == drawn.filter { $0.expected != nil }.count, "seed \(seed) batch \(n): \(reasons)")

                // The whole point: store_batch (with the rollups) takes whatever the decoder passed.
                let counts = try store.store(decoded, person: Self.person, origin: .http, bodySHA256: SHA256.hash(body))
                #expect(counts.samples == drawn.count)
                #expect(counts.quarantined == reasons.count)
                for item in drawn {
                    if let expected = item.expected { quarantined[item.sample.uuid] = expected } else { stored.insert(item.sample.uuid) }
                }
            }

            // Good samples stored, extremes quarantined with a reason naming the key and the bound.
            let held = Set(try db.query("SELECT upper(uuid::text) FROM health_store.samples WHERE person = $1", [Self.person]).map { $0[0] ?? "" })
            #expect(held == stored, "seed \(seed): \(held.symmetricDifference(stored).prefix(5))")
            let kept = try db.query("SELECT reason, raw FROM health.quarantine WHERE person = $1", [Self.person])
            #expect(kept.count == quarantined.count)
            for row in kept {
                let raw = row[1] ?? ""
                guard let (uuid, expected) = quarantined.first(where: { raw.contains($0.key) }) else {
                    Issue.record("quarantined sample not expected: \(row[0] ?? "")")
                    continue
                }
                let reason = row[0] ?? ""
                #expect(reason.hasPrefix(expected.key + " ") && reason.contains(expected.bound), "\(uuid): \(reason)")
            }

            // Rollups equal a recompute; every public view answers.
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [Self.person], as: Int.self) == 0)
            let views = try db.query("SELECT table_name FROM information_schema.views WHERE table_schema = 'health' ORDER BY 1").map { $0[0] ?? "" }
            #expect(views.count >= 10)
            let connection = try db.connect()
            defer { connection.close() }
            for view in views {
                // Names come from the catalog, not from input.
                #expect(throws: Never.self, "health.\(view)") { try connection.query("SELECT * FROM health.\"\(view)\"") }
            }
            let steps = try db.scalar("SELECT max(steps) FROM health.daily_summary WHERE person = $1", [Self.person], as: Double.self)
            #expect((steps ?? 0) >= 1e17, "the day of 600 values of 1e15 sums to about 6e17")
        }
    }

    /// One sample: mostly ordinary, now and then an extreme literal in one of its summed keys.
    static func draw(_ rng: inout SeededGenerator, _ random: inout SeededRandom) -> Drawn {
        let start = monday + Int64.random(in: 0..<(4 * 86_400_000), using: &rng)
        let source = Bool.random(using: &rng) ? phone : watch
        func number(_ range: PlausibleRange?) -> (String, String?) {
            let literal = Int.random(in: 0..<10, using: &rng) < 4 ? extremes.randomElement(using: &rng)!
                : DemoNumber.text(Double.random(in: 0...2000, using: &rng), decimals: 2)
            return (literal, brokenBound(literal, plausible: range))
        }
        switch Int.random(in: 0..<5, using: &rng) {
        case 0, 1, 2:
            let type = [DemoType.steps, .heartRate, .bodyMass][Int.random(in: 0..<3, using: &rng)]
            let (value, bound) = number(Plausibility.range(of: type.identifier))
            return Drawn(sample: DemoSample(uuid: random.uuid(), type: type, source: source, start: start, end: start + 60_000, value: value),
                         expected: bound.map { ("value", $0) })
        case 3:
            // A workout: the first of its three summed keys to break a bound names the reason.
            let totals = Plausibility.workoutTotals
            let (duration, d) = number(totals), (distance, m) = number(totals), (energy, e) = number(totals)
            let expected: (String, String)? = d.map { ("durationSeconds", $0) } ?? m.map { ("distanceMeters", $0) } ?? e.map { ("activeEnergyKilocalories", $0) }
            return Drawn(sample: DemoSample(uuid: random.uuid(), type: .workout, source: source, start: start, end: start + 1_800_000,
                                            activityType: 37, activityName: "running", durationSeconds: duration, distanceMeters: distance,
                                            activeEnergyKilocalories: energy),
                         expected: expected)
        default:
            let stage = Int.random(in: 0...5, using: &rng)
            return Drawn(sample: DemoSample(uuid: random.uuid(), type: .sleep, source: source, start: start, end: start + 1_200_000,
                                            value: String(stage), name: ["inBed", "asleepUnspecified", "awake", "asleepCore", "asleepDeep", "asleepREM"][stage]),
                         expected: nil)
        }
    }
}
