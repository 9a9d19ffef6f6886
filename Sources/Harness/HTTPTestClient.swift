// A tiny blocking HTTP/1.1 client over raw POSIX sockets, for tests and benchmarks only.
//
// It exists to send what well-behaved clients never send (a lying
// Content-Length, a trickled body, nothing at all) and to read exactly what
// the server wrote back. It parses a status line, header fields and a
// Content-Length or chunked body (Node's answers are chunked); nothing more.

import CGnuTLS
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A response as read off the wire.
public struct HTTPTestResponse: Sendable {
    /// The status code from the status line.
    public var status: Int
    /// Header fields in the order received.
    public var headers: [(name: String, value: String)]
    /// The body (exactly `Content-Length` bytes, or everything up to EOF when absent).
    public var body: [UInt8]

    /// The first value of a header field, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// What went wrong talking to the server.
public enum HTTPTestClientError: Error, Equatable, Sendable {
    /// `connect` failed (refused, unreachable…) with this errno.
    case connectFailed(errno: Int32)
    /// No (complete) answer within the timeout.
    case timedOut
    /// The server closed (or reset) the connection before a complete response.
    case closedBeforeResponse
    /// Sending failed with this errno (EPIPE, ECONNRESET: the server hung up).
    case sendFailed(errno: Int32)
    /// The bytes received are not an HTTP response.
    case malformed(String)
    /// The TLS handshake failed (the reason GnuTLS gave).
    case tlsFailed(String)
}

/// Ports that speak HTTPS, and the CA file their certificates are checked against: a
/// connection to one of them handshakes first (GnuTLS), so every test and helper over
/// `HTTPTestConnection` runs unchanged against a receiver serving TLS.
public enum HTTPTestTLS {
    private static let ports = Mutex<[Int: String]>([:])

    /// From now on, connections to `port` speak TLS, trusting `authority` (a PEM CA file).
    public static func register(port: Int, authority: String) {
        ports.withLock { $0[port] = authority }
    }

    /// Connections to `port` are plain again.
    public static func unregister(port: Int) {
        _ = ports.withLock { $0.removeValue(forKey: port) }
    }

    static func authority(port: Int) -> String? {
        ports.withLock { $0[port] }
    }
}

/// One client TCP connection with blocking sends and deadline-bounded reads.
public final class HTTPTestConnection {
    private var fd: Int32
    private var buffered: [UInt8] = []
    /// The GnuTLS client session on a port registered with `HTTPTestTLS`; nil for plain TCP.
    private var tls: UnsafeMutableRawPointer?

    /// The TLS version negotiated ("TLS1.3"), nil for plain TCP.
    public var tlsProtocol: String? { tls.map { String(cString: CGnuTLS_client_protocol($0)) } }

