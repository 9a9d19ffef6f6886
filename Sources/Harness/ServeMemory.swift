import Foundation

/// The resident memory of a live process, from `/proc/PID/status`.
public enum ProcessMemory {
    /// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`) in KiB; 0 when unreadable.
    public static func kib(_ field: String, of pid: pid_t) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
}

/// Large bodies POSTed all at once to a running `serve` while its memory is watched: the
/// scenario of `serve`'s memory bound (six 30 MiB workouts from one token, under 512 MiB resident), shared by `CLITests` (which
/// asserts the bounds) and the benchmark's `memory` section (which prints the figures).
public struct ServeMemoryRun: Sendable {
    /// Each body's answer, in the order of `bodies`.
    public var statuses: [Int]
    /// Each answer's `Retry-After`, when it had one.
    public var retryAfter: [String?]
    /// `serve`'s resident size before the bodies (`VmRSS`), KiB.
    public var beforeKiB: Int
    /// Its peak resident size once every answer is in (`VmHWM`), KiB.
    public var peakKiB: Int
    /// Its resident size once settled: the first sample under `settleBelowKiB`, else the last.
    public var settledKiB: Int
    /// Seconds from the last answer to `settledKiB`.
    public var settleSeconds: Double
    /// Seconds from the first byte sent to the last answer.
    public var seconds: Double

    /// POSTs `bodies` at once (a thread each) to `path`, then samples `VmRSS` every 100 ms for up
    /// to `settleWithin` seconds until it is under `settleBelowKiB`.
    public static func run(pid: pid_t, port: Int, path: String, headers: [(name: String, value: String)], bodies: [[UInt8]],
                           settleBelowKiB: Int, settleWithin: Double = 10) -> ServeMemoryRun {
        let before = ProcessMemory.kib("VmRSS", of: pid)
        let answers = Answers(count: bodies.count)
        let group = DispatchGroup()
        let started = DispatchTime.now().uptimeNanoseconds
        let fields = headers + [("Content-Type", "application/json")]
        for (index, body) in bodies.enumerated() {
            group.enter()
            Thread {
                let answer = try? HTTPTestClient.request(port: port, method: "POST", path: path, headers: fields, body: body, timeout: 300)
                answers.set(index, answer.map { ($0.status, $0.header("Retry-After")) } ?? (0, nil))
                group.leave()
            }.start()
        }
        group.wait()
        let answered = DispatchTime.now().uptimeNanoseconds
        let peak = ProcessMemory.kib("VmHWM", of: pid)
        var settled = ProcessMemory.kib("VmRSS", of: pid)
        while settled >= settleBelowKiB, Double(DispatchTime.now().uptimeNanoseconds - answered) / 1e9 < settleWithin {
            usleep(100_000)
            settled = ProcessMemory.kib("VmRSS", of: pid)
        }
        let results = answers.all
        return ServeMemoryRun(statuses: results.map(\.0), retryAfter: results.map(\.1), beforeKiB: before, peakKiB: peak,
                              settledKiB: settled, settleSeconds: Double(DispatchTime.now().uptimeNanoseconds - answered) / 1e9,
                              seconds: Double(answered - started) / 1e9)
    }

    /// The answers of the threads, set once each.
    private final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [(Int, String?)]

        init(count: Int) { values = Array(repeating: (0, nil), count: count) }

        func set(_ index: Int, _ value: (Int, String?)) {
            lock.lock()
            values[index] = value
            lock.unlock()
        }

        var all: [(Int, String?)] {
            lock.lock()
            defer { lock.unlock() }
            return values
        }
    }
}
