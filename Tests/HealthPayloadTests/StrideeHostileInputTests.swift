import DemoData
import Foundation
import FuzzSupport
import HealthPayload
import Testing
import TestSupport

/// What a Stridee decoder answered, after the answer's promises were checked.
enum StrideeOutcome: Equatable {
    case workout
    case items(Int)
    case refused(StrideePayloadError.Reason)
}

/// Decodes `bytes` as a workout and checks what a decoded workout promises: upper-case UUID,
/// end not before start, duration ≥ 0, columns of one length sorted by time, every number finite
/// with |x| ≤ 1e15, lat/lon in range, and a `headerJSON` object without the five arrays that
/// holds no NUL and no non-finite number. Errors: a short description.
func checkedWorkout(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> StrideeOutcome {
    let w: StrideeWorkout
    do {
        w = try StrideeDecoder.decodeWorkout(bytes)
    } catch {
        #expect(!error.description.isEmpty && error.description.count < 400, "\(error.description.prefix(120))", sourceLocation: sourceLocation)
        return .refused(error.reason)
    }
    #expect(w.uuid == w.uuid.uppercased() && w.uuid.utf8.count == 36, sourceLocation: sourceLocation)
    #expect(w.endDate.microsecondsSinceEpoch >= w.startDate.microsecondsSinceEpoch, sourceLocation: sourceLocation)
    #expect(w.duration >= 0 && w.duration <= 1e15, sourceLocation: sourceLocation)
    func bounded(_ values: [Double]) -> Bool { values.allSatisfy { $0.isFinite && $0.magnitude <= 1e15 } }
    func sorted(_ times: [Int64]) -> Bool { zip(times, times.dropFirst()).allSatisfy { $0 <= $1 } }
    for stream in [w.heartRate, w.runningPower, w.cyclingPower, w.cyclingCadence] {
        #expect(stream.times.count == stream.values.count && sorted(stream.times) && bounded(stream.values), sourceLocation: sourceLocation)
    }
    let r = w.route
    let optionals = [r.altitudes, r.speeds, r.courses, r.horizontalAccuracies, r.verticalAccuracies]
    #expect([r.latitudes.count, r.longitudes.count] + optionals.map(\.count) == Array(repeating: r.times.count, count: 7), sourceLocation: sourceLocation)
    #expect(sorted(r.times) && r.latitudes.allSatisfy { abs($0) <= 90 } && r.longitudes.allSatisfy { abs($0) <= 180 }, sourceLocation: sourceLocation)
    #expect(optionals.allSatisfy { bounded($0.compactMap { $0 }) }, sourceLocation: sourceLocation)
    let header = try? JSONSerialization.jsonObject(with: Data(w.headerJSON.utf8)) as? [String: Any]
    #expect(header.map { isPostgresSafe($0) && Set($0.keys).isDisjoint(with: ["heartRate", "runningPower", "cyclingPower", "cyclingCadence", "route"]) } == true,
            "headerJSON: \(w.headerJSON.prefix(200))", sourceLocation: sourceLocation)
    return .workout
}

