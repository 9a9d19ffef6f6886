import CGnuTLS
import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An HTTP/1.1 server on libmicrohttpd: requests in, responses out.
///
/// Each connection gets its own MHD thread, and the application's functions
/// run on it, so they may block (a database transaction) without stalling
/// other connections. When a request's header fields are in, `onHead` decides:
/// reject it at once (no body is read), or accept it with a body limit and the
/// function that answers the whole request. Bodies over the limit get a bare
/// `413` and never reach that function. A request must arrive whole within
/// `requestDeadlineSeconds`, and one address may hold at most
/// `perAddressConnectionLimit` connections. The server never filters methods,
/// never redirects, and logs neither headers nor bodies.
public final class HTTPServer: Sendable {
    private let configuration: HTTPServerConfiguration
    private let core: ServerCore
    private let state = Mutex<State>(.idle)
    private let port = Atomic<Int>(0)

    /// Creates a server; nothing listens until `start()`.
    ///
    /// `onHead` is called on libmicrohttpd's connection threads, possibly many
    /// at once, once per request as soon as its header fields are in; the
    /// `respond` of its `accept` once the body is in within its limit.
    public init(configuration: HTTPServerConfiguration,
                onHead: @escaping @Sendable (HTTPRequestHead) -> HTTPHeadDecision) {
        self.configuration = configuration
        self.core = ServerCore(onHead: Self.checkingHost(onHead, configuration), maxBodyBytes: configuration.maxBodyBytes,
                               requestDeadlineSeconds: configuration.requestDeadlineSeconds,
                               bodyBudget: configuration.bodyBudgetBytes, returnMemoryAfterBytes: configuration.returnMemoryAfterBytes,
                               onAnswered: configuration.onAnswered)
    }

    /// `onHead` behind the `Host` check of `configuration.hostNames`: one place in front of every
    /// route the application has, so none can forget it.
    static func checkingHost(_ onHead: @escaping @Sendable (HTTPRequestHead) -> HTTPHeadDecision,
                             _ configuration: HTTPServerConfiguration) -> @Sendable (HTTPRequestHead) -> HTTPHeadDecision {
        guard let hosts = configuration.hostNames else { return onHead }
        let onMisdirected = configuration.onMisdirected
        return { head in
            guard hosts.admits(head.headers.values("Host")) else {
                onMisdirected?(head)
                return .reject(HTTPResponse.json(status: 421, HostNames.refusalBody))
            }
            return onHead(head)
        }
    }

    /// Creates a server that accepts every request with the configured body cap
    /// and answers it with `handler`, once per fully received request.
    public convenience init(configuration: HTTPServerConfiguration,
                            handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.init(configuration: configuration, onHead: { _ in .accept(respond: handler) })
    }

    deinit {
        // A server dropped while running must not leave MHD threads calling
        // into freed memory; the retained core keeps the callbacks safe until then.
        stop(graceSeconds: 0)
    }

    /// Starts listening on `configuration.address`.
    ///
    /// Throws `HTTPServerError`: `.invalidConfiguration` or `.invalidAddress`
    /// for bad settings, `.addressInUse` when another socket holds the port,
    /// `.alreadyStarted` when called a second time, `.startFailed` otherwise;
    /// the message names the address and the reason.
    public func start() throws(HTTPServerError) {
        try configuration.validate()
        if configuration.returnMemoryAfterBytes > 0 {
            _ = CMicroHTTPD_map_allocations_from(configuration.returnMemoryAfterBytes)
        }
        let address = configuration.address
        let socketAddress = try SocketAddress(address)
        if let tls = configuration.tls {
            guard CMicroHTTPD_supports_tls() == 1 else {
                throw HTTPServerError(.tlsCredentials, "this libmicrohttpd was built without TLS (GnuTLS); HTTPS needs it")
            }
            try tls.load()
        }
        try state.withLock { (state: inout State) throws(HTTPServerError) -> Void in
            guard case .idle = state else {
                let bound = ListenAddress(host: address.host, port: port.load(ordering: .sequentiallyConsistent))
                throw HTTPServerError(.alreadyStarted,
                                      "HTTP server on \(bound) was already started; create a new HTTPServer")
            }
            // ITC is required for MHD_quiesce_daemon (microhttpd.h, MHD_USE_ITC).
            var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_THREAD_PER_CONNECTION.rawValue
                | MHD_USE_AUTO.rawValue | MHD_USE_ERROR_LOG.rawValue | MHD_USE_ITC.rawValue
            if address.isIPv6 {
                // `::` also takes IPv4 clients (dual stack); a specific IPv6 address only itself.
                flags |= socketAddress.isUnspecified ? MHD_USE_DUAL_STACK.rawValue : MHD_USE_IPv6.rawValue
            }
            let tls = configuration.tls != nil
            if tls { flags |= MHD_USE_TLS.rawValue }
            let retainedCore = Unmanaged.passRetained(core)
            var errorNumber: Int32 = 0
            let daemon = socketAddress.withSockaddr { sockaddr in
                CMicroHTTPD_start_daemon(
                    flags, sockaddr,
                    MHDCallbacks.accessHandler, retainedCore.toOpaque(),
                    MHDCallbacks.requestCompleted, retainedCore.toOpaque(),
                    MHDCallbacks.connectionNotified, retainedCore.toOpaque(),
                    // validate() keeps these within UInt32.
                    UInt32(configuration.connectionLimit),
                    UInt32(configuration.perAddressConnectionLimit),
                    UInt32(configuration.connectionTimeoutSeconds),
                    configuration.perConnectionMemoryLimit,
                    tls ? CGnuTLS_priorities : nil, tls ? CGnuTLS_certificate_callback() : nil,
                    &errorNumber)
            }
            guard let daemon else {
                retainedCore.release()
                throw Self.startError(address: address, errorNumber: errorNumber,
                                      mhdMessage: String(cString: CMicroHTTPD_last_error()))
            }
            let bound = CMicroHTTPD_bound_port(daemon)
            port.store(bound > 0 ? Int(bound) : address.port, ordering: .sequentiallyConsistent)
            state = .running(RunningDaemon(daemon: daemon, retainedCore: retainedCore))
            core.watch.startWatching()
        }
    }

