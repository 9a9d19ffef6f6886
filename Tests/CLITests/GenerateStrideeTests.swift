import Foundation
import HealthPayload
import Testing
import TestSupport

/// `generate --stridee-out`: the same person's Stridee bodies beside the healthd ones.
@Suite("generate --stridee-out")
struct GenerateStrideeTests {
    @Test("every body decodes; each workout body carries the uuid of a healthd workout sample; the same seed writes the same bytes")
    func twins() throws {
        let base = NSTemporaryDirectory() + "hw-generate-stridee-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        for run in ["a", "b"] {
            let out = try CLIProcess.run(["generate", "--days", "21", "--start", "2026-09-01", "--seed", "7",
                                          "--out", "\(base)/\(run)/backlog", "--stridee-out", "\(base)/\(run)/stridee"])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("Stridee workout and 21 wellness bodies into \(base)/\(run)/stridee"), "\(out.stderr)")
        }
        let a = try GenerateCLITests.tree("\(base)/a/stridee"), b = try GenerateCLITests.tree("\(base)/b/stridee")
        #expect(a == b)
        let healthd = try GenerateCLITests.tree("\(base)/a/backlog").values.map { String(decoding: $0, as: UTF8.self) }.joined()
        var workouts = 0, routes = 0
        for (name, data) in a {
            if name.contains("-workout-") {
                let workout = try StrideeDecoder.decodeWorkout(Array(data))
                #expect(name == "\(workout.localDate)-workout-\(workout.uuid).json")
                #expect(healthd.contains("\"uuid\":\"\(workout.uuid)\""), "\(name) has a healthd twin")
                #expect(!workout.heartRate.isEmpty)
                if !workout.route.isEmpty { routes += 1 }
                workouts += 1
            } else {
                #expect(name.hasSuffix("-wellness.json"))
                let items = try StrideeDecoder.decodeWellness(Array(data))
                #expect(items.contains { $0.kind == .daily } && items.contains { $0.kind == .sleep })
                #expect(items.allSatisfy { "\($0.calendarDate)-wellness.json" == name || $0.kind != .daily })
            }
        }
        #expect(workouts >= 4 && routes >= 1)
    }

    @Test("--stridee-out with no folder is a usage error")
    func emptyFolder() throws {
        let out = try CLIProcess.run(["generate", "--days", "1", "--stridee-out", ""])
        #expect(out.status == 64)
        #expect(out.stderr.contains("--stridee-out"))
    }
}
