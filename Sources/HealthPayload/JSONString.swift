/// Escaping text into JSON string literals (RFC 8259 §7), without Foundation.
///
/// Escapes `"` and `\`, writes `\b \f \n \r \t` for those controls and `\u00XX` for the other
/// C0 controls; everything else (including non-ASCII) is copied as UTF-8. A NUL character becomes
/// `\u0000`, which is valid JSON but which PostgreSQL `jsonb` rejects: callers that feed PostgreSQL
/// must not pass NUL (`PayloadDecoder` never does: a NUL byte makes the body invalid).
public enum JSONString {
    /// `text` as a quoted JSON string literal, e.g. `a"b` → `"a\"b"`.
    public static func quoted(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 2)
        append(quoting: text, to: &out)
        return out
    }

    /// Appends `text` as a quoted JSON string literal to `out`.
    public static func append(quoting text: some StringProtocol, to out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        append(quoting: text, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as a quoted JSON string literal to a UTF-8 byte buffer.
    public static func append(quoting text: some StringProtocol, to out: inout [UInt8]) {
        var text = String(text)
        text.withUTF8 { append(quotingUTF8: $0, to: &out) }
    }

    /// Appends already-valid UTF-8 bytes as a quoted JSON string literal to a UTF-8 byte buffer.
    public static func append(quotingUTF8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let c = bytes[i]
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
            out.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigit(c >> 4), hexDigit(c & 0xF)])
            }
            i += 1
            runStart = i
        }
        if runStart < n { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<n])) }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func hexDigit(_ v: UInt8) -> UInt8 {
        v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10
    }
}
