import Civil
import Foundation

/// One `$n` parameter as libpq takes it: bytes, their format and, for binary, the type OID.
public struct PostgresParameter: Sendable {
    /// Text (format 0, the server parses it as the parameter's type) or binary (format 1).
    public enum Format: Int32, Sendable { case text = 0, binary = 1 }

    public var bytes: [UInt8]
    public var format: Format
    /// 0 lets the server infer the type; 25 is `text`, 17 is `bytea`.
    public var typeOID: UInt32

    public init(bytes: [UInt8], format: Format, typeOID: UInt32 = 0) {
        self.bytes = bytes
        self.format = format
        self.typeOID = typeOID
    }
}

/// A Swift value that can be sent as a `$n` parameter.
public protocol PostgresBindable: Sendable {
    var postgresParameter: PostgresParameter { get }
}

extension String: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(utf8), format: .text) }
}

extension Substring: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(utf8), format: .text) }
}

extension Int: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(String(self).utf8), format: .text) }
}

extension Int64: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(String(self).utf8), format: .text) }
}

extension Int32: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(String(self).utf8), format: .text) }
}

extension Double: PostgresBindable {
    public var postgresParameter: PostgresParameter {
        // Swift's description is the shortest form that round-trips, and PostgreSQL reads
        // "inf"/"nan" spellings as Infinity/NaN.
        let text: String
        if isNaN { text = "NaN" } else if isInfinite { text = self < 0 ? "-Infinity" : "Infinity" } else { text = "\(self)" }
        return .init(bytes: Array(text.utf8), format: .text)
    }
}

extension Bool: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array((self ? "true" : "false").utf8), format: .text) }
}

extension UUID: PostgresBindable {
    public var postgresParameter: PostgresParameter { .init(bytes: Array(uuidString.utf8), format: .text) }
}

extension Date: PostgresBindable {
    /// Sent as seconds since the epoch, which `to_timestamp` would read; as a timestamptz
    /// literal in UTC so it can be compared directly.
    public var postgresParameter: PostgresParameter {
        .init(bytes: Array(PostgresTimestamp.format(self).utf8), format: .text)
    }
}

/// Raw bytes sent as `bytea` (binary format, OID 17).
public struct PostgresBytea: PostgresBindable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var postgresParameter: PostgresParameter { .init(bytes: bytes, format: .binary, typeOID: 17) }
}

/// Large UTF-8 text (a request body) sent as a binary-format `text` parameter (OID 25):
/// libpq passes the bytes with their length, so there is no NUL terminator to add and no
/// escaping. The bytes must be valid UTF-8 without NUL, as the server checks.
public struct PostgresBinaryText: PostgresBindable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }
    public var postgresParameter: PostgresParameter { .init(bytes: bytes, format: .binary, typeOID: 25) }
}

/// PostgreSQL's text forms of `timestamptz`.
public enum PostgresTimestamp {
    /// `2026-08-21 08:25:30.123456+00`, the form the server prints with `DateStyle` ISO.
    /// An instant beyond what 64-bit microseconds hold (or not finite) is `infinity` or
    /// `-infinity`, never a trap; the server refuses one beyond its own range with an error.
    public static func format(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard let whole = Int64(exactly: micros) else {
            return micros < 0 ? "-infinity" : "infinity"
        }
        var seconds = CivilDate.floorDivide(whole, 1_000_000)
        var fraction = whole - seconds * 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        let (y, m, d) = CivilDate.civil(fromDays: Int(CivilDate.floorDivide(seconds, 86_400)))
        let secOfDay = Int(seconds - CivilDate.floorDivide(seconds, 86_400) * 86_400)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var frac = String(fraction)
        frac = String(repeating: "0", count: max(0, 6 - frac.count)) + frac
        // Astronomical year 0 is 1 BC, which is how PostgreSQL writes years before 1.
        let bc = y <= 0
        let digits = String(bc ? 1 - y : y)
        let year = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        return "\(year)-\(two(m))-\(two(d)) \(two(secOfDay / 3600)):\(two(secOfDay / 60 % 60)):\(two(secOfDay % 60)).\(frac)+00"
            + (bc ? " BC" : "")
    }

    /// Parses the server's ISO output (`2026-08-21 10:25:30.5+02`, `…+05:30`, `…-03:30:15`).
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 19, let y = digits(0, 4), b[4] == 45, let mo = digits(5, 2), b[7] == 45,
              let d = digits(8, 2), b[10] == 32 || b[10] == 84, let h = digits(11, 2), b[13] == 58,
              let mi = digits(14, 2), b[16] == 58, let s = digits(17, 2) else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        var offset = 0
        if i < b.count, b[i] == 43 || b[i] == 45 {
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = digits(i, 2) else { return nil }
            i += 2
            var om = 0, os = 0
            if i < b.count, b[i] == 58, let v = digits(i + 1, 2) { om = v; i += 3 }
            if i < b.count, b[i] == 58, let v = digits(i + 1, 2) { os = v; i += 3 }
            offset = sign * (oh * 3600 + om * 60 + os)
        } else if i < b.count, b[i] == 90 {
            i += 1
        }
        guard i == b.count else { return nil }
        let days = CivilDate.daysFromCivil(year: y, month: mo, day: d)
        let secs = Double(days * 86_400 + h * 3600 + mi * 60 + s - offset) + fraction
        return Date(timeIntervalSince1970: secs)
    }
}
