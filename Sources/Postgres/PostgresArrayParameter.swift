/// A one-dimensional array sent as a binary-format `$n` parameter: `float8[]`, `int8[]`,
/// `timestamptz[]`, `text[]`, `json[]` or `bool[]`, so thousands of route points, stream samples
/// or wellness items travel as one value with no text formatting or parsing on either side.
///
/// PostgreSQL's binary array format (`array_recv` in src/backend/utils/adt/arrayfuncs.c), all
/// integers big-endian: the number of dimensions (1, or 0 for an empty array), a has-nulls flag,
/// the element type's OID, then per dimension its length and lower bound (1), then each element
/// as a 4-byte length (-1 for NULL) followed by its binary value: `float8` the IEEE 754 bits,
/// `int8` the integer, `timestamptz` microseconds since 2000-01-01 00:00:00 UTC, `text` and
/// `json` the UTF-8 bytes, `bool` one byte.
public struct PostgresArrayParameter: PostgresBindable {
    /// The encoded array.
    public let postgresParameter: PostgresParameter

    /// `float8[]` (OID 1022) of the values; NaN and ±infinity travel as PostgreSQL's own.
    public static func float8(_ values: [Double]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1022, elementOID: 701, count: values.count, nullCount: 0) { index in
            values[index].bitPattern
        }
    }

    /// `float8[]` (OID 1022) with `nil` elements sent as SQL NULL.
    public static func float8(_ values: [Double?]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1022, elementOID: 701, count: values.count, nullCount: values.count(where: { $0 == nil })) { index in
            values[index]?.bitPattern
        }
    }

    /// `int8[]` (OID 1016) of the values.
    public static func int8(_ values: [Int64]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1016, elementOID: 20, count: values.count, nullCount: 0) { index in
            UInt64(bitPattern: values[index])
        }
    }

    /// `int8[]` (OID 1016) with `nil` elements sent as SQL NULL.
    public static func int8(_ values: [Int64?]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1016, elementOID: 20, count: values.count, nullCount: values.count(where: { $0 == nil })) { index in
            values[index].map { UInt64(bitPattern: $0) }
        }
    }

    /// `timestamptz[]` (OID 1185) of instants given as microseconds since 1970-01-01 00:00:00 UTC.
    ///
    /// Instants are shifted to PostgreSQL's epoch, 2000-01-01 (946,684,800 s later). Values the
    /// shift would overflow are outside what `timestamptz` holds, and the server refuses them.
    public static func timestamptz(microsecondsSinceEpoch values: [Int64]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1185, elementOID: 1184, count: values.count, nullCount: 0) { index in
            UInt64(bitPattern: values[index] &- postgresEpochMicroseconds)
        }
    }

    /// `timestamptz[]` (OID 1185) with `nil` elements sent as SQL NULL.
    public static func timestamptz(microsecondsSinceEpoch values: [Int64?]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1185, elementOID: 1184, count: values.count, nullCount: values.count(where: { $0 == nil })) { index in
            values[index].map { UInt64(bitPattern: $0 &- postgresEpochMicroseconds) }
        }
    }

    /// `text[]` (OID 1009) of the strings' UTF-8 bytes, `nil` elements sent as SQL NULL.
    public static func text(_ values: [String?]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1009, elementOID: 25, elements: values.map { $0.map { Array($0.utf8) } })
    }

    /// `json[]` (OID 199) of JSON texts, sent as they are: the server checks each is JSON
    /// (`json_recv`) and keeps its exact text.
    public static func json(_ values: [String]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 199, elementOID: 114, elements: values.map { Array($0.utf8) })
    }

    /// `bool[]` (OID 1000) of the values.
    public static func bool(_ values: [Bool]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1000, elementOID: 16, elements: values.map { [$0 ? 1 : 0] })
    }

    /// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 00:00:00 UTC).
    public static let postgresEpochMicroseconds: Int64 = 946_684_800 * 1_000_000

    /// Encodes elements of any length, each its binary value's bytes, or nil for NULL.
    private init(arrayOID: UInt32, elementOID: UInt32, elements: [[UInt8]?]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20 + elements.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        func put32(_ value: UInt32) {
            withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
        }
        put32(elements.isEmpty ? 0 : 1)
        put32(elements.contains { $0 == nil } ? 1 : 0)
        put32(elementOID)
        if !elements.isEmpty {
            put32(UInt32(elements.count))
            put32(1)
            for element in elements {
                if let element {
                    put32(UInt32(element.count))
                    bytes.append(contentsOf: element)
                } else {
                    put32(UInt32(bitPattern: -1))
                }
            }
        }
        postgresParameter = PostgresParameter(bytes: bytes, format: .binary, typeOID: arrayOID)
    }

    /// Encodes `count` eight-byte elements, `nullCount` of them NULL; `element(i)` is the i-th
    /// value's bits, or nil for NULL. The bytes are allocated at their exact size and written
    /// once (a NULL takes 4 bytes, a value 12): a route of 650,000 points is ~40 MB of these.
    private init(arrayOID: UInt32, elementOID: UInt32, count: Int, nullCount: Int, element: (Int) -> UInt64?) {
        let header = count == 0 ? 12 : 20
        var used = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: header + count * 4 + (count - nullCount) * 8) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            func put32(_ value: UInt32) {
                raw.storeBytes(of: value.bigEndian, toByteOffset: used, as: UInt32.self)
                used += 4
            }
            defer { initialized = used }
            put32(count == 0 ? 0 : 1)
            put32(nullCount > 0 ? 1 : 0)
            put32(elementOID)
            guard count > 0 else { return }
            put32(UInt32(count))
            put32(1)
            for index in 0..<count {
                if let bits = element(index) {
                    put32(8)
                    raw.storeBytes(of: bits.bigEndian, toByteOffset: used, as: UInt64.self)
                    used += 8
                } else {
                    put32(UInt32(bitPattern: -1))
                }
            }
        }
        precondition(used == bytes.count, "nullCount is the number of nil elements")
        postgresParameter = PostgresParameter(bytes: bytes, format: .binary, typeOID: arrayOID)
    }
}