/// Decodes `bytes` as a wellness body and checks what decoded items promise: at most 2,000, each
/// `json` an object of its own kind holding no NUL and no non-finite number, end not before start.
func checkedWellness(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> StrideeOutcome {
    let items: [WellnessItem]
    do {
        items = try StrideeDecoder.decodeWellness(bytes)
    } catch {
        #expect(!error.description.isEmpty && error.description.count < 400, "\(error.description.prefix(120))", sourceLocation: sourceLocation)
        return .refused(error.reason)
    }
    #expect(items.count <= StrideeDecoder.maxWellnessItems, sourceLocation: sourceLocation)
    for item in items {
        let object = try? JSONSerialization.jsonObject(with: Data(item.json.utf8)) as? [String: Any]
        #expect(object.map(isPostgresSafe) == true && object?["kind"] as? String == item.kind.rawValue, "json: \(item.json.prefix(200))", sourceLocation: sourceLocation)
        #expect(item.end.map { $0.microsecondsSinceEpoch >= item.start.microsecondsSinceEpoch } ?? true, sourceLocation: sourceLocation)
        #expect(item.tzOffsetSeconds.map { abs($0) <= 64_800 } ?? true, sourceLocation: sourceLocation)
    }
    return .items(items.count)
}

@Suite("Stridee hostile input")
struct StrideeHostileInputTests {
    @Test("seeded random mutations of the Stridee fixtures never crash or hang and keep every promise")
    func mutationFuzz() throws {
        var seeds: [[UInt8]] = []
        for name in ["stridee-workout.good.json", "stridee-wellness.good.json", "stridee-relay-example.bad.json", "stridee-relay-wellness.bad.json"] {
            seeds.append(try Fixture.bytes(name))
        }
        seeds.append(StrideeBodies.ride(seconds: 5, powerEvery: 2))
        seeds.append(StrideeBodies.wellness(count: 9))
        let tokens: [[UInt8]] = [
            "\\u0000", "\\ud800", "1e400", "1e-400", "1e16", "-0", "null", "true", "\"\"", ",", "{", "}", "[", "]", ":", "\"",
            "95.2", "-180.5", "2147483648", "\"stress\"", "\"format\":\"x\",", "Z", "+02:00", "+0200", ".123456789", "\"t\":",
            "\"kind\":\"pulse_ox\",", "\"samples\":[{\"t\":\"2026-10-02T01:00:00Z\",\"v\":101}],", "😀",
        ].map { Array($0.utf8) } + [[0], [0xFF], [0xC3], [0xED, 0xA0, 0x80]]
        var rng = SeededGenerator(seed: 0x57_21DE)
        var outcomes: Set<String> = []
        for _ in 0..<6_000 {
            var body = seeds.randomElement(using: &rng)!
            for _ in 0..<(Bool.random(using: &rng) ? 1 : Int.random(in: 2...3, using: &rng)) {
                let at = body.isEmpty ? 0 : Int.random(in: 0..<body.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !body.isEmpty: body[at] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                case 1: body.insert(contentsOf: tokens.randomElement(using: &rng)!, at: at)
                case 2 where !body.isEmpty: body.removeSubrange(at..<min(body.count, at + Int.random(in: 1...12, using: &rng)))
                default:
                    let chunk = body[at..<min(body.count, at + Int.random(in: 1...48, using: &rng))]
                    body.insert(contentsOf: chunk, at: Int.random(in: 0...body.count, using: &rng))
                }
            }
            switch checkedWorkout(body) {
            case .workout: outcomes.insert("workout")
            case .refused(let reason): outcomes.insert("workout refused \(reason)")
            case .items: break
            }
            switch checkedWellness(body) {
            case .items: outcomes.insert("items")
            case .refused(let reason): outcomes.insert("wellness refused \(reason)")
            case .workout: break
            }
        }
        // Every answer is reached, or the mutations are too weak to mean anything.
        #expect(outcomes.isSuperset(of: ["workout", "workout refused invalid", "workout refused unsupportedFormat",
                                         "items", "wellness refused invalid", "wellness refused unsupportedFormat"]), "\(outcomes.sorted())")
    }

    @Test("a value of control characters is named in a message of at most 400 characters (a fuzzer's find: 60 DELs in serverType made 406)")
    func escapedValuesStayShort() throws {
        let body = "{\"format\": \"healthkit.v1\", \"uuid\": \"5D1E8C1A-2F7B-4E0C-9A43-71C6B0F8D2E4\", \"activityType\": 37, "
            + "\"serverType\": \"RU" + String(repeating: "\u{7F}", count: 60) + "NNING\"}"
        #expect(checkedWorkout(Array(body.utf8)) == .refused(.invalid))
        do {
            _ = try StrideeDecoder.decodeWorkout(Array(body.utf8))
        } catch {
            #expect(error.description.hasPrefix("serverType"))
            #expect(error.description.count <= 400, "\(error.description.count) characters")
            #expect(error.description.contains("RU\\u{7f}"), "the value's start is named, escaped")
        }
    }

    @Test("the seed fixtures keep the promises")
    func fixtures() throws {
        #expect(checkedWorkout(try Fixture.bytes("stridee-workout.good.json")) == .workout)
        #expect(checkedWellness(try Fixture.bytes("stridee-wellness.good.json")) == .items(3))
        #expect(checkedWorkout(StrideeBodies.ride(seconds: 600, powerEvery: 3)) == .workout)
    }
}
