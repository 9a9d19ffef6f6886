/// The one place text becomes HTML: every value that came from a client (a source name, a
/// workout name, a unit, a quarantine reason, a person) goes through `escape` before it is
/// written into a page, in element content and in attribute values alike.
public enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, so it reads
    /// as the same text inside an element or a quoted attribute and can never open a tag.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
