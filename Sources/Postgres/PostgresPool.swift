import Foundation

/// A small blocking pool of connections to one database.
///
/// Hands a connection to one caller at a time. A connection that comes back broken or
/// still inside a transaction is closed, never handed out again. A caller whose pooled
/// connection turns out to be dead (the server restarted while it sat idle) gets one retry
/// on a fresh connection, so a restart costs no request.
public final class PostgresPool: @unchecked Sendable {
    private let connectionString: String
    private let maxConnections: Int
    private let waitLimit: TimeInterval
    // Guards every field below.
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false

    /// - Parameters:
    ///   - connectionString: libpq keyword string or URI; never logged.
    ///   - maxConnections: at most this many connections open at once.
    ///   - waitLimit: how long a caller waits for a free connection before `poolTimeout`.
    public init(connectionString: String, maxConnections: Int = 8, waitLimit: TimeInterval = 30) {
        self.connectionString = connectionString
        self.maxConnections = max(1, maxConnections)
        self.waitLimit = waitLimit
    }

    /// Runs `body` with a connection of the pool.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let (connection, reused) = try acquire()
        do {
            let value = try body(connection)
            release(connection)
            return value
        } catch let error as PostgresError where reused && error.kind == .connectionLost {
            // An idle connection died under us before doing anything useful: retry once on a
            // fresh one. Callers' work is one transaction, so it either committed or not.
            release(connection)
            let (fresh, _) = try acquire(forceNew: true)
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

    private func acquire(forceNew: Bool = false) throws -> (PostgresConnection, reused: Bool) {
        condition.lock()
        let deadline = Date().addingTimeInterval(waitLimit)
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(kind: .poolClosed, message: "shutting down")
            }
            if !forceNew, let connection = idle.popLast() {
                condition.unlock()
                if connection.isIdleAndHealthy { return (connection, true) }
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
                    return (try PostgresConnection(connectionString: connectionString), false)
                } catch {
                    condition.lock()
                    open -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw PostgresError(kind: .poolTimeout, message: "all \(maxConnections) connections busy for \(Int(waitLimit)) s")
            }
        }
    }

    private func release(_ connection: PostgresConnection) {
        if connection.isInTransaction { connection.rollbackQuietly() }
        guard connection.isIdleAndHealthy else { return discard(connection) }
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
