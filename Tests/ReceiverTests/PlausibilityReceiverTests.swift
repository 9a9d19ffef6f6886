import Foundation
import Testing
import TestSupport

/// The plausibility bounds over real HTTP: implausible values are quarantined (healthd) or refused with
/// `400` naming the field (Stridee), nothing of a refused body stored; and the wellness answer
/// counts the rows stored.
@Suite("Plausibility over HTTP")
struct PlausibilityReceiverTests {
    @Test("a healthd heart rate of -5 and one dated 1969 are quarantined with their reasons, the good one stored, 200")
    func healthd() throws {
        try withReceiver { receiver, db in
            func heart(_ n: Int, _ value: String, start: String = "2026-08-21T10:25:30.000+02:00") -> String {
                Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-00000000000\(n)", type: "HKQuantityTypeIdentifierHeartRate", group: "heart",
                                start: start, value: value, unit: "count/min")
            }
            let answer = try receiver.post(Bodies.json(samples: [heart(1, "-5"), heart(2, "72"), heart(3, "70", start: "1969-12-31T23:00:00.000Z")]))
            #expect(answer.status == 200)
            #expect(json(answer)["inserted"] as? Int == 1 && json(answer)["quarantined"] as? Int == 2)
            #expect(try cells(db, "SELECT position::text, reason FROM health.quarantine ORDER BY position").map { $0.map { $0 ?? "" } } == [
                ["1", "value -5 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"],
                ["3", "start is before 1970-01-01"],
            ])
            #expect(try db.scalar("SELECT heart_rate_mean FROM health.daily_summary", as: Double.self) == 72)
        }
    }

    @Test("a healthd sample that ends before it starts is quarantined, counted nowhere: a night's reversed segment takes no minutes from its source")
    func reversed() throws {
        try withReceiver { receiver, db in
            func core(_ n: Int, source: String, start: String, end: String) -> String {
                #"{"uuid":"A1B2C3D4-0000-4000-8000-00000000001\#(n)","id":"c\#(n)","type":"HKCategoryTypeIdentifierSleepAnalysis","group":"sleep","source":"\#(source)","start":"\#(start)","end":"\#(end)","kind":"category","value":3,"name":"asleepCore"}"#
            }
            let answer = try receiver.post(Bodies.json(samples: [
                core(1, source: "W", start: "2026-08-26T03:00:00.000Z", end: "2026-08-26T02:00:00.000Z"),
                core(2, source: "W", start: "2026-08-26T04:00:00.000Z", end: "2026-08-26T06:00:00.000Z"),
                core(3, source: "V", start: "2026-08-26T04:00:00.000Z", end: "2026-08-26T05:30:00.000Z"),
            ]))
            #expect(answer.status == 200 && json(answer)["inserted"] as? Int == 2 && json(answer)["quarantined"] as? Int == 1)
            #expect(try cells(db, "SELECT position::text, reason FROM health.quarantine").map { $0.map { $0 ?? "" } } == [["1", "end is before start"]])
            #expect(try cells(db, "SELECT source, asleep_min::text FROM health.daily_sleep").map { $0.map { $0 ?? "" } } == [["W", "120"]])
        }
    }

    @Test("the audit's Stridee workouts are 400 naming the field and store nothing: a negative heart rate, a negative distance, route points of year 1 and 9999",
          arguments: [
            (["heartRate": "[{\"t\":\"2026-10-01T06:02:16Z\",\"v\":-80}]"], "heartRate[0].v: -80 is outside its plausible range: > 0 and < 400"),
            (["totalDistanceMeters": "-8412.6"], "totalDistanceMeters: -8412.6 is outside its plausible range: ≥ 0"),
            (["route": "[" + StrideeBody.point(t: "0001-01-01T00:00:00Z") + "]"], "route[0].t: \"0001-01-01T00:00:00Z\" is before 1970-01-01"),
            (["route": "[" + StrideeBody.point() + "," + StrideeBody.point(t: "9999-12-31T00:00:00Z") + "]"],
             "route[1].t: \"9999-12-31T00:00:00Z\" is after the day after tomorrow"),
          ] as [([String: String?], String)])
    func strideeWorkout(members: [String: String?], message: String) throws {
        try withStridee { client, db in
            let answer = try client.send("POST", StrideePaths(person: client.person, relay: true).workouts, StrideeBody.workout(members))
            #expect(answer.status == 400)
            #expect((json(answer)["error"] as? String)?.hasPrefix(message) == true, "\(answer.bodyText)")
            #expect(try strideeCounts(db) == nothingStored)
        }
    }

    @Test("two wellness items with the same identity (person, kind, startTime) answer items: 1, one row, the later kept")
    func wellnessIdentity() throws {
        try withStridee { client, db in
            let first = StrideeBody.item("daily", ["steps": "100"])
            let later = StrideeBody.item("daily", ["steps": "200", "startTime": "\"2026-10-01T00:00:00+02:00\""])
            let answer = try client.send("POST", StrideePaths(person: client.person, relay: true).wellness, StrideeBody.wellness([first, later]))
            #expect(answer.status == 202)
            #expect(answer.bodyText == #"{"items":1,"status":"active"}"#)
            #expect(try cells(db, "SELECT item->>'steps' FROM health_store.wellness_items").map { $0[0] } == ["200"])
        }
    }

    @Test("a wellness resting heart rate of 0 refuses the whole body, naming the item's field")
    func wellnessHeartRate() throws {
        try withStridee { client, db in
            let answer = try client.send("POST", StrideePaths(person: client.person, relay: true).wellness, StrideeBody.wellness([
                StrideeBody.item("daily", ["steps": "100"]),
                StrideeBody.item("daily", ["startTime": "\"2026-10-01T22:00:00Z\"", "restingHeartRate": "0"]),
            ]))
            #expect(answer.status == 400)
            #expect(json(answer)["error"] as? String == "items[1].restingHeartRate: 0 is outside its plausible range: > 0 and < 400")
            #expect(try strideeCounts(db) == nothingStored)
        }
    }
}