    /// Connects to `host` (numeric IPv4 or IPv6) and `port`, within `timeout` seconds.
    public init(host: String = "127.0.0.1", port: Int, timeout: Double = 5) throws(HTTPTestClientError) {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let isV6 = inet_pton(AF_INET6, host, &v6.sin6_addr) == 1
        if !isV6 {
            guard inet_pton(AF_INET, host, &v4.sin_addr) == 1 else { throw .malformed("bad host \(host)") }
        }
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .connectFailed(errno: errno) }
        // Non-blocking connect bounded by poll, then back to blocking.
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let result: Int32
        if isV6 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            result = withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            result = withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if result != 0 {
            let code = errno
            guard code == EINPROGRESS else { Glibc.close(fd); throw .connectFailed(errno: code) }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&pfd, 1, Int32(timeout * 1000)) == 1 else { Glibc.close(fd); throw .timedOut }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
            guard socketError == 0 else { Glibc.close(fd); throw .connectFailed(errno: socketError) }
        }
        _ = fcntl(fd, F_SETFL, flags)
        if let authority = HTTPTestTLS.authority(port: port) { try handshake(authority: authority, serverName: host, priorities: nil) }
    }

    /// Connects and handshakes TLS with `priorities` (GnuTLS' syntax; nil for its defaults),
    /// trusting `authority`, whether or not the port is registered.
    public convenience init(host: String = "127.0.0.1", port: Int, tlsAuthority authority: String, priorities: String?,
                            timeout: Double = 5) throws(HTTPTestClientError) {
        try self.init(host: host, port: port, timeout: timeout)
        if tls == nil { try handshake(authority: authority, serverName: host, priorities: priorities) }
    }

    private func handshake(authority: String, serverName: String, priorities: String?) throws(HTTPTestClientError) {
        // As curl does: under TLS 1.3 the client's Finished goes out alone, and with Nagle's
        // algorithm the request behind it waits for the server's delayed ACK (40 ms on Linux;
        // measured: every HTTPS request took 44 ms, 0.6 ms with TLS 1.2 or with this).
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        var detail = [CChar](repeating: 0, count: 256)
        tls = CGnuTLS_client_open(fd, authority, serverName, priorities, &detail, detail.count)
        if tls == nil {
            close()
            throw .tlsFailed(String(decoding: detail.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    deinit { close() }

    /// Closes the connection (idempotent).
    public func close() {
        if let session = tls {
            CGnuTLS_client_close(session)
            tls = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Sends all of `bytes` (never raises SIGPIPE).
    public func send(_ bytes: [UInt8]) throws(HTTPTestClientError) {
        var offset = 0
        while offset < bytes.count {
            if let session = tls {
                let sent = bytes[offset...].withUnsafeBytes { CGnuTLS_client_send(session, $0.baseAddress, $0.count) }
                guard sent > 0 else { throw .sendFailed(errno: EPIPE) }
                offset += sent
                continue
            }
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw .sendFailed(errno: errno)
            }
            offset += sent
        }
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) throws(HTTPTestClientError) {
        try send(Array(text.utf8))
    }

    /// Reads one response: status line, headers, and a `Content-Length` body, a
    /// `Transfer-Encoding: chunked` one (joined), or everything until EOF when neither.
    public func readResponse(timeout: Double = 10) throws(HTTPTestClientError) -> HTTPTestResponse {
        let deadline = monotonicNow() + timeout
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int? = nil
        while headerEnd == nil {
            headerEnd = buffered.firstRange(of: separator)?.upperBound
            if headerEnd == nil {
                guard try fill(until: deadline) else { throw .closedBeforeResponse }
            }
        }
        let head = String(decoding: buffered[..<(headerEnd! - 4)], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = String(lines.removeFirst())
        let statusParts = statusLine.split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformed("status line \(statusLine)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("header line \(line)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces()))
        }
        buffered.removeFirst(headerEnd!)
        let response = HTTPTestResponse(status: status, headers: headers, body: [])
        if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            var complete = response
            complete.body = try readChunks(until: deadline)
            return complete
        }
        if let lengthText = response.header("Content-Length") {
            guard let length = Int(lengthText) else { throw .malformed("Content-Length \(lengthText)") }
            while buffered.count < length {
                guard try fill(until: deadline) else { throw .closedBeforeResponse }
            }
            var complete = response
            complete.body = Array(buffered[..<length])
            buffered.removeFirst(length)
            return complete
        }
        while try fill(until: deadline) {}
        var complete = response
        complete.body = buffered
        buffered = []
        return complete
    }

    /// A chunked body (RFC 9112 §7.1): hex size lines, each chunk followed by CRLF, up to
    /// the zero-size chunk and the trailer section's blank line.
    private func readChunks(until deadline: Double) throws(HTTPTestClientError) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine(until: deadline)
            guard let size = Int(line.split(separator: ";").first?.trimmingSpaces() ?? "", radix: 16), size >= 0 else {
                throw .malformed("chunk size \(line)")
            }
            if size == 0 {
                while try !readLine(until: deadline).isEmpty {}
                return body
            }
            while buffered.count < size + 2 {
                guard try fill(until: deadline) else { throw .closedBeforeResponse }
            }
            body.append(contentsOf: buffered[..<size])
            buffered.removeFirst(size + 2)
        }
    }

    /// One CRLF-ended line of the buffer, without the CRLF.
    private func readLine(until deadline: Double) throws(HTTPTestClientError) -> String {
        while true {
            if let end = buffered.firstRange(of: [13, 10]) {
                let line = String(decoding: buffered[..<end.lowerBound], as: UTF8.self)
                buffered.removeFirst(end.upperBound)
                return line
            }
            guard try fill(until: deadline) else { throw .closedBeforeResponse }
        }
    }

    /// Waits until the server closes or resets the connection, keeping any
    /// bytes it sends for `readResponse`. True when it closed within `timeout`
    /// (0 checks without waiting), false when it is still open.
    public func waitForClose(timeout: Double) -> Bool {
        let deadline = monotonicNow() + timeout
        while true {
            do {
                guard try fill(until: deadline) else { return true }
            } catch {
                return false
            }
        }
    }

    /// Reads more bytes into the buffer. False on EOF or reset; throws `.timedOut` at the deadline.
    private func fill(until deadline: Double) throws(HTTPTestClientError) -> Bool {
        while true {
            let remaining = deadline - monotonicNow()
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // Bytes GnuTLS already decrypted are not on the socket any more.
            let pending = tls.map { CGnuTLS_client_pending($0) > 0 } ?? false
            let ready = pending ? 1 : poll(&pfd, 1, Int32(max(0, remaining * 1000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw .timedOut }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { raw in
                tls.map { CGnuTLS_client_recv($0, raw.baseAddress, raw.count) } ?? recv(fd, raw.baseAddress, raw.count, 0)
            }
            // GNUTLS_E_AGAIN (-28): a record not yet whole.
            if tls != nil, count == -28 { continue }
            if tls != nil, count < 0 { return false } // a TLS alert or a reset: the server is gone
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return false // ECONNRESET and friends: the server is gone
            }
            if count == 0 { return false }
            buffered.append(contentsOf: chunk[..<count])
            return true
        }
    }
}

/// How a trickled request ended.
public struct HTTPTrickleOutcome: Sendable {
    /// Body bytes the client managed to send before the server hung up (or all of them).
    public var bytesSent: Int
    /// The response, when one arrived.
    public var response: HTTPTestResponse?
    /// Whether the server closed the connection before the whole body was sent.
    public var cutEarly: Bool
}

/// One-call helpers over `HTTPTestConnection`.
public enum HTTPTestClient {
    /// The request head: request line, `Host` (`127.0.0.1`, an address `serve` always answers
    /// to, unless the fields give one), the given fields, blank line.
    public static func head(method: String, path: String, headers: [(name: String, value: String)]) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.name.lowercased() == "host" }) { text += "Host: 127.0.0.1\r\n" }
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Sends a well-formed request (with `Content-Length` when there is a body
    /// or the method is POST/PUT) and reads the response.
    public static func request(host: String = "127.0.0.1", port: Int, method: String = "GET", path: String = "/",
                               headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                               timeout: Double = 10) throws(HTTPTestClientError) -> HTTPTestResponse {
        let connection = try HTTPTestConnection(host: host, port: port, timeout: timeout)
        defer { connection.close() }
        var fields = headers
        if !body.isEmpty || method == "POST" || method == "PUT" {
            fields.append(("Content-Length", String(body.count)))
        }
        do {
            try connection.send(head(method: method, path: path, headers: fields) + body)
        } catch .sendFailed(let code) {
            // A server may answer before it has read the whole body (413) and hang up: that answer,
            // when it arrived, is the response; else the send's failure is.
            if let early = try? connection.readResponse(timeout: timeout) { return early }
            throw .sendFailed(errno: code)
        }
        return try connection.readResponse(timeout: timeout)
    }

    /// Sends a request announcing `contentLength` but carrying `body`, which
    /// may be longer or shorter, and returns the open connection.
    public static func sendLyingContentLength(host: String = "127.0.0.1", port: Int, method: String = "POST",
                                              path: String = "/", contentLength: Int, body: [UInt8],
                                              headers: [(name: String, value: String)] = [])
        throws(HTTPTestClientError) -> HTTPTestConnection {
        let connection = try HTTPTestConnection(host: host, port: port)
        try connection.send(head(method: method, path: path,
                                 headers: headers + [("Content-Length", String(contentLength))]) + body)
        return connection
    }

    /// Sends the head at once, then the body one byte at a time with `delay`
    /// seconds before each byte; stops early when the server hangs up. Then
    /// reads the response if one comes.
    public static func trickle(host: String = "127.0.0.1", port: Int, method: String = "POST", path: String = "/",
                               body: [UInt8], delay: Double, readTimeout: Double = 5)
        throws(HTTPTestClientError) -> HTTPTrickleOutcome {
        let connection = try HTTPTestConnection(host: host, port: port)
        defer { connection.close() }
        try connection.send(head(method: method, path: path, headers: [("Content-Length", String(body.count))]))
        var sent = 0
        for byte in body {
            sleepSeconds(delay)
            if connection.waitForClose(timeout: 0) {
                return HTTPTrickleOutcome(bytesSent: sent, response: try? connection.readResponse(timeout: 0),
                                          cutEarly: true)
            }
            do {
                try connection.send([byte])
            } catch {
                return HTTPTrickleOutcome(bytesSent: sent, response: try? connection.readResponse(timeout: 0),
                                          cutEarly: true)
            }
            sent += 1
        }
        let response = try? connection.readResponse(timeout: readTimeout)
        return HTTPTrickleOutcome(bytesSent: sent, response: response, cutEarly: false)
    }

    /// Opens a connection that sends nothing.
    public static func openIdle(host: String = "127.0.0.1", port: Int) throws(HTTPTestClientError) -> HTTPTestConnection {
        try HTTPTestConnection(host: host, port: port)
    }
}

/// Encodes `chunks` as an HTTP/1.1 chunked body, with the final zero chunk.
public func chunkedBody(_ chunks: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for chunk in chunks {
        bytes += Array((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + [13, 10]
    }
    bytes += Array("0\r\n\r\n".utf8)
    return bytes
}

/// Seconds on the monotonic clock.
public func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Sleeps the calling thread.
public func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    usleep(UInt32(seconds * 1_000_000))
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
