import Civil
import DemoData
import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// `serve` and `ingest` of the built binary with Health Auto Export's bodies: a 40 MiB body, the
/// body limit, the grouping option.
@Suite("Health Auto Export through the binary")
struct HAEServeTests {
    /// A week of minute buckets of every metric (3.4 MB) and ECG recordings as the app sends
    /// them (30 s at 512 Hz, about 1 MB each) up to `bytes`.
    static func largeBody(bytes: Int) -> (body: [UInt8], samples: Int, ecgs: Int) {
        let demo = HAEDemo(start: CivilDate("2025-02-01")!, days: 7, seed: 5)
        var body = demo.haeBody()
        body.removeLast(2)  // the closing of data and of the top-level object
        var ecgs: [String] = []
        var size = body.count
        while size < bytes {
            let k = ecgs.count
            let measurements = (0..<15_360).map { i in
                #"{"date":"2025-02-0\#(1 + k % 7) 12:00:\#(String(format: "%02d", i / 512)) +0100","voltage":\#(Double((i * 37 + k) % 2000 - 1000) * 1e-6),"units":"V"}"#
            }
            let ecg = #"{"classification":"Sinus Rhythm","severity":"None","averageHeartRate":\#(60 + k % 30),"numberOfVoltageMeasurements":15360,"# +
                #""samplingFrequency":512,"start":"2025-02-0\#(1 + k % 7) 12:\#(String(format: "%02d", k)):00 +0100","source":"Apple Watch","# +
                #""voltageMeasurements":[\#(measurements.joined(separator: ","))]}"#
            ecgs.append(ecg)
            size += ecg.utf8.count + 1
        }
        body += Array(",\"ecg\":[\(ecgs.joined(separator: ","))]}}".utf8)
        return (body, demo.sampleCount, ecgs.count)
    }

    @Test("a 40 MiB body is stored whole: 200, every sample and record held, serve far under 512 MiB resident")
    func fortyMebibytes() throws {
        let (body, samples, ecgs) = Self.largeBody(bytes: 40 * 1_048_576)
        #expect(body.count >= 40 * 1_048_576 && body.count <= 41 * 1_048_576)
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/hae",
                                                    headers: [("Content-Type", "application/json"), ("automation-aggregation", "minutes")],
                                                    body: body, timeout: 600)
            #expect(answer.status == 200, "\(answer.bodyText.prefix(300))")
            let counts = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int]
            #expect(counts?["samples"] == samples && counts?["inserted"] == samples && counts?["quarantined"] == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == samples)
            #expect(try db.scalar("SELECT count(*) FROM health.hae_records WHERE kind = 'ecg'", as: Int.self) == ecgs)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)
            let peak = ProcessMemory.kib("VmHWM", of: serve.pid)
            print("serve peak RSS for a \(body.count / 1_048_576) MiB Health Auto Export body: \(peak / 1024) MiB")
            #expect(peak < 512 * 1024, "peak \(peak / 1024) MiB")
        }
    }

    @Test("a body over --max-hae-body is 413 and stores nothing; --max-hae-body above --body-budget is a usage error")
    func limit() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString, "--max-hae-body", "64KiB"])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let body = HAEDemo(start: CivilDate("2025-02-01")!, days: 1, seed: 5).haeBody()
            #expect(body.count > 64 * 1024)
            let answer = try HTTPTestClient.request(port: port, method: "POST", path: "/hae",
                                                    headers: [("Content-Type", "application/json")], body: body)
            #expect(answer.status == 413)
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
        let usage = try CLIProcess.run(["serve", "--max-hae-body", "128MiB", "--body-budget", "64MiB"])
        #expect(usage.status == 64 && usage.stderr.contains("--body-budget"))
    }

    @Test("ingest --hae-aggregation takes the app's groupings and refuses anything else")
    func ingestOption() throws {
        try TestPostgres.withDatabase { db in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hae-ingest-\(getpid())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("HealthAutoExport-2025-02-01.json")
            try Data(HAEDemo(start: CivilDate("2025-02-01")!, days: 1, seed: 5).haeBody()).write(to: file)
            let bad = try CLIProcess.run(["ingest", "--database-url", db.connectionString, "--hae-aggregation", "fortnights", file.path])
            #expect(bad.status == 64 && bad.stderr.contains("--hae-aggregation"))
            let good = try CLIProcess.run(["ingest", "--database-url", db.connectionString, "--hae-aggregation", "minutes", file.path])
            #expect(good.status == 0, "\(good.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries WHERE origin = 'hae'", as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE payload->>'haeBucket' = 'minutes'", as: Int.self)! > 6000)
        }
    }
}
