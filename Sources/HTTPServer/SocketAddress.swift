#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `ListenAddress` as a `sockaddr_in`/`sockaddr_in6` for MHD_OPTION_SOCK_ADDR.
struct SocketAddress {
    private enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage

    /// Whether the address is `0.0.0.0` or `::`.
    let isUnspecified: Bool

    /// Converts a numeric address; throws `.invalidAddress` for anything else.
    init(_ address: ListenAddress) throws(HTTPServerError) {
        guard (0...65535).contains(address.port) else {
            throw HTTPServerError(.invalidAddress, "invalid listen address \(address): port must be from 0 to 65535")
        }
        let port = in_port_t(UInt16(address.port).bigEndian)
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, address.host, &v4) == 1 {
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = port
            raw.sin_addr = v4
            storage = .v4(raw)
            isUnspecified = v4.s_addr == 0
        } else if inet_pton(AF_INET6, address.host, &v6) == 1 {
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = port
            raw.sin6_addr = v6
            storage = .v6(raw)
            isUnspecified = withUnsafeBytes(of: v6) { $0.allSatisfy { $0 == 0 } }
        } else {
            throw HTTPServerError(.invalidAddress,
                                  "invalid listen address \(address): host must be a numeric IPv4 or IPv6 address (use ListenAddress.parse)")
        }
    }

    /// Calls `body` with a pointer to the `sockaddr`.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        switch storage {
        case .v4(var raw):
            return withUnsafePointer(to: &raw) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var raw):
            return withUnsafePointer(to: &raw) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }
}
