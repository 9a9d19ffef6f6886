import Foundation

/// One line per event on stderr: a constant message plus `key=value` fields
/// (`http.request status=200 person=default samples=1000 ms=17`). Never a body, a token
/// or a connection string.
///
/// A field's value may come from a client (a request path) or a server (an error
/// message), so every value is escaped: control characters (newlines above all, which
/// would start a forged line) become `\n`, `\r`, `\t` or `\u{…}`, a backslash `\\`, and
/// a value holding a space, `"`, `=` or an escape is double-quoted. An event is always
/// exactly one line.
public enum Log {
    private static let lock = NSLock()

    /// Writes `event` with its fields, in the order given.
    public static func event(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        let text = line(event, fields) + "\n"
        lock.lock()
        FileHandle.standardError.write(Data(text.utf8))
        lock.unlock()
    }

    /// The line `event` writes, without its line end: time, event, escaped fields.
    public static func line(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) -> String {
        var line = Self.timestamp() + " " + escaped(event).text
        for (key, value) in fields {
            line += " \(escaped(key).text)=\(format(value))"
        }
        return line
    }

    /// A field's value as written: escaped, and quoted when it must be.
    static func format(_ value: Any) -> String {
        let text: String
        switch value {
        case let d as Double: text = String(format: "%.1f", d)
        default: text = "\(value)"
        }
        let (body, needsQuotes) = escaped(text)
        return needsQuotes || body.isEmpty ? "\"" + body + "\"" : body
    }

    /// `text` with backslashes, quotes and control characters (`controlEscape`) escaped; and
    /// whether it needs quotes.
    static func escaped(_ text: String) -> (text: String, needsQuotes: Bool) {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var needsQuotes = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""; needsQuotes = true
            case " ", "=": out.unicodeScalars.append(scalar); needsQuotes = true
            default:
                if let escape = controlEscape(scalar) {
                    out += escape
                    needsQuotes = true
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return (out, needsQuotes)
    }

    /// `text` with its control characters escaped as a log field's are (`\n`, `\r`, `\t`,
    /// `\u{…}`), and nothing else changed: for the command line's messages, which quote paths,
    /// file contents and arguments, so that none of them can start a line of its own.
    public static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { controlEscape($0) != nil }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            if let escape = controlEscape(scalar) { out += escape } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// The escape of a control character — C0, DEL, C1, and the Unicode line and paragraph
    /// separators — or nil for any other character.
    static func controlEscape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            let value = scalar.value
            guard value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029 else { return nil }
            return "\\u{" + String(value, radix: 16) + "}"
        }
    }

    static func timestamp() -> String {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
