import Foundation

/// One line per event on stderr: a constant message plus `key=value` fields
/// (`http.request status=200 person=default samples=1000 ms=17`). Never a body, a token
/// or a connection string.
public enum Log {
    private static let lock = NSLock()

    /// Writes `event` with its fields, in the order given.
    public static func event(_ event: String, _ fields: KeyValuePairs<String, Any> = [:]) {
        var line = Self.timestamp() + " " + event
        for (key, value) in fields {
            line += " \(key)=\(format(value))"
        }
        line += "\n"
        lock.lock()
        FileHandle.standardError.write(Data(line.utf8))
        lock.unlock()
    }

    static func format(_ value: Any) -> String {
        let text: String
        switch value {
        case let d as Double: text = String(format: "%.1f", d)
        default: text = "\(value)"
        }
        if text.isEmpty || text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) {
            return "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return text
    }

    static func timestamp() -> String {
        var t = time(nil)
        var parts = tm()
        gmtime_r(&t, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
