import Foundation
import Synchronization

/// SIGINT and SIGTERM (and SIGHUP), handled on a thread of their own.
///
/// The signals are blocked in every thread (set before any other thread starts) and taken
/// with `sigwait`, so the handler runs as ordinary code, not inside a signal handler. A
/// command may take over (`serve` stops gracefully); otherwise the exit actions run (the
/// embedded cluster is stopped) and the process exits with 128 + the signal. SIGHUP runs the
/// hang-up action when one is set (`serve --tls-cert` reloads its pair) and is otherwise
/// taken like SIGTERM.
final class Shutdown: Sendable {
    static let shared = Shutdown()

    private let exitActions = Mutex<[@Sendable () -> Void]>([])
    private let override = Mutex<(@Sendable (Int32) -> Void)?>(nil)
    private let signalled = Atomic<Int32>(0)
    private let hangUp = Mutex<(@Sendable () -> Void)?>(nil)

    /// Blocks the signals and starts the waiting thread. Call first thing in `main`.
    func install() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN) // a client that hangs up must not kill the server
        let thread = Thread { [self] in
            var waitSet = sigset_t()
            sigemptyset(&waitSet)
            sigaddset(&waitSet, SIGINT)
            sigaddset(&waitSet, SIGTERM)
            sigaddset(&waitSet, SIGHUP)
            while true {
                var caught: Int32 = 0
                guard sigwait(&waitSet, &caught) == 0 else { continue }
                handle(caught)
            }
        }
        thread.name = "signals"
        thread.start()
    }

    /// True once SIGINT or SIGTERM arrived.
    var isRequested: Bool { signalled.load(ordering: .relaxed) != 0 }

    /// True while the signal thread cleans up before exiting.
    var isExiting: Bool { exiting.load(ordering: .relaxed) }
    private let exiting = Atomic<Bool>(false)

    /// Runs `action` before the process exits on a signal.
    func onExit(_ action: @escaping @Sendable () -> Void) {
        exitActions.withLock { $0.append(action) }
    }

    /// Lets a command handle the signal itself (and exit when it is done).
    func takeOver(_ handler: @escaping @Sendable (Int32) -> Void) {
        override.withLock { $0 = handler }
    }

    /// Runs `action` on each SIGHUP instead of stopping.
    func onHangUp(_ action: @escaping @Sendable () -> Void) {
        hangUp.withLock { $0 = action }
    }

    private func handle(_ signal: Int32) {
        if signal == SIGHUP, let action = hangUp.withLock({ $0 }) {
            action()
            return
        }
        let first = signalled.exchange(signal, ordering: .relaxed) == 0
        if first, let handler = override.withLock({ $0 }) {
            handler(signal)
            return
        }
        // A second signal, or no handler: clean up and leave now.
        exiting.store(true, ordering: .relaxed)
        let actions = exitActions.withLock { $0 }
        actions.forEach { $0() }
        exit(128 + signal)
    }
}
