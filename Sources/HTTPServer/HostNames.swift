/// The names a server answers to in a request's `Host`, checked before any routing: a request
/// naming another host is answered `421 Misdirected Request` and reaches no handler, whatever
/// its path, method or credential. This is what defeats DNS rebinding — a web page whose own
/// name the attacker points at this machine reaches the server with that name in `Host`, never
/// with an address or a name the server was given (like Django's `ALLOWED_HOSTS`).
///
/// Served: any numeric IP address (IPv4, or IPv6 in brackets: an address cannot be rebound),
/// `localhost`, and the names given; with any port, in any letter case, with or without one
/// trailing dot. A request with no `Host` at all (HTTP/1.0, a health check) is served: a browser
/// always sends one. A request with two `Host` fields is served only when both are.
public struct HostNames: Sendable, Equatable {
    /// The names given, lower-cased, without a trailing dot (`localhost` is always served too).
    public private(set) var names: Set<String>

    /// Serves addresses, `localhost` and `names` (as a user writes them: `health.example.net`).
    public init(_ names: [String] = []) {
        self.names = Set(names.map(Self.normalized))
    }

    /// The body of the `421`.
    static let refusalBody = #"{"error":"misdirected request: this server does not answer to the host name in Host"}"#

    /// Whether a request whose `Host` fields are `values` is served.
    public func admits(_ values: [String]) -> Bool {
        values.allSatisfy(admits(host:))
    }

    /// Whether one `Host` value (`name`, `name:port`, `1.2.3.4:80`, `[::1]:80`) is served.
    public func admits(host value: String) -> Bool {
        let value = MHDCallbacks.trimmingSpaces(value)
        guard !value.isEmpty else { return true }
        guard let host = Self.hostPart(value) else { return false }
        if host.hasPrefix("[") {
            return host.hasSuffix("]") && IPAddressText.ipv6Bytes(String(host.dropFirst().dropLast())) != nil
        }
        if IPAddressText.ipv4Bytes(String(host)) != nil { return true }
        let name = Self.normalized(host)
        return name == "localhost" || names.contains(name)
    }

    /// Whether `name` can be given to the server: a host name of letters, digits, `-` and `.`
    /// (or an address), no port.
    public static func isValidName(_ name: String) -> Bool {
        let name = normalized(name)
        return !name.isEmpty && name.utf8.count <= 253 && !name.hasPrefix(".") && !name.contains("..")
            && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }
    }

    /// The host of a `Host` value without its port; nil when the port is not digits.
    static func hostPart(_ value: String) -> Substring? {
        let hostEnd: String.Index
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            hostEnd = value.index(after: close)
        } else {
            hostEnd = value.firstIndex(of: ":") ?? value.endIndex
        }
        let rest = value[hostEnd...]
        if !rest.isEmpty {
            guard rest.first == ":", rest.dropFirst().utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        }
        return value[..<hostEnd]
    }

    /// Lower case, one trailing dot dropped.
    static func normalized<S: StringProtocol>(_ name: S) -> String {
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }
}