    /// Reads the TLS files again (`configuration.tls`): connections opened from now on get
    /// the new pair, those open keep theirs. Throws `.tlsCredentials` when the new pair is
    /// refused (the old one is served on), `.invalidConfiguration` without TLS.
    @discardableResult
    public func reloadTLS() throws(HTTPServerError) -> Int {
        guard let tls = configuration.tls else {
            throw HTTPServerError(.invalidConfiguration, "this server does not speak TLS")
        }
        return try tls.load()
    }

    /// Whether the server speaks HTTPS.
    public var usesTLS: Bool { configuration.tls != nil }

    /// The port actually listened on (the one the kernel chose when the
    /// configuration asked for port 0); 0 before `start()`.
    public var boundPort: Int {
        port.load(ordering: .sequentiallyConsistent)
    }

    /// Body bytes the requests in flight hold of `bodyBudgetBytes` now.
    public var bodyBytesInFlight: Int {
        core.bodiesInFlight.load(ordering: .sequentiallyConsistent)
    }

    /// Requests whose headers have arrived and whose response has not yet been
    /// fully sent (or whose connection has not yet died): bodies being
    /// received, handlers running, answers being written.
    public var requestsInFlight: Int {
        core.requestsInFlight.load(ordering: .sequentiallyConsistent)
    }

    /// Connections open now, whatever they are doing (receiving, handled,
    /// idle between requests).
    public var openConnections: Int {
        core.watch.openCount
    }

    /// Connections cut so far for not delivering a whole request within
    /// `requestDeadlineSeconds`.
    public var connectionsCutAtDeadline: Int {
        core.watch.cutCount.load(ordering: .relaxed)
    }

    /// Stops the server gracefully; safe from any thread, idempotent.
    ///
    /// New connections are refused at once (MHD_quiesce_daemon, and the
    /// listening socket is shut down so connects fail instead of queueing).
    /// Requests in flight may then finish — a running handler completes and its
    /// response is delivered, with `Connection: close` — for up to
    /// `graceSeconds`; then MHD_stop_daemon closes every connection. A handler
    /// still running after the grace keeps `stop` waiting until it returns, as
    /// MHD joins its thread. A second call while one is stopping waits for it.
    public func stop(graceSeconds: Double = 30) {
        let running: RunningDaemon? = state.withLock { state in
            guard case .running(let running) = state else { return nil }
            state = .stopping
            return running
        }
        guard let running else {
            while state.withLock({ if case .stopping = $0 { return true } else { return false } }) {
                usleep(5_000)
            }
            return
        }
        core.stopping.store(true, ordering: .sequentiallyConsistent)
        let listenSocket = MHD_quiesce_daemon(running.daemon)
        if listenSocket >= 0 {
            // After quiesce MHD stops accepting, but the kernel would still
            // complete handshakes into the backlog and leave clients hanging.
            // Shutting the listening socket down (Linux) resets those and
            // refuses new ones; it is closed only after MHD_stop_daemon, as
            // MHD_quiesce_daemon's documentation requires for threaded modes.
            _ = shutdown(listenSocket, Int32(SHUT_RDWR))
        }
        let deadline = Self.now() + max(0, graceSeconds)
        while core.requestsInFlight.load(ordering: .sequentiallyConsistent) > 0, Self.now() < deadline {
            usleep(5_000)
        }
        MHD_stop_daemon(running.daemon)
        core.watch.stop()
        if listenSocket >= 0 {
            _ = close(listenSocket)
        }
        running.retainedCore.release()
        state.withLock { $0 = .stopped }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func startError(address: ListenAddress, errorNumber: Int32, mhdMessage: String) -> HTTPServerError {
        let detail = mhdMessage.isEmpty ? "" : " (libmicrohttpd: \(mhdMessage))"
        if errorNumber == EADDRINUSE || mhdMessage.contains("Address already in use") {
            return HTTPServerError(.addressInUse,
                                   "cannot listen on \(address): address already in use (another process or server holds this port)")
        }
        if errorNumber == EADDRNOTAVAIL || mhdMessage.contains("Cannot assign requested address") {
            return HTTPServerError(.invalidAddress,
                                   "cannot listen on \(address): no network interface on this machine has that address")
        }
        if errorNumber == EACCES || mhdMessage.contains("Permission denied") {
            return HTTPServerError(.startFailed,
                                   "cannot listen on \(address): permission denied (ports below 1024 need privileges)")
        }
        let reason = errorNumber != 0 ? String(cString: strerror(errorNumber)) : "libmicrohttpd refused to start"
        return HTTPServerError(.startFailed, "cannot listen on \(address): \(reason)\(detail)")
    }
}

extension HTTPServer {
    /// Lifecycle: idle → running → stopping → stopped; never back.
    enum State {
        case idle
        case running(RunningDaemon)
        case stopping
        case stopped
    }

    /// A started daemon and the core reference it was given.
    ///
    /// `@unchecked Sendable`: it holds C pointers, but it only moves in and out
    /// of `state` under the mutex, and `stop()` takes it out exactly once.
    struct RunningDaemon: @unchecked Sendable {
        let daemon: OpaquePointer
        let retainedCore: Unmanaged<ServerCore>
    }
}
