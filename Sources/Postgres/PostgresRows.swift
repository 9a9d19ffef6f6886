import CLibPQ
import Foundation

/// The rows a statement returned, in text format. Frees the libpq result when released.
public final class PostgresRows: @unchecked Sendable, RandomAccessCollection {
    // Immutable after init and read-only afterwards, so sharing across threads is safe.
    private let result: OpaquePointer

    init(result: OpaquePointer) {
        self.result = result
    }

    deinit { PQclear(result) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { Int(PQntuples(result)) }

    public subscript(position: Int) -> PostgresRow { PostgresRow(rows: self, index: Int32(position)) }

    /// Column names, in order.
    public var columns: [String] {
        (0..<PQnfields(result)).map { String(cString: PQfname(result, $0)) }
    }

    /// The command tag the server sent (`COMMIT`, `ROLLBACK`, `INSERT 0 3`, `SELECT 1`).
    public var commandTag: String {
        String(cString: PQcmdStatus(result))
    }

    /// The number of rows an INSERT, UPDATE or DELETE touched.
    public var affectedRows: Int {
        Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    func columnIndex(_ name: String) -> Int32? {
        let i = PQfnumber(result, name)
        return i < 0 ? nil : i
    }

    func text(row: Int32, column: Int32) -> String? {
        guard column >= 0, column < PQnfields(result), PQgetisnull(result, row, column) == 0 else { return nil }
        return String(cString: PQgetvalue(result, row, column))
    }

    func bytes(row: Int32, column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard column >= 0, column < PQnfields(result), PQgetisnull(result, row, column) == 0,
              let p = PQgetvalue(result, row, column) else { return nil }
        let n = Int(PQgetlength(result, row, column))
        return UnsafeRawPointer(p).withMemoryRebound(to: UInt8.self, capacity: n) { UnsafeBufferPointer(start: $0, count: n) }
    }
}

/// One row of a result.
public struct PostgresRow: Sendable {
    let rows: PostgresRows
    let index: Int32

    /// The raw text of a column, `nil` for SQL NULL or no such column.
    public subscript(column: Int) -> String? {
        guard let column = Int32(exactly: column) else { return nil }
        return rows.text(row: index, column: column)
    }

    /// The raw text of a named column, `nil` for SQL NULL or no such column.
    public subscript(column: String) -> String? {
        guard let c = rows.columnIndex(column) else { return nil }
        return rows.text(row: index, column: c)
    }

    /// A column decoded as `T`; throws on NULL or text that is not a `T`.
    public func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T {
        guard let value = try decodeIfPresent(column, as: type) else {
            throw PostgresError(kind: .decoding, message: "column \(column) is NULL, expected \(T.self)")
        }
        return value
    }

    /// A column decoded as `T`, or `nil` for SQL NULL.
    public func decodeIfPresent<T: PostgresDecodable>(_ column: Int, as type: T.Type = T.self) throws -> T? {
        guard let number = Int32(exactly: column), let text = rows.text(row: index, column: number) else { return nil }
        guard let value = T(postgresText: text) else {
            throw PostgresError(kind: .decoding, message: "column \(column) is not a \(T.self)")
        }
        return value
    }

    /// A named column decoded as `T`; throws on NULL, a missing column or text that is not a `T`.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let c = rows.columnIndex(column) else {
            throw PostgresError(kind: .decoding, message: "no column named \(column)")
        }
        return try decode(Int(c), as: type)
    }

    /// A named column decoded as `T`, or `nil` for SQL NULL.
    public func decodeIfPresent<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T? {
        guard let c = rows.columnIndex(column) else {
            throw PostgresError(kind: .decoding, message: "no column named \(column)")
        }
        return try decodeIfPresent(Int(c), as: type)
    }
}

/// A Swift type that can be read from PostgreSQL's text output.
public protocol PostgresDecodable {
    init?(postgresText: String)
}

extension String: PostgresDecodable {
    public init?(postgresText: String) { self = postgresText }
}

extension Int: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int64: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int32: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Double: PostgresDecodable {
    public init?(postgresText: String) {
        switch postgresText {
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        case "NaN": self = .nan
        default: self.init(postgresText)
        }
    }
}

extension Bool: PostgresDecodable {
    public init?(postgresText: String) {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresText: String) { self.init(uuidString: postgresText) }
}

extension Date: PostgresDecodable {
    public init?(postgresText: String) {
        guard let date = PostgresTimestamp.parse(postgresText) else { return nil }
        self = date
    }
}
