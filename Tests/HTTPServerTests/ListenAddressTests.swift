import HTTPServer
import Testing

@Suite("ListenAddress parsing")
struct ListenAddressTests {
    struct Good: Sendable, CustomTestStringConvertible {
        var text: String
        var host: String
        var port: Int
        var isLoopback: Bool
        var description: String
        var testDescription: String { text }
    }

    static let good: [Good] = [
        Good(text: "127.0.0.1:8080", host: "127.0.0.1", port: 8080, isLoopback: true, description: "127.0.0.1:8080"),
        Good(text: "0.0.0.0:8080", host: "0.0.0.0", port: 8080, isLoopback: false, description: "0.0.0.0:8080"),
        Good(text: "[::1]:8080", host: "::1", port: 8080, isLoopback: true, description: "[::1]:8080"),
        Good(text: "[::]:8080", host: "::", port: 8080, isLoopback: false, description: "[::]:8080"),
        Good(text: "localhost:8080", host: "127.0.0.1", port: 8080, isLoopback: true, description: "127.0.0.1:8080"),
        Good(text: "LocalHost:0", host: "127.0.0.1", port: 0, isLoopback: true, description: "127.0.0.1:0"),
        Good(text: "127.8.9.10:1", host: "127.8.9.10", port: 1, isLoopback: true, description: "127.8.9.10:1"),
        Good(text: "192.168.1.20:65535", host: "192.168.1.20", port: 65535, isLoopback: false,
             description: "192.168.1.20:65535"),
        Good(text: "[0:0:0:0:0:0:0:1]:80", host: "::1", port: 80, isLoopback: true, description: "[::1]:80"),
        Good(text: "[::ffff:127.0.0.1]:80", host: "::ffff:127.0.0.1", port: 80, isLoopback: true,
             description: "[::ffff:127.0.0.1]:80"),
        Good(text: "[fd00::2]:443", host: "fd00::2", port: 443, isLoopback: false, description: "[fd00::2]:443"),
        Good(text: "10.0.0.1:08080", host: "10.0.0.1", port: 8080, isLoopback: false, description: "10.0.0.1:8080"),
    ]

    @Test("parses HOST:PORT into a numeric host, port and loopback flag", arguments: good)
    func parsesGood(_ good: Good) throws {
        let address = try ListenAddress.parse(good.text)
        #expect(address.host == good.host)
        #expect(address.port == good.port)
        #expect(address.isLoopback == good.isLoopback)
        #expect(address.description == good.description)
        #expect(try ListenAddress.parse(address.description) == address)
    }

    struct Bad: Sendable, CustomTestStringConvertible {
        var text: String
        /// A fragment the error message must contain, naming what is wrong.
        var says: String
        var testDescription: String { text.isEmpty ? "(empty)" : text }
    }

    static let bad: [Bad] = [
        Bad(text: "", says: "empty"),
        Bad(text: "8080", says: "missing \":PORT\""),
        Bad(text: "127.0.0.1", says: "missing \":PORT\""),
        Bad(text: "127.0.0.1:", says: "missing port"),
        Bad(text: ":8080", says: "missing host"),
        Bad(text: "::1:8080", says: "must be in brackets"),
        Bad(text: "[::1]8080", says: "missing \":PORT\" after the bracketed"),
        Bad(text: "[::1", says: "closing \"]\""),
        Bad(text: "[]:80", says: "empty IPv6 address"),
        Bad(text: "[::g]:80", says: "not a numeric IPv6 address"),
        Bad(text: "[127.0.0.1]:80", says: "not a numeric IPv6 address"),
        Bad(text: "example.com:80", says: "names are not resolved"),
        Bad(text: "256.0.0.1:80", says: "not an IPv4 address"),
        Bad(text: " 127.0.0.1:80", says: "not an IPv4 address"),
        Bad(text: "127.0.0.1:65536", says: "from 0 to 65535"),
        Bad(text: "127.0.0.1:-1", says: "from 0 to 65535"),
        Bad(text: "127.0.0.1:+80", says: "from 0 to 65535"),
        Bad(text: "127.0.0.1:80a", says: "from 0 to 65535"),
        Bad(text: "127.0.0.1:123456", says: "from 0 to 65535"),
        Bad(text: "[::1]:", says: "missing port"),
    ]

    @Test("rejects malformed addresses with a message naming the problem", arguments: bad)
    func rejectsBad(_ bad: Bad) {
        #expect {
            _ = try ListenAddress.parse(bad.text)
        } throws: { error in
            guard let error = error as? HTTPServerError else { return false }
            return error.code == .invalidAddress && error.message.contains(bad.says)
                && error.message.contains("\"\(bad.text)\"")
        }
    }

    @Test("the default configuration listens on 127.0.0.1:8080 with a 4 MiB body cap")
    func defaults() {
        let configuration = HTTPServerConfiguration()
        #expect(configuration.address == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(configuration.address.isLoopback)
        #expect(configuration.maxBodyBytes == 4 * 1024 * 1024)
        #expect(configuration.connectionLimit == 64)
        #expect(configuration.connectionTimeoutSeconds == 30)
        #expect(configuration.perConnectionMemoryLimit == 64 * 1024)
    }

    @Test("header lookup is case-insensitive and keeps every value in order")
    func headerLookup() {
        let headers = HTTPHeaders([("Content-Type", "text/csv"), ("X-Multi", "1"), ("x-multi", "2")])
        #expect(headers["content-type"] == "text/csv")
        #expect(headers["CONTENT-TYPE"] == "text/csv")
        #expect(headers["X-MULTI"] == "1")
        #expect(headers.values("X-Multi") == ["1", "2"])
        #expect(headers["Missing"] == nil)
        #expect(headers.values("Missing").isEmpty)
        #expect(headers["Content-Typ"] == nil)
    }

    @Test("HTTPResponse.json sets Content-Type and keeps extra headers after it")
    func jsonResponse() {
        let response = HTTPResponse.json(status: 503, #"{"error":"database unavailable"}"#,
                                         headers: [("Retry-After", "60")])
        #expect(response.status == 503)
        #expect(response.headers.map(\.name) == ["Content-Type", "Retry-After"])
        #expect(response.headers.map(\.value) == ["application/json", "60"])
        #expect(response.body == Array(#"{"error":"database unavailable"}"#.utf8))
    }
}
