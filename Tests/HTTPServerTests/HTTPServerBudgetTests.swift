import Dispatch
import Foundation
import HTTPServer
import Testing
import TestSupport

/// Memory bounded whatever clients send: the bodies of all requests in flight share one budget, so memory is bounded by
/// design whatever clients send at once.
@Suite("HTTPServer body budget")
struct HTTPServerBudgetTests {
    /// Waits up to 10 s for the server's reserved bytes to become `bytes`.
    static func waitForInFlight(_ server: HTTPServer, _ bytes: Int) -> Bool {
        let deadline = monotonicNow() + 10
        while server.bodyBytesInFlight != bytes {
            if monotonicNow() > deadline { return false }
            usleep(10_000)
        }
        return true
    }

    @Test("a body the budget cannot take now is 503 with Retry-After and never reaches its handler: by Content-Length (drained, then answered), with Expect: 100-continue (answered before a byte is sent), chunked (when it outgrows what is left); the budget comes back once answered")
    func budget() throws {
        let gate = DispatchSemaphore(value: 0)
        let log = RequestLog()
        let configuration = HTTPServerConfiguration(address: ListenAddress(host: "127.0.0.1", port: 0), maxBodyBytes: 1 << 20,
                                                    bodyBudgetBytes: 1 << 20)
        let server = HTTPServer(configuration: configuration) { request in
            log.record(request)
            if request.path == "/hold" { gate.wait() }
            return HTTPResponse(status: 200)
        }
        try server.start()
        defer { server.stop(graceSeconds: 0) }
        let port = server.boundPort

        let holder = BackgroundJob { try HTTPTestClient.request(port: port, method: "POST", path: "/hold", body: binaryBytes(count: 600_000), timeout: 30).status }
        #expect(Self.waitForInFlight(server, 600_000), "the held request reserves its Content-Length")

        let refused = try HTTPTestClient.request(port: port, method: "POST", path: "/late", body: binaryBytes(count: 500_000))
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "30")
        let expecting = try HTTPTestClient.sendLyingContentLength(port: port, path: "/late", contentLength: 500_000, body: [],
                                                                  headers: [("Expect", "100-continue")])
        defer { expecting.close() }
        #expect(try expecting.readResponse(timeout: 5).status == 503)
        let chunked = try HTTPTestConnection(port: port)
        defer { chunked.close() }
        try chunked.send(HTTPTestClient.head(method: "POST", path: "/late", headers: [("Transfer-Encoding", "chunked")])
                         + chunkedBody([binaryBytes(count: 300_000), binaryBytes(count: 300_000)]))
        #expect(try chunked.readResponse(timeout: 5).status == 503)
        #expect(server.bodyBytesInFlight == 600_000, "refused bodies hold nothing")

        #expect(try HTTPTestClient.request(port: port, method: "POST", path: "/fits", body: binaryBytes(count: 400_000)).status == 200)
        gate.signal()
        if case .success(let status) = holder.wait(timeout: 30) { #expect(status == 200) } else { Issue.record("the held request did not finish") }
        #expect(Self.waitForInFlight(server, 0))
        #expect(try HTTPTestClient.request(port: port, method: "POST", path: "/after", body: binaryBytes(count: 1 << 20)).status == 200)
        #expect(log.all.map(\.path) == ["/hold", "/fits", "/after"], "no refused body reached the handler")
    }

    @Test("a budget below the body cap is refused at start, naming both")
    func budgetBelowCap() {
        let server = HTTPServer(configuration: HTTPServerConfiguration(address: ListenAddress(host: "127.0.0.1", port: 0), maxBodyBytes: 2 << 20,
                                                                       bodyBudgetBytes: 1 << 20)) { _ in HTTPResponse(status: 200) }
        #expect(throws: HTTPServerError.self) { try server.start() }
    }
}
