import DemoData
import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The text bound, over real HTTP: every client text that can reach an index is bounded where it
/// enters (`TextLimit`, 1,024 UTF-8 bytes). Texts are random letters mixed with multi-byte
/// characters, so PostgreSQL cannot compress an over-long index entry into fitting.
@Suite("Text bounds")
struct TextBoundsTests {
    static let fields = ["type", "source", "unit", "name", "activityName"]

    /// A step-count-like quantity sample (a workout for `activityName`) with `field` set to `text`.
    static func sample(_ field: String, _ text: String, uuid: String) -> DemoSample {
        let start = Bodies.instant("2026-08-21T10:25:30.000+02:00")
        let type = field == "activityName" ? DemoType(identifier: "HKWorkoutTypeIdentifier", group: "workouts", kind: "workout", unit: nil)
            : DemoType(identifier: field == "type" ? text : "HKQuantityTypeIdentifierStepCount", group: "activity", kind: "quantity",
                       unit: field == "unit" ? text : "count")
        var sample = DemoSample(uuid: uuid, type: type, source: field == "source" ? text : "com.apple.Health", start: start.millisecondsSinceEpoch,
                                end: start.millisecondsSinceEpoch, value: type.kind == "workout" ? nil : "42", id: String(repeating: "a", count: 64),
                                offsetMinutes: start.offsetMinutes)
        if field == "name" { sample.name = text }
        if field == "activityName" {
            sample.activityName = text
            sample.activityType = 37
            sample.durationSeconds = "60"
        }
        return sample
    }

    static func body(_ samples: [DemoSample], csv: Bool) -> [UInt8] {
        csv ? DemoEncoder.csv(Bodies.envelope(), samples) : Bodies.json(samples: samples.map { DemoEncoder.object($0) })
    }

