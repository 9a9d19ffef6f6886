import Foundation
import HTTPServer
import Synchronization
import TestSupport
import Testing

// The application's say before a body is read, per-request body limits, and what keeps slow
// or numerous clients from holding every connection. Serialized, like the other server suite.
@Suite("HTTPServer admission and limits", .serialized)
struct HTTPServerAdmissionTests {
    @Test("onHead rejects before the body: the answer arrives while the client still holds most of its body, and respond never runs")
    func rejectBeforeBody() throws {
        let responded = Atomic<Int>(0)
        let server = try startServer { head in
            guard head.headers["Authorization"] == "Bearer right" else {
                return .reject(HTTPResponse.json(status: 401, #"{"error":"credential"}"#))
            }
            return .accept { _ in
                responded.add(1, ordering: .relaxed)
                return HTTPResponse(status: 200)
            }
        }
        defer { server.stop(graceSeconds: 0) }

        // 3 MB announced, 10 bytes sent, then nothing: the 401 must come anyway.
        let connection = try HTTPTestClient.sendLyingContentLength(port: server.boundPort, contentLength: 3_000_000,
                                                                   body: Array("0123456789".utf8),
                                                                   headers: [("Content-Type", "application/json")])
        let answer = try connection.readResponse(timeout: 5)
        #expect(answer.status == 401)
        #expect(answer.bodyText == #"{"error":"credential"}"#)
        #expect(connection.waitForClose(timeout: 5), "the connection closes after a refusal; the body is never read")
        #expect(responded.load(ordering: .relaxed) == 0)

        let accepted = try HTTPTestClient.request(port: server.boundPort, method: "POST", headers: [("Authorization", "Bearer right")],
                                                  body: [1, 2, 3])
        #expect(accepted.status == 200)
        #expect(responded.load(ordering: .relaxed) == 1)
    }

    @Test("onHead runs once per request, and what it learns from the head reaches respond without another look")
    func headContextReachesRespond() throws {
        let heads = Atomic<Int>(0)
        let server = try startServer { head in
            heads.add(1, ordering: .relaxed)
            let learned = "\(head.method) \(head.path) \(head.contentLength.map(String.init) ?? "none") \(head.remoteAddress)"
            return .accept { request in
                HTTPResponse(status: 200, body: Array("\(learned) | \(request.body.count)".utf8))
            }
        }
        defer { server.stop(graceSeconds: 0) }
        let first = try HTTPTestClient.request(port: server.boundPort, method: "POST", path: "/one", body: Array("abcd".utf8))
        let second = try HTTPTestClient.request(port: server.boundPort, method: "GET", path: "/two")
        #expect(first.bodyText == "POST /one 4 127.0.0.1 | 4")
        #expect(second.bodyText == "GET /two none 127.0.0.1 | 0")
        #expect(heads.load(ordering: .relaxed) == 2)
    }

    @Test("a path's own body limit from onHead, above or below the server's: checked on Content-Length and while reading a chunked body")
    func perPathBodyLimit() throws {
        let log = RequestLog()
        let server = try startServer(maxBodyBytes: 1000) { head in
            .accept(maxBodyBytes: head.path == "/big" ? 64 * 1024 : (head.path == "/small" ? 10 : nil)) { request in
                log.record(request)
                return HTTPResponse.json(status: 200, #"{"bytes":\#(request.body.count)}"#)
            }
        }
        defer { server.stop(graceSeconds: 0) }
        let port = server.boundPort
        let body = binaryBytes(count: 50_000)

        // Over the server's 1000 bytes, within /big's 64 KiB.
        let big = try HTTPTestClient.request(port: port, method: "POST", path: "/big", body: body)
        #expect(big.status == 200)
        #expect(big.bodyText == #"{"bytes":50000}"#)
        // The same body elsewhere meets the server's cap.
        #expect(try HTTPTestClient.request(port: port, method: "POST", path: "/other", body: body).status == 413)
        // /small takes 10 bytes by Content-Length…
        #expect(try HTTPTestClient.request(port: port, method: "POST", path: "/small", body: Array(body[..<10])).status == 200)
        #expect(try HTTPTestClient.request(port: port, method: "POST", path: "/small", body: Array(body[..<11])).status == 413)
        // …and by chunks, counted while reading.
        let chunked = try HTTPTestConnection(port: port)
        try chunked.send(HTTPTestClient.head(method: "POST", path: "/small", headers: [("Transfer-Encoding", "chunked")])
                         + chunkedBody([Array(body[..<6]), Array(body[6..<12])]))
        let refused = try chunked.readResponse(timeout: 5)
        #expect(refused.status == 413)
        #expect(refused.header("Retry-After") == nil)
        // /big over its own limit, announced: refused before reading.
        let announced = try HTTPTestClient.sendLyingContentLength(port: port, path: "/big", contentLength: 64 * 1024 + 1, body: [])
        #expect(try announced.readResponse(timeout: 5).status == 413)
        #expect(log.all.map(\.body.count) == [50_000, 10])
    }

    @Test("a Content-Length beyond any integer is answered 413, not a crash")
    func hugeContentLength() throws {
        let server = try startServer(maxBodyBytes: 1000)
        defer { server.stop(graceSeconds: 0) }
        let connection = try HTTPTestConnection(port: server.boundPort)
        try connection.send("POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 999999999999999999999999999999\r\n\r\n")
        let answer = try connection.readResponse(timeout: 5)
        #expect(answer.status == 413)
        #expect(try HTTPTestClient.request(port: server.boundPort).status == 200)
    }

    @Test("five dripping sockets from one address hold at most its share, so a sixth client from another address is served at once")
    func drippersDoNotStopOthers() throws {
        // Five slots in all, four per address: without the per-address limit the five drippers
        // would hold every slot.
        let server = try startServer(connectionLimit: 5, perAddressLimit: 4, timeoutSeconds: 30)
        defer { server.stop(graceSeconds: 0) }
        let port = server.boundPort
        let drippers = try (0..<5).map { try Dripper(port: port, inBody: $0 % 2 == 1, limit: 20) }
        // Four are held; the fifth was closed at once by the per-address limit.
        #expect(waitUntil { drippers.filter { $0.wasCut(timeout: 0) }.count == 1 })
        #expect(waitUntil { server.openConnections == 4 })
        #expect(statusFrom(source: "127.0.0.2", port: port) == 200)
        // The four are still open meanwhile (their 30 s idle timeout never comes: they keep sending).
        #expect(drippers.filter { $0.wasCut(timeout: 0) }.count == 1)
    }

    @Test("the request deadline cuts connections that keep trickling, in headers or body; then the same address is served again")
    func deadlineCutsTricklers() throws {
        let log = RequestLog()
        let server = try startServer(connectionLimit: 4, timeoutSeconds: 30, deadlineSeconds: 2, log: log)
        defer { server.stop(graceSeconds: 0) }
        let port = server.boundPort
        let drippers = try (0..<4).map { try Dripper(port: port, inBody: $0 % 2 == 1, limit: 25) }
        #expect(waitUntil { server.openConnections == 4 })
        // Every slot is held: a new client gets no answer.
        #expect(throws: HTTPTestClientError.self) { try HTTPTestClient.request(port: port, timeout: 1) }
        // Each is cut by the deadline, long before the drippers would give up (25 s) and
        // although they never fall silent for the 30 s idle timeout.
        for dripper in drippers {
            #expect(dripper.wasCut(timeout: 15))
        }
        #expect(server.connectionsCutAtDeadline >= 4)
        var answer: HTTPTestResponse?
        #expect(waitUntil(timeout: 5) {
            answer = try? HTTPTestClient.request(port: port, method: "GET", path: "/after", timeout: 2)
            return answer != nil
        })
        #expect(answer?.status == 200)
        #expect(log.all.map(\.path) == ["/after"])
    }

    @Test("a kept-alive connection gets a fresh deadline for each request, and a handler's own time does not count")
    func deadlinePerRequest() throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let server = try startServer(timeoutSeconds: 30, deadlineSeconds: 1) { request in
            if request.path == "/slow" {
                entered.signal()
                _ = release.wait(timeout: .now() + 20)
            }
            return HTTPResponse(status: 200)
        }
        defer { server.stop(graceSeconds: 0) }
        let connection = try HTTPTestConnection(port: server.boundPort)
        try connection.send(HTTPTestClient.head(method: "GET", path: "/slow", headers: []))
        #expect(entered.wait(timeout: .now() + 10) == .success)
        // The handler is held past the 1 s deadline while the watcher (four turns a second)
        // looks at the connection: it stays open.
        #expect(!waitUntil(timeout: 2) { connection.waitForClose(timeout: 0) })
        release.signal()
        #expect(try connection.readResponse(timeout: 5).status == 200)
        // The same connection, a second request: a new deadline, not the first one's.
        try connection.send(HTTPTestClient.head(method: "GET", path: "/fast", headers: []))
        #expect(try connection.readResponse(timeout: 5).status == 200)
        #expect(server.connectionsCutAtDeadline == 0)
    }
}
