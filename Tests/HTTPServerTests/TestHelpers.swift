import Foundation
import HTTPServer
import Synchronization
import TestSupport

/// Starts a server on 127.0.0.1 with port 0 and the given limits.
func startServer(maxBodyBytes: Int = 4 * 1024 * 1024,
                 connectionLimit: Int = 64,
                 timeoutSeconds: Int = 30,
                 address: ListenAddress = ListenAddress(host: "127.0.0.1", port: 0),
                 log: RequestLog? = nil,
                 handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in HTTPResponse(status: 200) }) throws -> HTTPServer {
    let configuration = HTTPServerConfiguration(address: address, maxBodyBytes: maxBodyBytes,
                                                connectionLimit: connectionLimit,
                                                connectionTimeoutSeconds: timeoutSeconds)
    let server = HTTPServer(configuration: configuration) { request in
        log?.record(request)
        return handler(request)
    }
    try server.start()
    return server
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

/// Encodes `chunks` as an HTTP/1.1 chunked body, with the final zero chunk.
func chunkedBody(_ chunks: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for chunk in chunks {
        bytes += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + [13, 10]
    }
    bytes += Array("0\r\n\r\n".utf8)
    return bytes
}
