import Foundation
import Synchronization

/// A failure from a background job, as text.
public struct JobFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// Runs a blocking closure on its own thread (not the Swift concurrency pool,
/// which has two threads on this machine and must not be blocked).
public final class BackgroundJob<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, JobFailure>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    public init(_ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let outcome: Result<Value, JobFailure>
            do { outcome = .success(try body()) } catch { outcome = .failure(JobFailure(description: "\(error)")) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        thread.start()
    }

    /// Waits up to `timeout` seconds; nil when still running.
    public func wait(timeout: Double = 30) -> Result<Value, JobFailure>? {
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        done.signal()
        return result.withLock { $0 }
    }

    /// Whether the job has finished.
    public var isFinished: Bool { result.withLock { $0 != nil } }
}

/// Polls `condition` every 5 ms until true or `timeout` seconds pass.
@discardableResult
public func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicNow() + timeout
    while !condition() {
        if monotonicNow() > deadline { return false }
        sleepSeconds(0.005)
    }
    return true
}

