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

        // The kill and the restart follow what the stream has seen, not the clock: the
        // postmaster is killed once 5 batches were stored, and started again once 3 batches
        // were refused while it was down (the stream waits for the restart there).
        let storedBeforeKill = DispatchSemaphore(value: 0)
        let refusedWhileDown = DispatchSemaphore(value: 0)
        let restarted = DispatchSemaphore(value: 0)
        let killer = BackgroundJob { () -> Bool in
            guard storedBeforeKill.wait(timeout: .now() + 60) == .success else { return false }
            try cluster.kill()
            guard refusedWhileDown.wait(timeout: .now() + 60) == .success else { return false }
            try cluster.start()
            restarted.signal()
            return true
        }
        var statuses: [Int: Int] = [:]
        var total = 0
        var streak = 0
        var stored = 0
        var refused = 0
        // Stream batches until the server is back and five answers in a row are 200.
        while total < 600 && !(killer.isFinished && streak >= 5) {
            let status = (try? receiver.post(Self.batch(total)).status) ?? 0
            statuses[total] = status
            streak = status == 200 ? streak + 1 : 0
            total += 1
            if status == 200 {
                stored += 1
                if stored == 5 { storedBeforeKill.signal() }
            } else if stored >= 5 && !killer.isFinished {
                refused += 1
                if refused == 3 {
                    refusedWhileDown.signal()
                    #expect(restarted.wait(timeout: .now() + 60) == .success)
                }
            }
        }
        #expect((try? killer.wait(timeout: 60)?.get()) == true)
        let failed = statuses.filter { $0.value != 200 }
        #expect(failed.allSatisfy { $0.value == 503 || $0.value == 500 }, "\(failed)")
        // After the restart the receiver serves again by itself.
        #expect(streak >= 5)
        #expect(failed.count >= 3, "the kill should have failed some batches")

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

    /// 64 KB of text for an envelope key the decoder skips (unknown keys are ignored at
    /// envelope level), so a body is large while storing it costs the same.
    static let padding = String(repeating: "p", count: 64 * 1024)

    /// `body` with `"padding": "ppp…"` as its first envelope key.
    static func padded(_ body: [UInt8]) -> [UInt8] {
        Array("{\"padding\":\"\(padding)\",".utf8) + body.dropFirst()
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

    @Test("32 concurrent clients, several persons, overlapping and repeated batches: no error, no deadlock, every sample once, memory bounded")
    func concurrentLoad() throws {
        try TestPostgres.withDatabase { db in
            // The real binary, so its memory can be watched on its own.
            // 32 clients from one address: more than the default per-address limit of 16 could be at once.
            let (serve, port) = try CLIProcess.startServe(["--pool-size", "8", "--per-address-limit", "0", "--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let tokens = try (0..<4).map { try TokenStore(pool: pool).create(person: "p\($0)", label: nil).token }
            let errors = Mutex<[String]>([])
            let answered = Atomic<Int>(0)
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
                            body: Self.padded(Self.batch(n, samples: 50, person: person)), timeout: 60)
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
            // Each body carries 64 KB of envelope padding (ignored, never stored), so keeping
            // one body per request after the first sample would add over 20 MiB: memory
            // must grow by well under that (it grew by under 1 MiB when measured).
            let bodiesAfterFirstSample = (32 * 12 - 32) * Self.padding.count
            if let first = samples.first, let last = samples.last {
                #expect((last - first) * 1024 < bodiesAfterFirstSample / 4,
                        "serve grew from \(first) KiB to \(last) KiB; one body per request would be \(bodiesAfterFirstSample / 1024) KiB")
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