    @Test("a healthd sample with a type, source, unit, name or activityName of 1,024 bytes is stored; of 1,025 it is quarantined naming the field and its length, the rest stored, 200 (JSON and CSV)",
          arguments: fields, [false, true])
    func healthdFields(field: String, csv: Bool) throws {
        try withReceiver { receiver, db in
            let longest = RandomText.bytes(1024, seed: 1), refused = RandomText.bytes(1025, seed: 2)
            #expect(longest.count < 1024, "multi-byte characters: bytes are counted, not characters")
            let samples = [Self.sample(field, longest, uuid: "A1B2C3D4-0000-4000-8000-000000000001"),
                           Self.sample(field, refused, uuid: "A1B2C3D4-0000-4000-8000-000000000002")]
            let answer = try receiver.post(Self.body(samples, csv: csv), contentType: csv ? "text/csv" : "application/json")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(json(answer)["inserted"] as? Int == 1)
            #expect(json(answer)["quarantined"] as? Int == 1)
            let stored = try db.query("SELECT uuid::text, payload->>$1 FROM health_store.samples", [field])
            #expect(stored.map { $0[0] } == ["a1b2c3d4-0000-4000-8000-000000000001"])
            #expect(stored.first?[1] == longest)
            #expect(try db.query("SELECT reason, position FROM health_store.quarantine").map { [$0[0], $0[1]] }
                    == [["\(field) is 1025 bytes, at most 1024", "2"]])
        }
    }

    @Test("a sample whose type and source are both 1,024 random bytes fits every index it reaches: stored with its rollups")
    func bothAtTheBound() throws {
        try withReceiver { receiver, db in
            var sample = Self.sample("type", RandomText.bytes(1024, seed: 3), uuid: "A1B2C3D4-0000-4000-8000-000000000003")
            sample.source = RandomText.bytes(1024, seed: 4)
            let answer = try receiver.post(Self.body([sample], csv: false))
            #expect(answer.status == 200)
            #expect(json(answer)["inserted"] as? Int == 1)
            #expect(try db.scalar("SELECT octet_length(type) + octet_length(source) FROM health_store.samples", as: Int.self) == 2048)
            #expect(try db.scalar("SELECT count(*) FROM health_store.rollup_source", as: Int.self) == 1)
        }
    }

    @Test("the audit's batch: 999 good samples and one whose source is 2,800 characters answer 200, 999 stored, 1 quarantined")
    func auditBatch() throws {
        try withReceiver { receiver, db in
            var samples: [String] = []
            for k in 0..<1000 {
                let digits = String(k)
                let uuid = "A1B2C3D4-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
                let source = k == 500 ? RandomText.bytes(2800, seed: 5) : "com.apple.Health"
                samples.append(Bodies.quantity(uuid: uuid, source: source, start: "2026-08-21T10:25:30.000+02:00", value: String(k)))
            }
            let answer = try receiver.post(Bodies.json(samples: samples))
            #expect(answer.status == 200)
            #expect(json(answer)["samples"] as? Int == 1000)
            #expect(json(answer)["inserted"] as? Int == 999)
            #expect(json(answer)["quarantined"] as? Int == 1)
            #expect(try counts(db).samples == 999)
            #expect(try db.scalar("SELECT reason FROM health.quarantine", as: String.self) == "source is 2800 bytes, at most 1024")
            #expect(try db.scalar("SELECT position FROM health.quarantine", as: Int.self) == 501)
        }
    }

    @Test("a Stridee workout's sourceBundleId, sourceName or deviceName of 1,024 bytes is stored (the bundle id as the workout's source); of 1,025 it is 400 naming the field, nothing stored",
          arguments: ["sourceBundleId", "sourceName", "deviceName"])
    func strideeWorkoutFields(field: String) throws {
        try withStridee { client, db in
            let paths = StrideePaths(person: client.person, relay: true)
            let refused = try client.send("POST", paths.workouts, StrideeBody.workout([field: "\"\(RandomText.bytes(1025, seed: 6))\""]))
            #expect(refused.status == 400)
            #expect(json(refused)["error"] as? String == "\(field): 1025 bytes, at most 1024")
            #expect(try strideeCounts(db) == nothingStored)
            let longest = RandomText.bytes(1024, seed: 7)
            let stored = try client.send("POST", paths.workouts, StrideeBody.workout([field: "\"\(longest)\""]))
            #expect(stored.status == 202)
            #expect(try db.scalar("SELECT header->>$1 FROM health_store.stridee_workouts", [field], as: String.self) == longest)
            if field == "sourceBundleId" {
                #expect(try db.scalar("SELECT source FROM health.workouts", as: String.self) == longest)
            }
        }
    }

    @Test("the contract's own example: a sourceBundleId of 3,000 bytes is 400 `sourceBundleId: 3000 bytes, at most 1024`")
    func contractExample() throws {
        try withStridee { client, db in
            let paths = StrideePaths(person: client.person, relay: true)
            let refused = try client.send("POST", paths.workouts, StrideeBody.workout(["sourceBundleId": "\"\(RandomText.bytes(3000, seed: 8))\""]))
            #expect(refused.status == 400)
            #expect(json(refused)["error"] as? String == "sourceBundleId: 3000 bytes, at most 1024")
            #expect(try strideeCounts(db) == nothingStored)
        }
    }

    @Test("a wellness item's id of 1,024 bytes is stored; of 1,025 the body is 400 naming items[1].id, nothing stored")
    func wellnessId() throws {
        try withStridee { client, db in
            let paths = StrideePaths(person: client.person, relay: true)
            let first = StrideeBody.item("daily", ["steps": "100"])
            let refused = try client.send("POST", paths.wellness, StrideeBody.wellness([
                first, StrideeBody.item("daily", ["startTime": "\"2026-10-01T22:00:00Z\"", "id": "\"\(RandomText.bytes(1025, seed: 9))\""]),
            ]))
            #expect(refused.status == 400)
            #expect(json(refused)["error"] as? String == "items[1].id: 1025 bytes, at most 1024")
            #expect(try strideeCounts(db) == nothingStored)
            let longest = RandomText.bytes(1024, seed: 10)
            let stored = try client.send("POST", paths.wellness, StrideeBody.wellness([StrideeBody.item("daily", ["id": "\"\(longest)\""])]))
            #expect(stored.status == 202)
            #expect(try db.scalar("SELECT item_id FROM health_store.wellness_items", as: String.self) == longest)
        }
    }

    @Test("a relay path's account of 1,025 bytes names nobody: 403, nothing stored; person names are at most 64 characters wherever they enter")
    func relayAccount() throws {
        try withStridee { client, db in
            let long = String(repeating: "a", count: 1025)
            let refused = try client.send("POST", "/v1/accounts/\(long)/apple/workouts", StrideeBody.workout())
            #expect(refused.status == 403)
            #expect(try strideeCounts(db) == nothingStored)
            #expect(throws: WarehouseError.self) { try TokenStore(pool: client.receiver.pool).create(person: String(repeating: "b", count: 65), label: nil) }
            let longestName = String(repeating: "c", count: 64)
            let token = try TokenStore(pool: client.receiver.pool).create(person: longestName, label: nil).token
            let owner = StrideeClient(receiver: client.receiver, person: longestName, token: token)
            #expect(try owner.send("POST", StrideePaths(person: longestName, relay: true).workouts, StrideeBody.workout()).status == 202)
        }
    }
}
