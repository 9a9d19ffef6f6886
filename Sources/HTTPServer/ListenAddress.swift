#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address and TCP port to listen on, parsed from `HOST:PORT`.
///
/// The host is a numeric IPv4 address, a bracketed numeric IPv6 address or
/// `localhost` (which means `127.0.0.1`; no name is ever resolved). IPv6 hosts
/// are kept in their canonical text form (`[0:0::1]` becomes `::1`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The numeric host: `127.0.0.1`, `0.0.0.0`, `::1`, `::`.
    public var host: String
    /// The TCP port, 0…65535; 0 asks for any free port (see `HTTPServer.boundPort`).
    public var port: Int

    /// Creates an address from parts without checking them; `HTTPServer.start()`
    /// rejects a host that is not a numeric address. Prefer `parse(_:)` for user input.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`: `127.0.0.1:8080`, `0.0.0.0:8080`, `[::1]:8080`,
    /// `[::]:8080`, `localhost:8080` (→ `127.0.0.1`); port 0 means any free port.
    ///
    /// Throws `HTTPServerError` with code `.invalidAddress` and a message naming
    /// what is wrong (missing port, unbracketed IPv6, a host name, a port out of range…).
    public static func parse(_ text: String) throws(HTTPServerError) -> ListenAddress {
        func bad(_ reason: String) -> HTTPServerError {
            HTTPServerError(.invalidAddress,
                            "invalid listen address \"\(text)\": \(reason); expected HOST:PORT such as 127.0.0.1:8080, [::1]:8080 or 0.0.0.0:8080")
        }
        guard !text.isEmpty else { throw bad("it is empty") }

        let hostText: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad("\"[\" without a closing \"]\"") }
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw bad("missing \":PORT\" after the bracketed IPv6 address") }
            portText = rest.dropFirst()
            guard !hostText.isEmpty else { throw bad("empty IPv6 address between the brackets") }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw bad("missing \":PORT\"") }
            hostText = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !hostText.contains(":") else {
                throw bad("an IPv6 address must be in brackets, e.g. [::1]:8080")
            }
            guard !hostText.isEmpty else { throw bad("missing host (use 0.0.0.0 for every IPv4 address)") }
        }

        guard !portText.isEmpty else { throw bad("missing port after \":\"") }
        guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let port = Int(portText), port <= 65535 else {
            throw bad("port \"\(portText)\" is not a number from 0 to 65535")
        }

        if text.hasPrefix("[") {
            guard let canonical = IPAddressText.canonicalIPv6(String(hostText)) else {
                throw bad("\"\(hostText)\" is not a numeric IPv6 address")
            }
            return ListenAddress(host: canonical, port: port)
        }
        if hostText.lowercased() == "localhost" {
            return ListenAddress(host: "127.0.0.1", port: port)
        }
        guard let canonical = IPAddressText.canonicalIPv4(String(hostText)) else {
            throw bad("host \"\(hostText)\" is not an IPv4 address, a bracketed IPv6 address or localhost (names are not resolved)")
        }
        return ListenAddress(host: canonical, port: port)
    }

    /// Whether only this machine can reach the address: 127.0.0.0/8 or `::1`
    /// (also `::ffff:127.x.x.x`). `0.0.0.0` and `::` are not loopback.
    public var isLoopback: Bool {
        if host.lowercased() == "localhost" { return true }
        if let v4 = IPAddressText.ipv4Bytes(host) { return v4.0 == 127 }
        if let v6 = IPAddressText.ipv6Bytes(host) {
            let isV4Mapped = v6.prefix(10).allSatisfy { $0 == 0 } && v6[10] == 0xFF && v6[11] == 0xFF
            if isV4Mapped { return v6[12] == 127 }
            return v6.prefix(15).allSatisfy { $0 == 0 } && v6[15] == 1
        }
        return false
    }

    /// Whether the host is an IPv6 address.
    var isIPv6: Bool { host.contains(":") }

    /// `HOST:PORT`, with an IPv6 host in brackets: `127.0.0.1:8080`, `[::1]:8080`.
    public var description: String {
        isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Numeric IP address text through `inet_pton`/`inet_ntop`.
enum IPAddressText {
    /// The four bytes of a numeric IPv4 address, or nil.
    static func ipv4Bytes(_ text: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { ($0[0], $0[1], $0[2], $0[3]) }
    }

    /// The sixteen bytes of a numeric IPv6 address, or nil.
    static func ipv6Bytes(_ text: String) -> [UInt8]? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: address) { Array($0) }
    }

    /// The address in `inet_ntop`'s form, or nil when it is not numeric IPv4.
    static func canonicalIPv4(_ text: String) -> String? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return ntop(AF_INET, &address)
    }

    /// The address in `inet_ntop`'s canonical form (`::1`), or nil when it is not numeric IPv6.
    static func canonicalIPv6(_ text: String) -> String? {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return ntop(AF_INET6, &address)
    }

    private static func ntop<Address>(_ family: Int32, _ address: inout Address) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = withUnsafeBytes(of: &address) { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
