import Foundation
import HTTPServer
import Synchronization
import TestSupport

/// Starts a server on 127.0.0.1 with port 0 and the given limits.
func startServer(maxBodyBytes: Int = 4 * 1024 * 1024,
                 connectionLimit: Int = 64,
                 perAddressLimit: Int = 0,
                 timeoutSeconds: Int = 30,
                 deadlineSeconds: Double = 0,
                 address: ListenAddress = ListenAddress(host: "127.0.0.1", port: 0),
                 log: RequestLog? = nil,
                 handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in HTTPResponse(status: 200) }) throws -> HTTPServer {
    try startServer(maxBodyBytes: maxBodyBytes, connectionLimit: connectionLimit, perAddressLimit: perAddressLimit,
                    timeoutSeconds: timeoutSeconds, deadlineSeconds: deadlineSeconds, address: address) { _ in
        .accept { request in
            log?.record(request)
            return handler(request)
        }
    }
}

/// Starts a server whose application decides on each request head with `onHead`.
func startServer(maxBodyBytes: Int = 4 * 1024 * 1024,
                 connectionLimit: Int = 64,
                 perAddressLimit: Int = 0,
                 timeoutSeconds: Int = 30,
                 deadlineSeconds: Double = 0,
                 address: ListenAddress = ListenAddress(host: "127.0.0.1", port: 0),
                 onHead: @escaping @Sendable (HTTPRequestHead) -> HTTPHeadDecision) throws -> HTTPServer {
    let configuration = HTTPServerConfiguration(address: address, maxBodyBytes: maxBodyBytes,
                                                connectionLimit: connectionLimit,
                                                perAddressConnectionLimit: perAddressLimit,
                                                connectionTimeoutSeconds: timeoutSeconds,
                                                requestDeadlineSeconds: deadlineSeconds)
    let server = HTTPServer(configuration: configuration, onHead: onHead)
    try server.start()
    return server
}

/// A GET from a chosen loopback source address (`127.0.0.2`: Linux routes all of
/// 127.0.0.0/8 to lo), to be a client other than 127.0.0.1. Returns the status, or nil
/// when the server closed or did not answer within `timeout`.
func statusFrom(source: String, port: Int, path: String = "/", timeout: Double = 5) -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else { return nil }
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = in_port_t(UInt16(port).bigEndian)
    _ = inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
    let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } }
    guard bound == 0, connected == 0 else { return nil }
    var waiting = timeval(tv_sec: Int(timeout), tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &waiting, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else { return nil }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        received += buffer[..<count]
    }
    let statusLine = String(decoding: received.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
    guard statusLine.count >= 2 else { return nil }
    return Int(statusLine[1])
}

/// A client that keeps a connection busy without ever finishing its request: it sends a
/// byte every `interval` seconds (in the header fields, or in a body it announced) until
/// the server hangs up or `limit` seconds pass. `wasCut` tells which.
final class Dripper: Sendable {
    private let job: BackgroundJob<Bool>

    init(port: Int, inBody: Bool, interval: Double = 0.2, limit: Double = 30) throws {
        let connection = try HTTPTestConnection(port: port)
        let head = inBody ? HTTPTestClient.head(method: "POST", path: "/drip", headers: [("Content-Length", "100000")])
                          : Array("POST /drip HTTP/1.1\r\nHost: test\r\nX-Drip: ".utf8)
        try connection.send(head)
        let box = UncheckedBox(connection)
        job = BackgroundJob {
            let connection = box.value
            defer { connection.close() }
            let stop = monotonicNow() + limit
            while monotonicNow() < stop {
                // Waiting for a close is also the pause between bytes.
                if connection.waitForClose(timeout: interval) { return true }
                do { try connection.send([UInt8(ascii: "a")]) } catch { return true }
            }
            return false
        }
    }

    /// Waits until the dripper stopped; true when the server cut it.
    func wasCut(timeout: Double) -> Bool {
        (try? job.wait(timeout: timeout)?.get()) == true
    }
}

/// Moves a non-Sendable value into one other thread that alone uses it from then on.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Remembers every request a handler saw.
final class RequestLog: Sendable {
    private let requests = Mutex<[HTTPRequest]>([])

    func record(_ request: HTTPRequest) {
        requests.withLock { $0.append(request) }
    }

    var all: [HTTPRequest] { requests.withLock { $0 } }
    var count: Int { requests.withLock { $0.count } }
}

/// Resident set size of this process in bytes (Linux /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Deterministic pseudo-random bytes covering every byte value.
func binaryBytes(count: Int, seed: UInt64 = 0x9E3779B97F4A7C15) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
}
