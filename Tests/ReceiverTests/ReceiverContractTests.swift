import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// docs/receiver.md ("Answers") and the reference's "Check it before you hand it over", over real HTTP.
@Suite("Receiver contract")
struct ReceiverContractTests {
    static let exampleUUIDs = ["a1b2c3d4-0000-4000-8000-000000000001", "a1b2c3d4-0000-4000-8000-000000000002",
                               "a1b2c3d4-0000-4000-8000-000000000003"]

    @Test("both probes answer 200 and store nothing: no sample, no delivery")
    func probes() throws {
        try withReceiver { receiver, db in
            let jsonProbe = try receiver.post(Bodies.fixture("probe.json"))
            #expect(jsonProbe.status == 200)
            let csvProbe = try receiver.post(Bodies.fixture("probe.csv"), contentType: "text/csv; charset=utf-8")
            #expect(csvProbe.status == 200)
            let held = try counts(db)
            #expect(held.samples == 0 && held.deliveries == 0)
        }
    }

    @Test("the worked example as JSON stores 3 samples; as CSV after it, adds none (3 duplicates)")
    func workedExampleJSONThenCSV() throws {
        try withReceiver { receiver, db in
            let first = try receiver.post(Bodies.fixture("contract-example.json"))
            #expect(first.status == 200)
            #expect(json(first)["samples"] as? Int == 3)
            #expect(json(first)["inserted"] as? Int == 3)
            #expect(json(first)["duplicates"] as? Int == 0)
            let second = try receiver.post(Bodies.fixture("contract-example.csv"), contentType: "text/csv; charset=utf-8")
            #expect(second.status == 200)
            #expect(json(second)["inserted"] as? Int == 0)
            #expect(json(second)["duplicates"] as? Int == 3)
            #expect(json(second)["replaced"] as? Int == 0)
            #expect(try counts(db).samples == 3)
            #expect(try counts(db).deliveries == 2)
            let stored = try db.query("""
                SELECT uuid::text, type, grp, kind, source, value, unit, category_name, activity_type, activity_name,
                       duration_s, distance_m, energy_kcal, day::text, payload ? 'distanceMeters', payload->>'uuid'
                FROM health_store.samples ORDER BY uuid
                """)
            #expect(stored.map { $0[0] } == Self.exampleUUIDs)
            #expect(stored[0][1] == "HKQuantityTypeIdentifierStepCount")
            #expect(try stored[0].decode(5, as: Double.self) == 42)
            #expect(stored[0][6] == "count")
            #expect(stored[0][13] == "2026-08-21")
            #expect(stored[1][7] == "asleepDeep")
            #expect(try stored[1].decode(5, as: Double.self) == 4)
            #expect(stored[2][9] == "running")
            #expect(try stored[2].decode(8, as: Int.self) == 37)
            #expect(try stored[2].decode(10, as: Double.self) == 1800)
            #expect(try stored[2].decode(11, as: Double.self) == 5000)
            #expect(try stored[2].decode(12, as: Double.self) == 320)
            #expect(stored[2][5] == nil, "a workout has no value")
            #expect(stored[2][14] == "t")
            #expect(stored[0][15] == "A1B2C3D4-0000-4000-8000-000000000001", "the payload keeps the uuid as sent")
            let delivery = try #require(db.query("""
                SELECT origin, format, export_id::text, batch_sequence, is_final, basis, samples, inserted, duplicates,
                       length(body_sha256), window_start = '2026-08-20T12:00:00.000+02:00'::timestamptz
                FROM health_store.deliveries ORDER BY delivery_id LIMIT 1
                """).first)
            #expect(delivery[0] == "http")
            #expect(delivery[1] == "json")
            #expect(delivery[2] == "6c7f1e22-1b3d-4a5e-9f00-2c1d4e5a6b70")
            #expect(delivery[3] == "1" && delivery[4] == "t" && delivery[5] == "window")
            #expect(delivery[6] == "3" && delivery[7] == "3" && delivery[8] == "0")
            #expect(delivery[9] == "32" && delivery[10] == "t")
        }
    }

    @Test("the same batch twice: the second answer is all duplicates and every row is unchanged")
    func sameBatchTwice() throws {
        try withReceiver { receiver, db in
            let body = try Bodies.fixture("contract-example.json")
            #expect(try receiver.post(body).status == 200)
            let before = try db.query("SELECT t::text FROM health_store.samples t ORDER BY uuid").map { $0[0] }
            let again = try receiver.post(body)
            #expect(again.status == 200)
            #expect(json(again)["inserted"] as? Int == 0)
            #expect(json(again)["duplicates"] as? Int == 3)
            #expect(json(again)["replaced"] as? Int == 0)
            #expect(try db.query("SELECT t::text FROM health_store.samples t ORDER BY uuid").map { $0[0] } == before)
        }
    }

    @Test("a CSV with a quoted comma, a quote and a newline in source, empty cells and an appended column")
    func awkwardCSV() throws {
        try withReceiver { receiver, db in
            let envelope = "1,6C7F1E22-1B3D-4A5E-9F00-2C1D4E5A6B70,2026-08-21T12:00:00.000+02:00,1,true,2026-08-20T12:00:00.000+02:00,2026-08-21T12:00:00.000+02:00"
            let tail = "window,2026-08-20T12:00:00.000+02:00,2026-08-21T12:00:00.000+02:00"
            let csv = Bodies.csvHeader + ",heartRateContext\n"
                + "\(envelope),B1B2C3D4-0000-4000-8000-000000000001,\(String(repeating: "b", count: 64)),HKQuantityTypeIdentifierStepCount,activity,\"Zoë's \"\"Watch\"\", left\nwrist\",2026-08-21T10:00:00.000+02:00,2026-08-21T10:05:00.000+02:00,quantity,120,count,,,,,,,\(tail),sedentary\n"
                + "\(envelope),B1B2C3D4-0000-4000-8000-000000000002,\(String(repeating: "c", count: 64)),HKWorkoutTypeIdentifier,workouts,com.apple.Health,2026-08-21T07:00:00.000+02:00,2026-08-21T07:30:00.000+02:00,workout,,,,37,,1800,,,\(tail),\n"
            let answer = try receiver.post(Array(csv.utf8), contentType: "text/csv; charset=utf-8")
            #expect(answer.status == 200, "\(answer.bodyText)")
            #expect(json(answer)["inserted"] as? Int == 2)
            let rows = try db.query("SELECT source, payload::text, payload ? 'distanceMeters', payload ? 'activityName', payload ? 'value', distance_m, activity_name FROM health_store.samples ORDER BY uuid")
            #expect(rows[0][0] == "Zoë's \"Watch\", left\nwrist")
            let steps = try JSONSerialization.jsonObject(with: Data(rows[0][1]!.utf8)) as? [String: Any]
            #expect(steps?["heartRateContext"] as? String == "sedentary")
            #expect(steps?["value"] as? Int == 120)
            #expect(steps?["name"] == nil && steps?["activityType"] == nil)
            #expect(rows[1][2] == "f" && rows[1][3] == "f" && rows[1][4] == "f")
            #expect(rows[1][5] == nil, "an empty distance is absent, never 0")
            #expect(rows[1][6] == nil)
        }
    }

    @Test("schemaVersion 2 → 400 and nothing stored", arguments: ["json", "csv"])
    func schemaVersionTwo(format: String) throws {
        try withReceiver { receiver, db in
            let answer: HTTPTestResponse
            if format == "json" {
                answer = try receiver.post(Bodies.json(samples: [Bodies.quantity(uuid: UUID().uuidString, start: "2026-08-21T10:00:00.000+02:00", value: "1")], schemaVersion: "2"))
            } else {
                let csv = String(decoding: try Bodies.fixture("contract-example.csv"), as: UTF8.self)
                    .replacingOccurrences(of: "\n1,6C7F", with: "\n2,6C7F")
                answer = try receiver.post(Array(csv.utf8), contentType: "text/csv")
            }
            #expect(answer.status == 400)
            #expect((json(answer)["error"] as? String)?.contains("schemaVersion") == true)
            let held = try counts(db)
            #expect(held.samples == 0 && held.deliveries == 0)
        }
    }

    @Test("two samples with one id and two uuids are both stored")
    func sameIdTwoUUIDs() throws {
        try withReceiver { receiver, db in
            let id = String(repeating: "d", count: 64)
            let body = Bodies.json(samples: [
                Bodies.quantity(uuid: "C1000000-0000-4000-8000-000000000001", type: "HKQuantityTypeIdentifierHeartRate", group: "heart",
                                start: "2026-08-21T10:00:00.000+02:00", value: "61", unit: "count/min", id: id),
                Bodies.quantity(uuid: "C1000000-0000-4000-8000-000000000002", type: "HKQuantityTypeIdentifierHeartRate", group: "heart",
                                start: "2026-08-21T10:00:00.000+02:00", value: "61", unit: "count/min", id: id),
            ])
            let answer = try receiver.post(body)
            #expect(json(answer)["inserted"] as? Int == 2)
            #expect(try counts(db).samples == 2)
        }
    }

    @Test("a malformed sample is quarantined with its reason while the rest of its batch is stored")
    func quarantine() throws {
        try withReceiver { receiver, db in
            let bad = #"{"end":"2026-08-21T10:00:00.000+02:00","group":"activity","id":"x","kind":"quantity","source":"s","start":"2026-08-21T10:00:00.000+02:00","type":"HKQuantityTypeIdentifierStepCount","unit":"count","uuid":"not-a-uuid","value":5}"#
            let body = Bodies.json(samples: [
                Bodies.quantity(uuid: "D1000000-0000-4000-8000-000000000001", start: "2026-08-21T10:00:00.000+02:00", value: "10"),
                bad,
            ])
            let answer = try receiver.post(body)
            #expect(answer.status == 200)
            #expect(json(answer)["samples"] as? Int == 2)
            #expect(json(answer)["inserted"] as? Int == 1)
            #expect(json(answer)["quarantined"] as? Int == 1)
            let row = try #require(db.query("SELECT position, reason, raw FROM health_store.quarantine").first)
            #expect(row[0] == "2")
            #expect(row[1]?.contains("uuid") == true)
            #expect(row[2] == bad)
            #expect(try counts(db).samples == 1)
        }
    }

    @Test("a uuid repeated inside one batch is stored once, the later copy winning; the repeat is a duplicate")
    func repeatedInsideBatch() throws {
        try withReceiver { receiver, db in
            let uuid = "E1000000-0000-4000-8000-000000000001"
            let body = Bodies.json(samples: [
                Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "10"),
                Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "20"),
            ])
            let answer = try receiver.post(body)
            #expect(json(answer)["inserted"] as? Int == 1)
            #expect(json(answer)["duplicates"] as? Int == 1)
            #expect(try db.scalar("SELECT value FROM health_store.samples", as: Double.self) == 20)
        }
    }

    @Test("a newer copy with other content replaces the older one and is counted as replaced")
    func replacement() throws {
        try withReceiver { receiver, db in
            let uuid = "E2000000-0000-4000-8000-000000000001"
            _ = try receiver.post(Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "10")]))
            let answer = try receiver.post(Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-22T10:00:00.000+02:00", value: "11")]))
            #expect(json(answer)["replaced"] as? Int == 1)
            #expect(json(answer)["inserted"] as? Int == 0)
            let row = try #require(db.query("SELECT value, day::text, first_received_at <= last_received_at FROM health_store.samples").first)
            #expect(try row.decode(0, as: Double.self) == 11)
            #expect(row[1] == "2026-08-22")
            #expect(row[2] == "t")
        }
    }

    @Test("other content types get 415 and store nothing; parameters on the type are fine")
    func contentTypes() throws {
        try withReceiver { receiver, db in
            let body = try Bodies.fixture("contract-example.json")
            for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
                #expect(try receiver.post(body, contentType: type).status == 415, "\(type ?? "none")")
            }
            #expect(try counts(db).deliveries == 0)
            #expect(try receiver.post(body, contentType: "Application/JSON; charset=utf-8").status == 200)
        }
    }

    @Test("any method but POST on a batch path gets 405 with Allow: POST; never a 3xx")
    func methods() throws {
        try withReceiver { receiver, _ in
            for method in ["GET", "PUT", "DELETE", "PATCH"] {
                let answer = try HTTPTestClient.request(port: receiver.port, method: method, path: "/ingest")
                #expect(answer.status == 405, "\(method)")
                #expect(answer.header("Allow") == "POST")
            }
            #expect(try receiver.get("/healthz/").status == 405)
        }
    }

    @Test("a body over --max-body gets a bare 413 and nothing is stored")
    func tooLarge() throws {
        try withReceiver(maxBody: 64 * 1024) { receiver, db in
            let samples = (0..<400).map { i in
                Bodies.quantity(uuid: String(format: "F1000000-0000-4000-8000-%012d", i), start: "2026-08-21T10:00:00.000+02:00", value: "\(i)")
            }
            let answer = try receiver.post(Bodies.json(samples: samples))
            #expect(answer.status == 413)
            #expect(answer.header("Retry-After") == nil)
            #expect(try counts(db).deliveries == 0)
        }
    }

    @Test("GET /healthz needs no credential; /stats needs one and gives that person's counts")
    func healthAndStats() throws {
        try withReceiver { receiver, db in
            #expect(try receiver.get("/healthz").status == 200)
            _ = try receiver.post(Bodies.fixture("contract-example.json"))
            _ = try receiver.post(Bodies.fixture("contract-example.json"))
            let stats = try receiver.get("/stats")
            #expect(stats.status == 200)
            let object = json(stats)
            #expect(object["person"] as? String == "default")
            #expect(object["samples"] as? Int == 3)
            #expect(object["deliveries"] as? Int == 2)
            #expect(object["duplicates"] as? Int == 3)
            #expect(object["newest_sample_end_at"] as? String == "2026-08-21T08:25:30.000Z")
            #expect((object["last_received_at"] as? String)?.hasSuffix("Z") == true)

            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "alice", label: nil).token
            #expect(try receiver.get("/stats").status == 401)
            #expect(try receiver.get("/healthz").status == 200)
            let alice = try receiver.get("/stats", headers: [("Authorization", "Bearer \(token)")])
            #expect(json(alice)["person"] as? String == "alice")
            #expect(json(alice)["samples"] as? Int == 0)
            #expect(json(alice)["last_received_at"] is NSNull)
        }
    }
}
