import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

@Suite("The Host check in front of every route")
struct HostNamesTests {
    @Test("addresses, localhost and the names given are served, with any port, case or one trailing dot; other names are not",
          arguments: [
            ("127.0.0.1", true), ("127.0.0.1:8080", true), ("192.168.1.20:80", true), ("[::1]", true), ("[::1]:8080", true),
            ("[2001:db8::1]:443", true), ("localhost", true), ("LOCALHOST:8080", true), ("localhost.", true),
            ("health.example.net", true), ("Health.Example.Net:443", true), ("health.example.net.", true), ("", true), ("  ", true),
            ("evil.example", false), ("evil.example:8080", false), ("localhost.evil.example", false), ("127.0.0.1.nip.io", false),
            ("sub.health.example.net", false), ("health.example.net..", false), ("127.1", false), ("::1", false), ("[::1", false),
            ("[::1]x", false), ("[evil.example]", false), ("127.0.0.1:x", false), ("127.0.0.1:80:80", false), ("localhost:", true),
          ])
    func admits(host: String, served: Bool) {
        #expect(HostNames(["health.example.net"]).admits(host: host) == served, "\(host)")
    }

    @Test("every Host field must be served; none at all is served")
    func severalFields() {
        let names = HostNames()
        #expect(names.admits([]))
        #expect(names.admits(["127.0.0.1", "localhost"]))
        #expect(!names.admits(["127.0.0.1", "evil.example"]))
    }

    @Test("--host names: letters, digits, '-', '_' and dots, no port, scheme or path", arguments: [
        ("health.example.net", true), ("Warehouse", true), ("my_host", true), ("10.0.0.1", true), ("health.example.net.", true),
        ("", false), (".", false), ("a..b", false), ("evil.example:8080", false), ("http://x", false), ("x/ui", false), ("a b", false),
        ("*.example.net", false), ("[::1]", false),
    ])
    func validNames(name: String, valid: Bool) {
        #expect(HostNames.isValidName(name) == valid, "\(name)")
    }

    @Test("a request naming another host is answered 421 before onHead sees it, whatever its path or method; the others reach it")
    func checkedBeforeRouting() throws {
        let heads = Atomic<Int>(0)
        let misdirected = Mutex<[String]>([])
        let configuration = HTTPServerConfiguration(address: ListenAddress(host: "127.0.0.1", port: 0), hostNames: HostNames(["app.example"]),
                                                    onMisdirected: { head in misdirected.withLock { $0.append(head.path) } })
        let server = HTTPServer(configuration: configuration, onHead: { _ in
            heads.add(1, ordering: .relaxed)
            return .accept(respond: { _ in .json(status: 200, "{}") })
        })
        try server.start()
        defer { server.stop(graceSeconds: 0) }
        for (method, path) in [("GET", "/ui"), ("POST", "/"), ("PUT", "/v1/device/connections/apple"), ("GET", "/healthz")] {
            let refused = try HTTPTestClient.request(port: server.boundPort, method: method, path: path, headers: [("Host", "evil.example")])
            #expect(refused.status == 421)
            #expect(refused.bodyText.contains("misdirected"))
        }
        #expect(heads.load(ordering: .relaxed) == 0)
        #expect(misdirected.withLock { $0 } == ["/ui", "/", "/v1/device/connections/apple", "/healthz"])
        #expect(try HTTPTestClient.request(port: server.boundPort, path: "/", headers: [("Host", "app.example:8080")]).status == 200)
        #expect(try HTTPTestClient.request(port: server.boundPort, path: "/").status == 200)
        #expect(heads.load(ordering: .relaxed) == 2)
    }
}
