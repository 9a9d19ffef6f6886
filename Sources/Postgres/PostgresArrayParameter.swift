/// A one-dimensional array sent as a binary-format `$n` parameter: `float8[]`, `int8[]` or
/// `timestamptz[]`, so thousands of route points or stream samples travel as one value with no
/// text formatting or parsing on either side.
///
/// PostgreSQL's binary array format (`array_recv` in src/backend/utils/adt/arrayfuncs.c), all
/// integers big-endian: the number of dimensions (1, or 0 for an empty array), a has-nulls flag,
/// the element type's OID, then per dimension its length and lower bound (1), then each element
/// as a 4-byte length (-1 for NULL) followed by its binary value: `float8` the IEEE 754 bits,
/// `int8` the integer, `timestamptz` microseconds since 2000-01-01 00:00:00 UTC.
public struct PostgresArrayParameter: PostgresBindable {
    /// The encoded array.
    public let postgresParameter: PostgresParameter

    /// `float8[]` (OID 1022) of the values; NaN and ±infinity travel as PostgreSQL's own.
    public static func float8(_ values: [Double]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1022, elementOID: 701, count: values.count, nulls: false) { index in
            values[index].bitPattern
        }
    }

    /// `float8[]` (OID 1022) with `nil` elements sent as SQL NULL.
    public static func float8(_ values: [Double?]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1022, elementOID: 701, count: values.count, nulls: values.contains(nil)) { index in
            values[index]?.bitPattern
        }
    }

    /// `int8[]` (OID 1016) of the values.
    public static func int8(_ values: [Int64]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1016, elementOID: 20, count: values.count, nulls: false) { index in
            UInt64(bitPattern: values[index])
        }
    }

    /// `timestamptz[]` (OID 1185) of instants given as microseconds since 1970-01-01 00:00:00 UTC.
    ///
    /// Instants are shifted to PostgreSQL's epoch, 2000-01-01 (946,684,800 s later). Values the
    /// shift would overflow are outside what `timestamptz` holds, and the server refuses them.
    public static func timestamptz(microsecondsSinceEpoch values: [Int64]) -> PostgresArrayParameter {
        PostgresArrayParameter(arrayOID: 1185, elementOID: 1184, count: values.count, nulls: false) { index in
            UInt64(bitPattern: values[index] &- postgresEpochMicroseconds)
        }
    }

    /// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 00:00:00 UTC).
    public static let postgresEpochMicroseconds: Int64 = 946_684_800 * 1_000_000

    /// Encodes `count` eight-byte elements; `element(i)` is the i-th value's bits, or nil for NULL.
    private init(arrayOID: UInt32, elementOID: UInt32, count: Int, nulls: Bool, element: (Int) -> UInt64?) {
        let header = count == 0 ? 12 : 20
        var bytes = [UInt8](repeating: 0, count: header + count * 12)
        var used = 0
        bytes.withUnsafeMutableBytes { raw in
            func put32(_ value: UInt32) {
                raw.storeBytes(of: value.bigEndian, toByteOffset: used, as: UInt32.self)
                used += 4
            }
            put32(count == 0 ? 0 : 1)
            put32(nulls ? 1 : 0)
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
        bytes.removeLast(bytes.count - used)
        postgresParameter = PostgresParameter(bytes: bytes, format: .binary, typeOID: arrayOID)
    }
}
