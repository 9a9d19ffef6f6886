import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("Receiver under database faults")
struct ReceiverFaultTests {
    static func batch(_ n: Int) -> [UInt8] {
        let samples = (0..<50).map { i in
            Bodies.quantity(uuid: String(format: "B%07d-0000-4000-8000-%012d", n, i), start: "2026-08-21T10:00:00.000+02:00", value: "\(i)")
        }
        return Bodies.json(samples: samples, exportId: String(format: "B%07d-0000-4000-8000-000000000000", n), sequence: 1)
    }

    @Test("PostgreSQL stopped: 503 with Retry-After and nothing partial; back up: the same batches store fully, no restart")
    func databaseDown() throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let db = try cluster.freshDatabase(label: "down")
        let receiver = try RunningReceiver(connectionString: db.connectionString)
        defer { receiver.stop() }
        #expect(try receiver.post(Self.batch(0)).status == 200)

        try cluster.stop()
        for n in 1...3 {
            let answer = try receiver.post(Self.batch(n))
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "60")
        }
        #expect(try receiver.get("/healthz").status == 503)

        try cluster.start()
        #expect(try receiver.get("/healthz").status == 200)
        for n in 1...3 {
            let answer = try receiver.post(Self.batch(n))
            #expect(answer.status == 200)
            #expect(json(answer)["inserted"] as? Int == 50)
        }
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 200)
        #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 4)
    }

    @Test("a read-only database answers 503, never 4xx, and stores nothing")
    func readOnly() throws {
        try withReceiver { receiver, db in
            try db.query("ALTER DATABASE \(db.name) SET default_transaction_read_only = on")
            // Pooled connections opened before the change keep the old setting; a fresh pool sees it.
            let fresh = try RunningReceiver(connectionString: db.connectionString)
            defer { fresh.stop() }
            let answer = try fresh.post(Self.batch(7))
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "60")
            let admin = try db.connect()
            defer { admin.close() }
            try admin.query("SET default_transaction_read_only = off")
            try admin.query("ALTER DATABASE \(db.name) RESET default_transaction_read_only")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }
}
