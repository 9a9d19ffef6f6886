import CLibPQ
import Foundation

/// One libpq connection.
///
/// Not thread-safe: one thread uses it at a time, which `PostgresPool` enforces; hence
/// `@unchecked Sendable`. Every call blocks, so call it from a thread of your own (an HTTP
/// connection thread, a command's main thread), never from the Swift concurrency pool.
public final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// Statements that went out whole (libpq flushed them), ever, and at the last `markUnsent()`.
    private var sentCount = 0
    private var sentCountAtMark = 0

    /// The most parameter bytes one statement on this connection has sent. libpq keeps its
    /// output buffer at the size of the largest message until the connection closes, so a pool
    /// closes a connection that sent a large one rather than keep that memory (`PostgresPool`).
    public private(set) var largestStatementBytes = 0

    /// Opens a connection from a connection string.
    ///
    /// - Parameter connectionString: a libpq keyword string (`host=… dbname=…`) or URI
    ///   (`postgresql://…`), read by libpq (`PostgresConnectionInfo(parsing:)`); empty uses
    ///   libpq's `PG*` environment variables and defaults. It never appears in an error.
    public convenience init(connectionString: String) throws {
        try self.init(info: PostgresConnectionInfo(parsing: connectionString))
    }

    /// Opens a connection from keyword/value settings (`PQconnectdbParams`).
    ///
    /// A 10 s `connect_timeout` and the application name `health-warehouse` apply unless
    /// `info` sets them. The password never appears in an error.
    public init(info: PostgresConnectionInfo) throws {
        let settings = PostgresConnectionInfo([("connect_timeout", "10"), ("fallback_application_name", "health-warehouse")])
            .merging(info)
        // expand_dbname = 0: every value is taken as it is; the string was already parsed.
        let conn: OpaquePointer? = withCStrings(settings.parameters.map(\.keyword)) { k in
            withCStrings(settings.parameters.map(\.value)) { v in
                PQconnectdbParams(k, v, 0)
            }
        }
        guard let conn else {
            throw PostgresError(kind: .connectionFailed, message: "out of memory")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            // libpq may echo what it was given; a password must never travel on in an error.
            let message = info.redacting(String(cString: PQerrorMessage(conn)).joiningLines())
            PQfinish(conn)
            throw PostgresError(kind: .connectionFailed, message: message)
        }
        PQsetNoticeProcessor(conn, { _, _ in }, nil) // NOTICEs ("already exists, skipping") are not ours to print
        handle = conn
    }

    deinit { close() }

    /// Closes the connection; later calls fail with `connectionLost`.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// True when the connection is open and not inside a transaction: fit to hand out.
    public var isIdleAndHealthy: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// True while a transaction is open (or failed and not rolled back).
    public var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// The server's version number (`150018` for 15.18).
    public var serverVersion: Int {
        guard let handle else { return 0 }
        return Int(PQserverVersion(handle))
    }

    /// The PID of the server process behind this connection.
    public var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Whether the connection still looks alive, found out without sending anything.
    ///
    /// An idle server sends nothing unasked, except when it is going away: a backend ended by
    /// a restart, a crash or `pg_terminate_backend` sends a FATAL error and closes its end.
    /// So an idle connection with something to read is taken as dead. (Sending first would
    /// not tell: libpq reports a failed write only after reading what the server said, so
    /// the statement would count as sent.)
    public var isAliveWithoutSending: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        var probe = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&probe, 1, 0) == 0
    }

    /// Whether any statement went out on this connection since `markUnsent()`; a statement
    /// whose sending failed did not (the server cannot run half a message).
    public var sentSinceMark: Bool { sentCount > sentCountAtMark }

    /// Starts counting anew for `sentSinceMark` (the pool calls it when it hands the
    /// connection out).
    public func markUnsent() { sentCountAtMark = sentCount }

    /// Runs one statement with `$n` parameters (`nil` is SQL NULL) and returns its rows.
    ///
    /// Throws `parameterTooLarge` for a parameter of 2 GiB or more (libpq's lengths are 32-bit)
    /// instead of trapping.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> PostgresRows {
        try finish(dispatched: try dispatch(sql, parameters))
    }

    /// Runs one statement and calls `each` with its rows one at a time, as they arrive (libpq's
    /// single-row mode): memory holds one row whatever the result's size, and unlike a cursor
    /// the statement may use a parallel plan. When `each` throws, the rest of the result is
    /// read and dropped (the connection stays usable) and the error rethrown.
    public func forEachRow(_ sql: String, _ parameters: [(any PostgresBindable)?] = [],
                           _ each: (PostgresRow) throws -> Void) throws {
        let dispatched = try dispatch(sql, parameters)
        guard dispatched == 1, let handle, PQsetSingleRowMode(handle) == 1 else {
            _ = try finish(dispatched: dispatched)
            return
        }
        sentCount += 1
        var failure: (any Error)?
        while let result = PQgetResult(handle) {
            if failure != nil || PQstatus(handle) == CONNECTION_BAD {
                PQclear(result)
                if PQstatus(handle) == CONNECTION_BAD { break }
                continue
            }
            do {
                let rows = try check(result)
                for row in rows { try each(row) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        if PQstatus(handle) == CONNECTION_BAD {
            throw PostgresError(kind: .connectionLost, message: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        }
    }

    /// Sends one statement with its parameters; libpq's answer (1 when it went out whole).
    private func dispatch(_ sql: String, _ parameters: [(any PostgresBindable)?]) throws -> Int32 {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        let params = parameters.map { $0?.postgresParameter }
        let sizes = params.map { $0?.bytes.count ?? 0 }
        let (count, checkedLengths) = try Self.libpqSizes(sizes)
        var lengths = checkedLengths
        var types = params.map { $0?.typeOID ?? 0 }
        var formats = params.map { $0?.format.rawValue ?? 0 }
        largestStatementBytes = max(largestStatementBytes, sizes.reduce(0, +))
        // Binary parameters are read by length straight from their own storage (a workout's
        // arrays are tens of MB: no copy); only text ones get a NUL-terminated copy.
        return Self.withValuePointers(params, from: 0, into: []) { values in
            values.withUnsafeBufferPointer { v in
                PQsendQueryParams(handle, sql, count, &types, v.baseAddress, &lengths, &formats, 0)
            }
        }
    }

    /// Calls `body` with a pointer to each parameter's bytes (nil for SQL NULL), valid for the
    /// call: a binary parameter's own storage, a text parameter's NUL-terminated copy.
    private static func withValuePointers<R>(_ params: [PostgresParameter?], from index: Int, into pointers: [UnsafePointer<CChar>?],
                                             _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        guard index < params.count else { return body(pointers) }
        guard let param = params[index] else { return withValuePointers(params, from: index + 1, into: pointers + [nil], body) }
        if param.format == .binary {
            return param.bytes.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    // An empty binary value still needs a non-NULL pointer (NULL means SQL NULL).
                    let pointer = chars.baseAddress.map(UnsafePointer.init) ?? emptyValue
                    return withValuePointers(params, from: index + 1, into: pointers + [pointer], body)
                }
            }
        }
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: param.bytes.count + 1)
        defer { copy.deallocate() }
        param.bytes.withUnsafeBufferPointer { src in
            src.withMemoryRebound(to: CChar.self) { s in
                if let base = s.baseAddress { copy.initialize(from: base, count: s.count) }
            }
        }
        copy[param.bytes.count] = 0
        return withValuePointers(params, from: index + 1, into: pointers + [UnsafePointer(copy)], body)
    }

    /// A valid pointer for a binary parameter of no bytes.
    nonisolated(unsafe) private static let emptyValue: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    /// The parameter count and lengths as libpq's 32-bit integers; a size that does not fit
    /// throws `parameterTooLarge` instead of trapping.
    static func libpqSizes(_ sizes: [Int]) throws(PostgresError) -> (count: Int32, lengths: [Int32]) {
        guard let count = Int32(exactly: sizes.count) else {
            throw PostgresError(kind: .parameterTooLarge, message: "\(sizes.count) parameters is more than libpq can send")
        }
        var lengths: [Int32] = []
        lengths.reserveCapacity(sizes.count)
        for (index, size) in sizes.enumerated() {
            guard let length = Int32(exactly: size) else {
                throw PostgresError(kind: .parameterTooLarge,
                                    message: "parameter $\(index + 1) is \(size) bytes; libpq sends at most \(Int32.max)")
            }
            lengths.append(length)
        }
        return (count, lengths)
    }

    /// Runs SQL text that may hold several statements, with no parameters (migrations).
    public func execute(script sql: String) throws {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        _ = try finish(dispatched: PQsendQuery(handle, sql))
    }

    /// Collects the results of a statement sent with `PQsend…` as `PQexec` would (the last
    /// one, stopping at a broken connection), noting whether it went out at all.
    private func finish(dispatched: Int32) throws -> PostgresRows {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        guard dispatched == 1 else {
            // Not sent (or not whole): nothing of it can have run.
            throw PostgresError(kind: PQstatus(handle) == CONNECTION_OK ? .server : .connectionLost,
                                message: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        }
        sentCount += 1
        var last: OpaquePointer?
        while let result = PQgetResult(handle) {
            if let previous = last { PQclear(previous) }
            last = result
            if PQstatus(handle) == CONNECTION_BAD { break }
        }
        return try check(last)
    }

    /// Runs `body` inside `BEGIN … COMMIT`; any error thrown rolls back and is rethrown.
    ///
    /// The `COMMIT` is checked (`commit()`): a transaction the server rolled back at `COMMIT`
    /// throws SQLSTATE 25P02, and a connection lost once `COMMIT` was sent throws
    /// `commitOutcomeUnknown`, never a success.
    @discardableResult
    public func withTransaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try query("BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackQuietly()
            throw error
        }
        try commit()
        return value
    }

    /// Commits the open transaction, checked: a transaction the server rolled back at `COMMIT`
    /// (a failed statement inside it was caught and ignored) throws SQLSTATE 25P02, and a
    /// connection lost once `COMMIT` was sent throws `commitOutcomeUnknown`, never a success.
    /// Any other failure rolls back and is rethrown.
    public func commit() throws {
        let outcome: PostgresRows
        let sentBeforeCommit = sentCount
        do {
            outcome = try query("COMMIT")
        } catch let error as PostgresError where error.kind == .connectionLost && sentCount > sentBeforeCommit {
            throw PostgresError(kind: .commitOutcomeUnknown, sqlState: error.sqlState, message: error.message)
        } catch {
            rollbackQuietly()
            throw error
        }
        guard outcome.commandTag == "COMMIT" else {
            throw PostgresError(kind: .server, sqlState: SQLState.inFailedTransaction,
                                message: "COMMIT rolled the transaction back (\(outcome.commandTag)): a statement inside it had failed")
        }
    }

    /// Runs `body` inside a savepoint of the open transaction: an error thrown undoes what
    /// `body` did, and only that (the transaction stays usable), and is rethrown.
    @discardableResult
    public func withSavepoint<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try query("SAVEPOINT hw_step")
        let value: T
        do {
            value = try body(self)
        } catch {
            if isInTransaction, (try? query("ROLLBACK TO SAVEPOINT hw_step")) != nil {
                _ = try? query("RELEASE SAVEPOINT hw_step")
            }
            throw error
        }
        try query("RELEASE SAVEPOINT hw_step")
        return value
    }

    /// Sets session settings for the rest of this connection's life, each name and value a
    /// `$n` parameter (`set_config(name, value, false)`), e.g. `lock_timeout`.
    public func setSessionSettings(_ settings: [(name: String, value: String)]) throws {
        for setting in settings {
            try query("SELECT set_config($1, $2, false)", [setting.name, setting.value])
        }
    }

    /// Rolls back whatever is open, ignoring errors: after a failure the connection must be
    /// idle again before reuse (libpq: `PQtransactionStatus` must be `PQTRANS_IDLE`).
    public func rollbackQuietly() {
        guard let handle, PQstatus(handle) == CONNECTION_OK, isInTransaction else { return }
        if let r = PQexec(handle, "ROLLBACK") { PQclear(r) }
    }

    private func check(_ result: OpaquePointer?) throws -> PostgresRows {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        guard let result else {
            throw PostgresError(kind: PQstatus(handle) == CONNECTION_OK ? .server : .connectionLost,
                                message: String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines())
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return PostgresRows(result: result)
        default:
            let error = PostgresError(result: result, connectionOK: PQstatus(handle) == CONNECTION_OK)
            PQclear(result)
            throw error
        }
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}
