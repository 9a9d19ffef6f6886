import CLibPQ
import Foundation

/// One libpq connection.
///
/// Not thread-safe: one thread uses it at a time, which `PostgresPool` enforces; hence
/// `@unchecked Sendable`. Every call blocks, so call it from a thread of your own (an HTTP
/// connection thread, a command's main thread), never from the Swift concurrency pool.
public final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?

    /// Opens a connection.
    ///
    /// - Parameter connectionString: a libpq keyword string (`host=… dbname=…`) or URI
    ///   (`postgresql://…`); empty uses libpq's `PG*` environment variables and defaults.
    ///   It never appears in an error.
    public init(connectionString: String) throws {
        // expand_dbname = 1: the dbname value may itself be a full conninfo string or URI,
        // whose settings win over the defaults listed before it.
        let keys = ["connect_timeout", "fallback_application_name", "dbname"]
        let values = ["10", "health-warehouse", connectionString]
        let conn: OpaquePointer? = withCStrings(keys) { k in
            withCStrings(values) { v in
                PQconnectdbParams(k, v, 1)
            }
        }
        guard let conn else {
            throw PostgresError(kind: .connectionFailed, message: "out of memory")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(conn)).trimmingTrailingNewlines()
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

    /// Runs one statement with `$n` parameters (`nil` is SQL NULL) and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> PostgresRows {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        let params = parameters.map { $0?.postgresParameter }
        let count = Int32(params.count)
        var types = params.map { $0?.typeOID ?? 0 }
        var lengths = params.map { Int32($0?.bytes.count ?? 0) }
        var formats = params.map { $0?.format.rawValue ?? 0 }
        // One allocation per parameter, freed when the call returns; text parameters need a
        // NUL terminator, binary ones are read by length.
        var buffers: [UnsafeMutablePointer<CChar>?] = params.map { param in
            guard let param else { return nil }
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: param.bytes.count + 1)
            param.bytes.withUnsafeBufferPointer { src in
                src.withMemoryRebound(to: CChar.self) { s in
                    if let base = s.baseAddress { p.initialize(from: base, count: s.count) }
                }
            }
            p[param.bytes.count] = 0
            return p
        }
        defer { for b in buffers { b?.deallocate() } }
        let result: OpaquePointer? = buffers.withUnsafeMutableBufferPointer { values in
            values.withMemoryRebound(to: UnsafePointer<CChar>?.self) { v in
                PQexecParams(handle, sql, count, &types, v.baseAddress, &lengths, &formats, 0)
            }
        }
        return try check(result)
    }

    /// Runs SQL text that may hold several statements, with no parameters (migrations).
    public func execute(script sql: String) throws {
        guard let handle else {
            throw PostgresError(kind: .connectionLost, message: "the connection is closed")
        }
        _ = try check(PQexec(handle, sql))
    }

    /// Runs `body` inside `BEGIN … COMMIT`; any error thrown rolls back and is rethrown.
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
        do {
            try query("COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        return value
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
