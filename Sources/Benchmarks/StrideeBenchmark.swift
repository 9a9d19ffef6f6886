import DemoData
import Foundation
import Harness
import HealthPayload
import Postgres
import Warehouse

/// The stridee section: decoding Stridee bodies in memory (no HTTP, no database), next to
/// Foundation's `JSONSerialization` reading the same bytes in the same run — the baseline the
/// decoders replace (it builds every value as an object and keeps no byte ranges).
///
///     health-warehouse-bench stridee [--repeat N]
///
/// Bodies: a six-hour ride (21,600 route points, 21,600 heart-rate samples, power and cadence
/// every 5 s), a ride body just under the 30 MiB limit, and a 2,000-item wellness batch.
/// Memory is measured in a fresh child process per body (`--peak`): it reads the body from a
/// file, then reports its peak resident size during one decode above the size before it.
func runStrideeBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    if arguments.first == "--peak", arguments.count == 3 {
        try printPeak(decoder: arguments[1], file: arguments[2])
        return
    }
    var repeats = 20
    if let i = arguments.firstIndex(of: "--repeat"), i + 1 < arguments.count, let n = Int(arguments[i + 1]), n > 0 { repeats = n }
    print("stridee benchmark: decoding in memory, best and median of \(repeats) runs (no database: --durability \(durability.rawValue) changes nothing here)")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stridee-bench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    let ride = StrideeBodies.ride(seconds: 6 * 3600, powerEvery: 5)
    try report("six-hour ride", body: ride, decoder: "workout", folder: folder, repeats: repeats) { body in
        let w = try StrideeDecoder.decodeWorkout(body)
        return "\(w.route.count) route points, \(w.heartRate.count) heart-rate samples"
    }

    // Scale the ride to the largest body under the workout limit.
    let perSecond = Double(ride.count) / Double(6 * 3600)
    var seconds = Int(Double(StrideeDecoder.maxWorkoutBodyBytes) / perSecond * 0.995)
    var large = StrideeBodies.ride(seconds: seconds, powerEvery: 5)
    while large.count > StrideeDecoder.maxWorkoutBodyBytes {
        seconds -= 600
        large = StrideeBodies.ride(seconds: seconds, powerEvery: 5)
    }
    try report("ride at the 30 MiB limit", body: large, decoder: "workout", folder: folder, repeats: max(3, repeats / 5)) { body in
        let w = try StrideeDecoder.decodeWorkout(body)
        return "\(w.route.count) route points, \(w.heartRate.count) heart-rate samples"
    }
    large = []

    let batch = StrideeBodies.wellness(count: StrideeDecoder.maxWellnessItems)
    try report("wellness, 2,000 items", body: batch, decoder: "wellness", folder: folder, repeats: repeats) { body in
        "\(try StrideeDecoder.decodeWellness(body).count) items"
    }

    // What storing the ride's columns costs before libpq: the binary array parameters.
    let w = try StrideeDecoder.decodeWorkout(ride)
    let encode = measure(repeats: repeats) {
        let r = w.route
        let parameters = [
            PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: r.times), .float8(r.latitudes), .float8(r.longitudes),
            .float8(r.altitudes), .float8(r.speeds), .float8(r.courses), .float8(r.horizontalAccuracies), .float8(r.verticalAccuracies),
            .timestamptz(microsecondsSinceEpoch: w.heartRate.times), .float8(w.heartRate.values),
        ]
        return parameters.reduce(0) { $0 + $1.postgresParameter.bytes.count }
    }
    print("""

        binary array parameters of the six-hour ride (8 route columns and heart rate, \(encode.result / 1024) KiB)
          encode: best \(ms(encode.best)), median \(ms(encode.median))
        """)
}

/// Decodes `body` `repeats` times with `decode` and with `JSONSerialization`, measures each one's
/// memory in a child process, and prints both.
private func report(_ title: String, body: [UInt8], decoder: String, folder: URL, repeats: Int,
                    decode: ([UInt8]) throws -> String) throws {
    let what = try decode(body)
    let ours = try measure(repeats: repeats) { try decode(body) }
    let data = Data(body)
    let foundation = try measure(repeats: repeats) { try JSONSerialization.jsonObject(with: data) is [String: Any] }
    let file = folder.appendingPathComponent("\(decoder)-\(body.count).json")
    try data.write(to: file)
    let megabytes = Double(body.count) / 1_048_576
    print("""

        \(title): \(String(format: "%.1f", megabytes)) MiB, \(what)
          StrideeDecoder:     best \(ms(ours.best)), median \(ms(ours.median)), \(String(format: "%.0f", megabytes / ours.median)) MiB/s, peak memory above the body \(try peak(decoder, file))
          JSONSerialization:  best \(ms(foundation.best)), median \(ms(foundation.median)), peak memory above the body \(try peak("foundation", file))  (baseline)
        """)
}

/// Best and median wall time in seconds of `repeats` calls, and the last call's result.
private func measure<T>(repeats: Int, _ body: () throws -> T) rethrows -> (best: Double, median: Double, result: T) {
    var times: [Double] = []
    var result = try body()  // warm-up
    for _ in 0..<repeats {
        let start = DispatchTime.now().uptimeNanoseconds
        result = try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    times.sort()
    return (times[0], times[times.count / 2], result)
}

/// The child's answer for one decoder over one file, as text.
private func peak(_ decoder: String, _ file: URL) throws -> String {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let result = try ProcessRunner.run(me, ["stridee", "--peak", decoder, file.path])
    guard result.status == 0, let bytes = Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) else { return "n/a" }
    return String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

/// In the child: reads the body, resets the peak resident size (`clear_refs` 5), decodes once and
/// prints how far the peak rose above the size before the decode, in bytes.
private func printPeak(decoder: String, file: String) throws {
    // Large blocks always from mmap and returned on free (glibc otherwise raises the threshold
    // after a free and keeps freed blocks resident), so the resident size tracks live memory.
    // <malloc.h> is not in Swift's Glibc module: mallopt is found by name. M_MMAP_THRESHOLD is -3, M_TRIM_THRESHOLD -1.
    if let symbol = dlsym(nil, "mallopt") {
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(-3, 128 * 1024)
        _ = mallopt(-1, 128 * 1024)
    }
    let data = try Data(contentsOf: URL(fileURLWithPath: file))
    let body = decoder == "foundation" ? [] : Array(data)
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    guard let before = status("VmHWM:") else { throw BenchmarkError.usage("no VmHWM in /proc/self/status") }
    switch decoder {
    case "workout": _ = try StrideeDecoder.decodeWorkout(body)
    case "wellness": _ = try StrideeDecoder.decodeWellness(body)
    default: _ = try JSONSerialization.jsonObject(with: data)
    }
    guard let after = status("VmHWM:") else { throw BenchmarkError.usage("no VmHWM in /proc/self/status") }
    print((after - before) * 1024)
}

/// A `kB` field of /proc/self/status.
private func status(_ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return nil }
    return Int(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
}

private func ms(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
