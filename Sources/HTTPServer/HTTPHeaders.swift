/// The header fields of a request, in the order they arrived.
///
/// Lookup by name is case-insensitive (RFC 9110 §5.1); a name sent more than
/// once keeps every value.
public struct HTTPHeaders: Sendable {
    /// Every field as received: original name spelling, value, arrival order.
    public var fields: [(name: String, value: String)]

    /// Creates headers from fields in arrival order.
    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// The first value of the field `name` (case-insensitive), or `nil` when absent.
    public subscript(name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// The value of the field `name` (case-insensitive) when it came exactly once; nil when
    /// absent or repeated (a credential sent twice is neither of the two).
    public func only(_ name: String) -> String? {
        let found = values(name)
        return found.count == 1 ? found[0] : nil
    }

    /// Every value of the field `name` (case-insensitive), in arrival order; empty when absent.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Header names a reverse proxy or CDN adds (RFC 7239's `Forwarded`, RFC 9110's `Via`, and
    /// the de facto ones of nginx, Cloudflare, Akamai and others), lower case; besides these,
    /// any `X-Forwarded-…`. The one list: the receiver and the page both ask `isForwarded`.
    public static let forwardingNames: Set<String> = ["forwarded", "via", "x-real-ip", "cf-connecting-ip", "true-client-ip",
                                                      "x-client-ip"]

    /// True when the request carries any header a proxy in front of the server would have added
    /// (`forwardingNames`, or any `X-Forwarded-…`): through one, loopback is the internet.
    public var isForwarded: Bool {
        fields.contains { field in
            let name = field.name.lowercased()
            return Self.forwardingNames.contains(name) || name.hasPrefix("x-forwarded-")
        }
    }

    // Field names are ASCII tokens; comparing ASCII case-insensitively avoids
    // allocating lowercased copies for every lookup.
    private static func sameName(_ a: String, _ b: String) -> Bool {
        let a = a.utf8, b = b.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { lowerASCII($0) == lowerASCII($1) }
    }

    private static func lowerASCII(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
