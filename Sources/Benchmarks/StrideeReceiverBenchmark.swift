import DemoData
import Foundation
import Harness
import Hashing
import HealthPayload
import Postgres
import Warehouse

/// The receiver benchmark's Stridee section: six-hour ride bodies (21,600 route points and
/// heart-rate samples, power and cadence every 5 s, ~5 MB) and 2,000-item wellness batches
/// POSTed one at a time to a real `serve` on the relay paths, each answer awaited; next to the
/// same bodies, decoded before the clock starts, stored by the same `StrideeStore` calls over
/// one connection (no HTTP, no decoding). `serve`'s peak resident size (`VmHWM`) is read at
/// the end: it covers every request, while storing included.
func runStrideeReceiverSection(_ cluster: TestCluster, rides: Int, batches: Int) throws {
    let ride = StrideeBodies.ride(seconds: 6 * 3600, powerEvery: 5)
    // Each ride a new workout: the body with its uuid replaced (same length, same bytes otherwise).
    let rideBodies = (0..<rides).map { n in withUUID(ride, String(format: "5D1E8C1A-2F7B-4E0C-9A43-%012d", n)) }
    // Each batch new items (a first sync's history, paged at 2,000): 223 days of nine kinds, then the next 223,
    // the last batch ending before 2026-01-01 (a day after tomorrow is refused as implausible).
    let daysPerBatch = Int64(StrideeDecoder.maxWellnessItems / 9 + 1)
    let firstDay = 1_767_225_600 - Int64(batches) * daysPerBatch * 86_400
    let wellnessBodies = (0..<batches).map { n in
        StrideeBodies.wellness(count: StrideeDecoder.maxWellnessItems, seed: UInt64(7 + n), firstDay: firstDay + Int64(n) * daysPerBatch * 86_400)
    }
    let decodedRide = try StrideeDecoder.decodeWorkout(ride)
    print("""

        Stridee (relay paths): \(rides) six-hour rides of \(String(format: "%.1f", Double(ride.count) / 1_048_576)) MiB \
        (\(decodedRide.route.count) route points, \(decodedRide.heartRate.count) heart-rate samples), \
        \(batches) wellness batches of \(StrideeDecoder.maxWellnessItems) items \
        (\(String(format: "%.1f", Double(wellnessBodies[0].count) / 1_048_576)) MiB)
        """)

    let baselineDB = try cluster.freshDatabase(label: "strideebaseline")
    let baseline = try storeStrideeDirectly(rides: rideBodies, wellness: wellnessBodies, connectionString: baselineDB.connectionString)

    let httpDB = try cluster.freshDatabase(label: "strideehttp")
    let (serve, port) = try CLIProcess.startServe(["--database-url", httpDB.connectionString])
    defer {
        serve.signal(SIGTERM)
        _ = serve.wait()
    }
    func post(_ path: String, _ bodies: [[UInt8]]) throws -> [Double] {
        try bodies.enumerated().map { index, body in
            let t0 = DispatchTime.now().uptimeNanoseconds
            let answer = try HTTPTestClient.request(port: port, method: "POST", path: path,
                                                    headers: [("Content-Type", "application/json")], body: body, timeout: 60)
            guard answer.status == 202 else { throw BenchmarkError.usage("\(path) body \(index) answered \(answer.status): \(answer.bodyText)") }
            return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
        }
    }
    let httpRides = try post("/v1/accounts/default/apple/workouts", rideBodies)
    let httpWellness = try post("/v1/accounts/default/apple/wellness", wellnessBodies)
    let peak = peakResidentKiB(of: serve.pid)

    for (name, db) in [("baseline", baselineDB), ("http", httpDB)] {
        let points = try db.scalar("SELECT coalesce(sum(points), 0)::int FROM health_store.workout_routes", as: Int.self) ?? 0
        guard points == rides * decodedRide.route.count else { throw BenchmarkError.usage("\(name) holds \(points) route points") }
    }
    func line(_ ms: [Double]) -> String {
        let sorted = ms.sorted()
        return String(format: "p50 %.1f ms, max %.1f ms", sorted[sorted.count / 2], sorted.last ?? 0)
    }
    print("""
          six-hour ride, baseline (StrideeStore, no HTTP):  \(line(baseline.rides))
          six-hour ride over HTTP through `serve`:          \(line(httpRides))  (goal <= 250 ms)
          wellness batch, baseline:                         \(line(baseline.wellness))
          wellness batch over HTTP:                         \(line(httpWellness))  (goal <= 100 ms)
          serve RSS: peak \(peak / 1024) MiB (VmHWM, storing included)  (goal <= 64 MiB)
        """)
}

/// The baseline: every body decoded first, then stored by `StrideeStore` through a pool of one
/// connection, one transaction per body, as the receiver does.
private func storeStrideeDirectly(rides: [[UInt8]], wellness: [[UInt8]], connectionString: String) throws
    -> (rides: [Double], wellness: [Double]) {
    let pool = PostgresPool(connectionString: connectionString, maxConnections: 1)
    defer { pool.close() }
    let store = StrideeStore(pool: pool)
    let workouts = try rides.map { (try StrideeDecoder.decodeWorkout($0), SHA256.hash($0)) }
    let batches = try wellness.map { try StrideeDecoder.decodeWellness($0) }
    func time(_ body: () throws -> Void) rethrows -> Double {
        let t0 = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
    }
    let rideTimes = try workouts.map { workout, digest in
        try time { _ = try store.storeWorkout(workout, person: "default", connect: true, bodySHA256: digest) }
    }
    let wellnessTimes = try batches.map { items in try time { _ = try store.storeWellness(items, person: "default", connect: true) } }
    return (rideTimes, wellnessTimes)
}

/// `body` with the ride's uuid replaced by `uuid` (36 characters, as the original).
private func withUUID(_ body: [UInt8], _ uuid: String) -> [UInt8] {
    let old = Array(StrideeBodies.rideUUID.utf8), new = Array(uuid.utf8)
    var out = body
    if let range = out.firstRange(of: old) { out.replaceSubrange(range, with: new) }
    return out
}
