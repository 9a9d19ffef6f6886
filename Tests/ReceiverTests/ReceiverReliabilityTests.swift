import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport
import Warehouse

/// The app trusts our status codes: a 2xx must mean stored, and a 5xx must leave the batch
/// absent or complete, never half.
@Suite("Receiver reliability")
struct ReceiverReliabilityTests {
    static func batch(_ n: Int, samples: Int = 100, person: Int = 0) -> [UInt8] {
        let body = (0..<samples).map { i in
            Bodies.quantity(uuid: String(format: "C%03d%04d-0000-4000-8000-%012d", person, n, i), source: i % 2 == 0 ? "phone" : "watch",
                            start: String(format: "2026-08-%02dT10:%02d:00.000+02:00", 1 + n % 28, i % 60), value: "\(i)")
        }
        return Bodies.json(samples: body, exportId: String(format: "C%03d%04d-0000-4000-8000-000000000000", person, n))
    }

    static func uuids(of n: Int, samples: Int = 100, person: Int = 0) -> [String] {
        (0..<samples).map { String(format: "c%03d%04d-0000-4000-8000-%012d", person, n, $0) }
    }

    @Test("the postmaster killed mid-stream: every 2xx batch is complete, every 5xx batch absent or complete; recovery needs no restart")
    func killedMidStream() throws {
        let cluster = try TestCluster(durable: true)
        defer { cluster.destroy() }
        let db = try cluster.freshDatabase(label: "kill")
        let receiver = try RunningReceiver(connectionString: db.connectionString)
        defer { receiver.stop() }

        var statuses: [Int: Int] = [:]
        let killer = BackgroundJob { () -> Bool in
            usleep(400_000)
            try cluster.kill()
            usleep(500_000)
            try cluster.start()
            return true
        }
        // Stream batches until the server is back and five answers in a row are 200.
        var total = 0
        var streak = 0
        while total < 600 && !(killer.isFinished && streak >= 5) {
            let status = (try? receiver.post(Self.batch(total)).status) ?? 0
            statuses[total] = status
            streak = status == 200 ? streak + 1 : 0
            total += 1
            usleep(20_000)
        }
        #expect((try? killer.wait(timeout: 60)?.get()) == true)
        let failed = statuses.filter { $0.value != 200 }
        #expect(failed.allSatisfy { $0.value == 503 || $0.value == 500 }, "\(failed)")
        print("kill mid-stream: \(total - failed.count) batches answered 200, \(failed.count) answered 5xx: \(failed.keys.sorted())")
        // After the restart the receiver serves again by itself.
        #expect(streak >= 5)
        #expect(!failed.isEmpty, "the kill should have failed some batches")

        let held = Set(try db.query("SELECT uuid::text FROM health_store.samples").compactMap { $0[0] })
        for n in 0..<total {
            let mine = Self.uuids(of: n)
            let present = mine.filter { held.contains($0) }.count
            if statuses[n] == 200 {
                #expect(present == mine.count, "batch \(n) answered 200 but holds \(present) samples")
            } else {
                #expect(present == 0 || present == mine.count, "batch \(n) is half stored: \(present)")
            }
        }
        // The app retries what failed; the receiver recovered on its own.
        for n in failed.keys.sorted() {
            #expect(try receiver.post(Self.batch(n)).status == 200)
        }
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == total * 100)
    }

    static func residentKiB(_ pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    @Test("SQL injection attempts in every text field of a sample are stored as text")
    func injectionIsText() throws {
        try withReceiver { receiver, db in
            let evil = "x'); DROP TABLE health_store.samples; --"
            let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [evil]), as: UTF8.self).dropFirst().dropLast()
            let sample = """
                {"end":"2026-08-21T10:00:00.000+02:00","group":\(quoted),"id":\(quoted),"kind":"quantity","source":\(quoted),"start":"2026-08-21T10:00:00.000+02:00","type":\(quoted),"unit":\(quoted),"uuid":"AA000000-0000-4000-8000-000000000001","value":1,\(quoted):\(quoted)}
                """
            let answer = try receiver.post(Bodies.json(samples: [sample]))
            #expect(answer.status == 200)
            let row = try #require(db.query("SELECT id, type, grp, source, payload->>$1 FROM health_store.samples", [evil]).first)
            #expect(row[0] == evil && row[1] == evil && row[2] == evil && row[3] == evil && row[4] == evil)
            #expect(try db.scalar("SELECT to_regclass('health_store.samples') IS NOT NULL", as: Bool.self) == true)
        }
    }

    @Test("32 concurrent clients, several persons, overlapping and repeated batches: no error, no deadlock, every sample once")
    func concurrentLoad() throws {
        try TestPostgres.withDatabase { db in
            // The real binary, so its memory can be watched on its own.
            let (serve, port) = try CLIProcess.startServe(["--pool-size", "8", "--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let tokens = try (0..<4).map { try TokenStore(pool: pool).create(person: "p\($0)", label: nil).token }
            let errors = Mutex<[String]>([])
            let answered = Atomic<Int>(0)
            let started = Date()
            let rss = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 32) { client in
                let person = client % 4
                // Each client sends batches 0..<12 of its person, overlapping the other
                // clients of that person: the same uuids arrive many times at once.
                for round in 0..<12 {
                    let n = (round + client) % 12
                    do {
                        let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/",
                            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(tokens[person])")],
                            body: Self.batch(n, samples: 50, person: person), timeout: 60)
                        if answer.status != 200 { errors.withLock { $0.append("client \(client): \(answer.status) \(answer.bodyText)") } }
                        if answered.add(1, ordering: .relaxed).newValue % 32 == 0 {
                            let kib = Self.residentKiB(serve.pid)
                            rss.withLock { $0.append(kib) }
                        }
                    } catch {
                        errors.withLock { $0.append("client \(client): \(error)") }
                    }
                }
            }
            let samples = rss.withLock { $0 }
            print("load: \(answered.load(ordering: .relaxed)) batches from 32 clients in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; serve RSS KiB sampled: \(samples)")
            // Memory stays flat: the last samples are not far above the first ones.
            if let first = samples.first, let last = samples.last {
                #expect(last - first < 32 * 1024, "serve grew from \(first) KiB to \(last) KiB")
            }
            #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0.prefix(5) })")
            for person in 0..<4 {
                #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE person = $1", ["p\(person)"], as: Int.self) == 12 * 50)
                // Every delivery's counts add up, and exactly one insert per sample happened.
                #expect(try db.scalar("SELECT sum(inserted) FROM health_store.deliveries WHERE person = $1", ["p\(person)"], as: Int.self) == 12 * 50)
                #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries WHERE person = $1 AND inserted + duplicates + replaced + quarantined <> samples", ["p\(person)"], as: Int.self) == 0)
            }
        }
    }
}
