import Foundation
import Harness
import Synchronization

/// Per-batch latencies of one run, from one client or several at once.
struct Timings: Sendable {
    /// Each batch's round trip, in milliseconds.
    var milliseconds: [Double] = []
    /// Samples sent.
    var samples = 0
    /// Wall time of the whole run (for several clients: from the start of all to the end of the last).
    var seconds = 0.0

    var samplesPerSecond: Double { seconds > 0 ? Double(samples) / seconds : 0 }

    /// The nearest-rank percentile of the batch latencies (`p` from 0 to 1), in milliseconds.
    func percentile(_ p: Double) -> Double {
        let sorted = milliseconds.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[max(0, min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }

    /// The mean batch latency, in milliseconds.
    var mean: Double { milliseconds.isEmpty ? 0 : milliseconds.reduce(0, +) / Double(milliseconds.count) }

    /// `24813 samples/s, p50 38.2 ms, p99 61.0 ms per batch`
    var summary: String {
        String(format: "%6.0f samples/s, p50 %6.1f ms, p99 %6.1f ms per batch", samplesPerSecond, percentile(0.5), percentile(0.99))
    }

    /// Several clients' timings as one run of `seconds` wall time.
    static func merged(_ parts: [Timings], seconds: Double) -> Timings {
        Timings(milliseconds: parts.flatMap(\.milliseconds), samples: parts.reduce(0) { $0 + $1.samples }, seconds: seconds)
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Runs `work(0)`, `work(1)`, … on `count` threads of their own, released together once all
/// are ready, and returns their results in order with the wall time from the release to the
/// last one's end. The first error thrown is rethrown after all have ended.
func onThreads<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) throws -> T) throws -> (results: [T], seconds: Double) {
    let results = Mutex<[Int: Result<T, any Error>]>([:])
    let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0), done = DispatchGroup()
    for k in 0..<count {
        done.enter()
        let thread = Thread {
            ready.signal()
            go.wait()
            let result = Result { try work(k) }
            results.withLock { $0[k] = result }
            done.leave()
        }
        thread.start()
    }
    for _ in 0..<count { ready.wait() }
    let start = monotonicSeconds()
    for _ in 0..<count { go.signal() }
    done.wait()
    let seconds = monotonicSeconds() - start
    let all = results.withLock { $0 }
    return (try (0..<count).map { try all[$0]!.get() }, seconds)
}

/// The peak resident size of a live process (`VmHWM` in /proc), in KiB; 0 when unreadable.
func peakResidentKiB(of pid: pid_t) -> Int {
    ProcessMemory.kib("VmHWM", of: pid)
}

/// The 1-, 5- and 15-minute load averages, to say how busy the shared machine was.
func loadAverage() -> String {
    var loads = [Double](repeating: 0, count: 3)
    guard getloadavg(&loads, 3) == 3 else { return "?" }
    return String(format: "%.2f, %.2f, %.2f", loads[0], loads[1], loads[2])
}

/// Runs a program under GNU time (`/usr/bin/time -v`): wall seconds, peak RSS in MiB, its
/// exit status and output. A status other than 0 or 1 is an error.
func timedRun(_ program: String, _ arguments: [String]) throws -> (seconds: Double, rssMiB: Double, status: Int32, stdout: String, stderr: String) {
    let out = try CLIProcess.runProgram("/usr/bin/time", ["-v", program] + arguments)
    guard out.status == 0 || out.status == 1 else { throw BenchmarkError.usage("\(program) failed (\(out.status)): \(out.stderr.suffix(2000))") }
    func field(_ name: String) -> String? {
        out.stderr.split(separator: "\n").first { $0.contains(name) }.map { String($0.split(separator: ": ").last ?? "") }
    }
    let rss = (Double(field("Maximum resident set size") ?? "0") ?? 0) / 1024
    let parts = (field("Elapsed (wall clock) time") ?? "0").split(separator: ":").compactMap { Double($0) }
    return (parts.reduce(0) { $0 * 60 + $1 }, rss, out.status, out.stdout, out.stderr)
}
