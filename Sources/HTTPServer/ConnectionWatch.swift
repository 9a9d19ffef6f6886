import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The open connections of one server and the deadline each has for receiving its request.
///
/// libmicrohttpd's own timeout measures silence, so a client sending a byte now and then
/// could hold a connection forever. Here every connection must deliver a whole request
/// (headers and body) within `seconds` of opening, or of its previous answer on a kept-alive
/// connection; a connection past that is shut down (`shutdown(2)`, which MHD's connection
/// thread sees as the client hanging up). While the application's handler runs, no
/// deadline applies. Only MHD's threads (through the callbacks) and the watcher thread
/// touch it, all under one mutex.
final class ConnectionWatch: Sendable {
    /// What is known of one open connection.
    struct Entry {
        /// Its socket (closed by MHD only after the connection is reported closed).
        let socket: Int32
        /// When the request being received must be complete (monotonic seconds); nil while
        /// a handler runs or an answer is being sent.
        var deadline: Double?
        /// The socket was shut down for being late; not again.
        var cut = false
    }

    /// The time allowed to receive one request, in seconds; 0 turns deadlines off.
    let seconds: Double
    private let entries = Mutex<[UInt: Entry]>([:])
    private let stopped = Atomic<Bool>(false)
    /// Connections cut for missing their deadline, ever.
    let cutCount = Atomic<Int>(0)

    /// A watch with `seconds` per request (0: none).
    init(seconds: Double) {
        self.seconds = seconds
    }

    /// Connections open now.
    var openCount: Int { entries.withLock { $0.count } }

    /// A new connection: its first request is due within `seconds`.
    func opened(_ key: UInt, socket: Int32) {
        let deadline = seconds > 0 ? Self.now() + seconds : nil
        entries.withLock { $0[key] = Entry(socket: socket, deadline: deadline) }
    }

    /// The request is in (or was answered without its body): no deadline while it is handled.
    func received(_ key: UInt) {
        entries.withLock { $0[key]?.deadline = nil }
    }

    /// The answer is sent and the connection stays open: the next request is due within `seconds`.
    func awaitingNext(_ key: UInt) {
        guard seconds > 0 else { return }
        let deadline = Self.now() + seconds
        entries.withLock { $0[key]?.deadline = deadline }
    }

    /// MHD closed the connection (it closes the socket only after telling us, so a socket
    /// number is never shut down after it was reused).
    func closed(_ key: UInt) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Shuts down every connection past its deadline; returns how many.
    @discardableResult
    func cutLate(now: Double = ConnectionWatch.now()) -> Int {
        entries.withLock { entries -> Int in
            var cut = 0
            for (key, entry) in entries where !entry.cut {
                guard let deadline = entry.deadline, now > deadline else { continue }
                entries[key]?.cut = true
                cut += 1
                // Counted before the client can see the cut.
                cutCount.add(1, ordering: .sequentiallyConsistent)
                // Under the lock: `closed` cannot run meanwhile, so the socket is still this connection's.
                _ = shutdown(entry.socket, Int32(SHUT_RDWR))
            }
            return cut
        }
    }

    /// Starts the thread that cuts late connections, four times a second, until `stop()`.
    func startWatching() {
        guard seconds > 0 else { return }
        // A plain pthread (this module does without Foundation); it holds the watch until it ends.
        let retained = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let watch = Unmanaged<ConnectionWatch>.fromOpaque(argument).takeRetainedValue()
            while !watch.stopped.load(ordering: .relaxed) {
                usleep(250_000)
                watch.cutLate()
            }
            return nil
        }, retained)
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<ConnectionWatch>.fromOpaque(retained).release()
        }
    }

    /// Ends the watching thread (within a quarter of a second).
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
