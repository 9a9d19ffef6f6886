/// What a JSON number literal (RFC 8259 §6) means to PostgreSQL.
///
/// PostgreSQL stores a jsonb number as `numeric`: its input rejects a written exponent outside
/// ±1000 (`NUMERIC_MAX_PRECISION` in numeric.c) and a scale beyond 16383 digits, and casting to
/// `double precision` fails on overflow and on underflow to zero. These flags let the validator
/// quarantine such a sample instead of letting its batch fail in the database.
struct JSONNumberInfo: OptionSet, Sendable {
    let rawValue: UInt8
    /// No fraction and no exponent.
    static let integer = JSONNumberInfo(rawValue: 1 << 0)
    /// Every digit is zero.
    static let zero = JSONNumberInfo(rawValue: 1 << 1)
    /// Written or effective decimal exponent outside ±1000, or more than 1000 digits: PostgreSQL's numeric input may reject it.
    static let outOfRange = JSONNumberInfo(rawValue: 1 << 2)
    /// Not finite as a Double (overflows `double precision`).
    static let notFinite = JSONNumberInfo(rawValue: 1 << 3)
    /// Non-zero with magnitude below 1e-300 (`double precision` underflow in PostgreSQL).
    static let tiny = JSONNumberInfo(rawValue: 1 << 4)
    /// Magnitude above 10^`JSONNumber.summableExponent` (1e15), exactly as written: more than the rollups may sum.
    static let huge = JSONNumberInfo(rawValue: 1 << 5)
}

/// Scanning JSON number literals over bytes, shared by the JSON parser and the CSV cell typing.
enum JSONNumber {
    /// The limit on written and effective decimal exponents, and on the digit count.
    static let exponentLimit = 1000
    /// The power of ten above which a magnitude is `.huge`: 10^15. No Apple Health quantity comes
    /// near it, and a sum of millions of values this large stays finite in `double precision`,
    /// so the rollups (which sum and average them) can never overflow (docs/receiver.md).
    static let summableExponent = 15

    /// Scans one number literal starting at `start`; returns its end offset and meaning, or nil when
    /// the bytes there do not start with a valid RFC 8259 number (NaN, Infinity, `+1`, `.5`, `01` → nil or a short match).
    /// The caller decides what may follow the literal.
    static func scan(_ b: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> (end: Int, info: JSONNumberInfo)? {
        var i = start
        if i < end && b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < end else { return nil }
        var info: JSONNumberInfo = .integer
        // The power of ten of the first non-zero digit, when there is one.
        var lead: Int? = nil
        var digits = 0
        let c0 = b[i]
        if c0 == UInt8(ascii: "0") {
            i += 1
            digits = 1
        } else if c0 >= UInt8(ascii: "1") && c0 <= UInt8(ascii: "9") {
            let intStart = i
            while i < end && b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") { i += 1 }
            digits = i - intStart
            lead = digits - 1
        } else {
            return nil
        }
        if i < end && b[i] == UInt8(ascii: ".") {
            info.remove(.integer)
            i += 1
            let fracStart = i
            while i < end && b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") {
                if lead == nil && b[i] != UInt8(ascii: "0") { lead = -(i - fracStart + 1) }
                i += 1
            }
            guard i > fracStart else { return nil }
            digits += i - fracStart
        }
        var exponent = 0
        if i < end && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            info.remove(.integer)
            i += 1
            var negative = false
            if i < end && (b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-")) {
                negative = b[i] == UInt8(ascii: "-")
                i += 1
            }
            let expStart = i
            while i < end && b[i] >= UInt8(ascii: "0") && b[i] <= UInt8(ascii: "9") {
                // Saturate: anything past the limit is out of range anyway.
                if exponent <= 1_000_000 { exponent = exponent * 10 + Int(b[i] - UInt8(ascii: "0")) }
                i += 1
            }
            guard i > expStart else { return nil }
            if negative { exponent = -exponent }
        }
        if exponent > exponentLimit || exponent < -exponentLimit || digits > exponentLimit {
            info.insert(.outOfRange)
        }
        if let lead {
            let effective = lead + exponent
            if effective > exponentLimit || effective < -exponentLimit { info.insert(.outOfRange) }
            if effective >= 309 {
                info.insert(.notFinite)
            } else if effective == 308 {
                // Near Double.greatestFiniteMagnitude: let the standard library round it.
                let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
                if !(Double(text)?.isFinite ?? false) { info.insert(.notFinite) }
            }
            if effective <= -301 { info.insert(.tiny) }
            if effective > summableExponent || (effective == summableExponent && !isPowerOfTen(b, start..<i)) {
                info.insert(.huge)
            }
        } else {
            info.insert(.zero)
        }
        return (i, info)
    }

    /// True when the literal's digits are one `1` and zeros (`1e15`, `10.0e14`, `0.001e18`), so
    /// that, with its effective exponent, it is exactly a power of ten.
    private static func isPowerOfTen(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var seenOne = false
        for i in range {
            let c = b[i]
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            if c == UInt8(ascii: "1") && !seenOne {
                seenOne = true
            } else if c >= UInt8(ascii: "1") && c <= UInt8(ascii: "9") {
                return false
            }
        }
        return seenOne
    }

    /// True when `b[range]` is exactly one number literal.
    static func isLiteral(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> JSONNumberInfo? {
        guard let (end, info) = scan(b, from: range.lowerBound, to: range.upperBound), end == range.upperBound else { return nil }
        return info
    }

    /// The value of an integer literal (`-?[0-9]+`, as `scan` accepted it) when it fits `Int32`.
    static func int32Value(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int32? {
        var i = range.lowerBound
        var negative = false
        if i < range.upperBound && b[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < range.upperBound, range.upperBound - i <= 10 else { return nil }
        var value: Int64 = 0
        while i < range.upperBound {
            let d = b[i]
            guard d >= UInt8(ascii: "0") && d <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(d - UInt8(ascii: "0"))
            i += 1
        }
        if negative { value = -value }
        return Int32(exactly: value)
    }
}
