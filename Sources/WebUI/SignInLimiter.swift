import Foundation
import Synchronization

/// Failed sign-ins per client address: after `limit` failures within `windowSeconds`, that
/// address is refused (`429`) until the oldest of them is older than the window, whatever it
/// sends, so tokens cannot be guessed at speed. A successful sign-in clears nothing: one who
/// holds a token of their own could otherwise reset the count between guesses. Behind a reverse proxy every client is the proxy's address (docs/ui.md).
public final class SignInLimiter: Sendable {
    let limit: Int
    let windowSeconds: TimeInterval
    let capacity: Int
    private let failures = Mutex<[String: [Date]]>([:])

    public init(limit: Int = 5, windowSeconds: TimeInterval = 15 * 60, capacity: Int = 10_000) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        self.capacity = capacity
    }

    /// Seconds until `address` may try again; nil when it may now.
    public func retryAfter(_ address: String, now: Date = Date()) -> Int? {
        failures.withLock { table in
            let recent = (table[address] ?? []).filter { now.timeIntervalSince($0) < windowSeconds }
            table[address] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return max(1, Int((windowSeconds - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    /// Counts a failed sign-in from `address`.
    public func failed(_ address: String, now: Date = Date()) {
        failures.withLock { table in
            if table[address] == nil, table.count >= capacity {
                table = table.filter { $0.value.contains { now.timeIntervalSince($0) < windowSeconds } }
                if table.count >= capacity, let any = table.keys.first { table[any] = nil }
            }
            table[address, default: []].append(now)
        }
    }
}
