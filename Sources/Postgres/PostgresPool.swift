import Foundation

/// A small blocking pool of connections to one database.
///
/// Hands a connection to one caller at a time. A connection that comes back broken or
/// still inside a transaction is closed, never handed out again. An idle connection is
/// checked before it is handed out, without sending anything (`isAliveWithoutSending`), so
/// one that died with a server restart is replaced and a restart costs no request. A caller
/// whose connection turns out dead anyway gets one retry on a fresh connection only when
/// nothing at all was sent on the dead one: work that reached the server (a `COMMIT` above
/// all) is never run twice; its error goes back to the caller.
public final class PostgresPool: @unchecked Sendable {
    private let info: Result<PostgresConnectionInfo, PostgresError>
    private let sessionSettings: [(name: String, value: String)]
    private let maxConnections: Int
    private let waitLimit: TimeInterval
    // Guards every field below.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private var waitingNow = 0
    private var waitedTotal = 0

    /// - Parameters:
    ///   - connectionString: libpq keyword string or URI, read by libpq; never logged. One
    ///     libpq cannot read fails every call with `invalidConnectionString`.
    ///   - maxConnections: at most this many connections open at once.
    ///   - waitLimit: how long a caller waits for a free connection before `poolTimeout`.
    ///   - sessionSettings: set on every new connection (`lock_timeout`, `statement_timeout`…).
    public convenience init(connectionString: String, maxConnections: Int = 8, waitLimit: TimeInterval = 30,
                            sessionSettings: [(name: String, value: String)] = []) {
        self.init(info: Result { () throws(PostgresError) in try PostgresConnectionInfo(parsing: connectionString) },
                  maxConnections: maxConnections, waitLimit: waitLimit, sessionSettings: sessionSettings)
    }

    /// A pool over connections made from `info`; the other parameters as above.
    public convenience init(info: PostgresConnectionInfo, maxConnections: Int = 8, waitLimit: TimeInterval = 30,
                            sessionSettings: [(name: String, value: String)] = []) {
        self.init(info: .success(info), maxConnections: maxConnections, waitLimit: waitLimit, sessionSettings: sessionSettings)
    }

    private init(info: Result<PostgresConnectionInfo, PostgresError>, maxConnections: Int, waitLimit: TimeInterval,
                 sessionSettings: [(name: String, value: String)]) {
        self.info = info
        self.sessionSettings = sessionSettings
        self.maxConnections = max(1, maxConnections)
        self.waitLimit = waitLimit
    }

    /// Runs `body` with a connection of the pool.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try acquire()
        connection.markUnsent()
        do {
            let value = try body(connection)
            release(connection)
            return value
        } catch let error as PostgresError where error.kind == .connectionLost && !connection.sentSinceMark {
            // The connection was dead before anything went out on it, so the server ran
            // nothing of `body`: running it again on a fresh connection repeats nothing.
            release(connection)
            let fresh = try acquire(forceNew: true)
            fresh.markUnsent()
            do {
                let value = try body(fresh)
                release(fresh)
                return value
            } catch {
                release(fresh)
                throw error
            }
        } catch {
            release(connection)
            throw error
        }
    }

    /// Takes a connection out of the pool for a caller that needs one across several calls (a
    /// transaction spanning them). Give it back with `checkIn`; one that comes back broken or
    /// still inside a transaction is closed, as with `withConnection`.
    public func checkOut() throws -> PostgresConnection {
        let connection = try acquire()
        connection.markUnsent()
        return connection
    }

    /// Gives back a connection taken with `checkOut`.
    public func checkIn(_ connection: PostgresConnection) {
        release(connection)
    }

    /// Runs `body` in one transaction on a pooled connection.
    @discardableResult
    public func withTransaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { try $0.withTransaction(body) }
    }

    /// Closes idle connections and refuses new callers; connections in use close when
    /// they come back.
    public func close() {
        condition.lock()
        closed = true
        let toClose = idle
        idle.removeAll()
        open -= toClose.count
        condition.broadcast()
        condition.unlock()
        toClose.forEach { $0.close() }
    }

    /// Connections open now (idle or in use).
    public var openConnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return open
    }

    /// What the pool holds now, for metrics.
    public struct Statistics: Sendable, Equatable {
        /// Connections open, idle or in use.
        public var open: Int
        /// Connections open and not handed out.
        public var idle: Int
        /// Callers waiting for a connection now.
        public var waiting: Int
        /// Callers that had to wait for a connection, since the pool was made.
        public var waitedTotal: Int
    }

    /// The pool's counts now.
    public var statistics: Statistics {
        condition.lock()
        defer { condition.unlock() }
        return Statistics(open: open, idle: idle.count, waiting: waitingNow, waitedTotal: waitedTotal)
    }

    private func acquire(forceNew: Bool = false) throws -> PostgresConnection {
        condition.lock()
        let deadline = Date().addingTimeInterval(waitLimit)
        var waited = false
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(kind: .poolClosed, message: "shutting down")
            }
            if !forceNew, let connection = idle.popLast() {
                condition.unlock()
                if connection.isAliveWithoutSending { return connection }
                discard(connection)
                condition.lock()
                continue
            }
            if forceNew, !idle.isEmpty {
                // Make room by dropping an idle one: it is likely as dead as the one that failed.
                let stale = idle.removeFirst()
                open -= 1
                condition.unlock()
                stale.close()
                condition.lock()
                continue
            }
            if open < maxConnections {
                open += 1
                condition.unlock()
                do {
                    let connection = try PostgresConnection(info: info.get())
                    do {
                        try connection.setSessionSettings(sessionSettings)
                    } catch {
                        connection.close()
                        throw error
                    }
                    return connection
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if !waited { waitedTotal += 1 }
            waited = true
            waitingNow += 1
            let woken = condition.wait(until: deadline)
            waitingNow -= 1
            if !woken {
                condition.unlock()
                throw PostgresError(kind: .poolTimeout, message: "all \(maxConnections) connections busy for \(Int(waitLimit)) s")
            }
        }
    }

    /// A connection that sent a statement with more parameter bytes than this is closed when
    /// it comes back instead of kept idle: libpq would hold a buffer that large until then (a
    /// Stridee workout of tens of MB, on each of the pool's connections in turn).
    public static let largeStatementBytes = 2 * 1_048_576

    private func release(_ connection: PostgresConnection) {
        if connection.isInTransaction { connection.rollbackQuietly() }
        guard connection.isIdleAndHealthy, connection.largestStatementBytes <= Self.largeStatementBytes else { return discard(connection) }
        condition.lock()
        if closed {
            open -= 1
            condition.unlock()
            connection.close()
            return
        }
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    private func discard(_ connection: PostgresConnection) {
        connection.close()
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
