import Dispatch
import Foundation
import Testing
import Warehouse

@Suite("ProcessRunner")
struct ProcessRunnerTests {
    @Test("a program's output and exit status come back, stdout and stderr together")
    func outputAndStatus() throws {
        let result = try ProcessRunner.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(result.status == 3)
        #expect(result.output.split(separator: "\n").sorted() == ["err", "out"])
    }

    /// Two tests starting clusters at once hung here: the output pipe of one `run` leaked into
    /// a program spawned by another thread at the same moment, a postmaster kept it open, and
    /// the first `run` waited for an end of output that never came. Here one thread keeps
    /// starting detached long sleepers (like pg_ctl starting a postmaster) while another runs
    /// short programs; every short run must come back long before a sleeper ends.
    @Test("a run does not wait for programs that other threads started meanwhile")
    func noLeakAcrossThreads() throws {
        let done = DispatchSemaphore(value: 0)
        let sleepers = DispatchQueue(label: "sleepers")
        sleepers.async {
            for _ in 0..<40 {
                _ = try? ProcessRunner.run("/bin/sh", ["-c", "sleep 20 </dev/null >/dev/null 2>&1 &"])
            }
            done.signal()
        }
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue(label: "short").async {
            for _ in 0..<40 { _ = try? ProcessRunner.run("/bin/echo", ["x"]) }
            finished.signal()
        }
        // 80 short programs take well under a second; a leaked pipe holds a run for 20 s.
        #expect(finished.wait(timeout: .now() + 15) == .success, "a short run waited for another thread's detached program")
        #expect(done.wait(timeout: .now() + 15) == .success)
        _ = try? ProcessRunner.run("/usr/bin/pkill", ["-f", "^sleep 20$"])
    }
}
