import Foundation

/// The few request parts the page reads by hand: cookies, a form body, the origin of a POST.
public enum RequestParts {
    /// The value of cookie `name` in a `Cookie` header (`a=1; b=2`), or nil.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "=") else { continue }
            if trimmed[..<equals] == name { return String(trimmed[trimmed.index(after: equals)...]) }
        }
        return nil
    }

    /// The fields of an `application/x-www-form-urlencoded` body; nil when it is not
    /// valid UTF-8 or percent-encoding.
    static func form(_ body: [UInt8]) -> [String: String]? {
        guard let text = String(validating: body, as: UTF8.self) else { return nil }
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    /// Whether a POST comes from a page of this server: its `Origin` names the same host
    /// and port as its `Host` (either scheme, for a TLS proxy in front). A missing or `null`
    /// Origin is refused: every browser sends one on a POST.
    public static func sameOrigin(origin: String?, host: String?) -> Bool {
        guard let origin, let host, !host.isEmpty else { return false }
        for scheme in ["http://", "https://"] where origin.lowercased().hasPrefix(scheme) {
            return origin.dropFirst(scheme.count).lowercased() == host.lowercased()
        }
        return false
    }
}
