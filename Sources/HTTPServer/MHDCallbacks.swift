import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `@convention(c)` functions libmicrohttpd calls, as static members so
/// they are non-isolated and capture nothing (a closure literal in a
/// `main.swift` is main-actor isolated and traps on MHD's threads).
enum MHDCallbacks {
    /// The body of the bare 413.
    static let tooLargeBody = #"{"error":"body too large"}"#
    /// The body of the 503 for a body the server's budget cannot take now.
    static let busyBody = #"{"error":"too many large bodies in flight; retry later"}"#

    /// The MHD_AccessHandlerCallback: called once when the headers are in
    /// (the application's `onHead` decides then, before any body), once per
    /// piece of body, and once more with `*upload_data_size == 0` when the
    /// request is complete; that last call runs the application's `respond`.
    static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, _, uploadData, uploadDataSize, conCls in
        guard let cls, let connection, let uploadDataSize, let conCls else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()

        guard let existing = conCls.pointee else {
            // First call: headers only. The context lives until requestCompleted.
            let head = HTTPRequestHead(
                method: method.map { String(cString: $0) } ?? "",
                path: url.map { String(cString: $0) } ?? "",
                headers: requestHeaders(connection),
                remoteAddress: clientAddress(connection),
                contentLength: contentLength(connection))
            let context = RequestContext(head: head)
            conCls.pointee = Unmanaged.passRetained(context).toOpaque()
            core.requestsInFlight.add(1, ordering: .sequentiallyConsistent)
            switch core.onHead(head) {
            case .reject(let response):
                // Queueing now makes MHD skip the body (and the 100-continue) and close
                // after answering.
                context.responded = true
                core.watch.received(key(connection))
                return queue(response, on: connection, core: core, context: context)
            case .accept(let limit, let respond):
                context.maxBodyBytes = max(0, limit ?? core.maxBodyBytes)
                context.respond = respond
            }
            if let announced = head.contentLength {
                if announced > UInt64(context.maxBodyBytes) {
                    // Refused before reading, like a reject.
                    context.bodyTooLarge = true
                    context.responded = true
                    core.watch.received(key(connection))
                    return queue(tooLargeResponse(), on: connection, core: core, context: context, byServer: true)
                }
                // announced <= maxBodyBytes, an Int.
                guard core.reserve(Int(announced)) else {
                    // More than the budget has left. A client waiting for `100 Continue` gets
                    // the 503 at once and sends nothing; any other is sending already, so its
                    // body is drained (never kept) and the 503 follows it, where every client
                    // reads it (an answer before the body and a close would reset its upload).
                    context.overBudget = true
                    guard head.headers["Expect"]?.lowercased() == "100-continue" else { return .YES }
                    context.responded = true
                    core.watch.received(key(connection))
                    return queue(busyResponse(), on: connection, core: core, context: context, byServer: true)
                }
                context.reservedBytes = Int(announced)
                context.body.reserveCapacity(Int(announced))
            }
            return .YES
        }
        let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()

        let size = uploadDataSize.pointee
        if size > 0 {
            // Always mark everything consumed, even what we drop: MHD calls
            // again at once with the same data otherwise (spins).
            uploadDataSize.pointee = 0
            context.receivedBytes += size
            if context.responded { return .YES }
            // Compared by subtraction: body.count <= maxBodyBytes, so nothing can overflow.
            if !context.bodyTooLarge, !context.overBudget {
                if size > context.maxBodyBytes - context.body.count {
                    context.bodyTooLarge = true
                } else if !reserve(size, for: context, core: core) {
                    context.overBudget = true
                }
                if context.bodyTooLarge || context.overBudget {
                    context.body = []
                    core.release(context.reservedBytes)
                    context.reservedBytes = 0
                }
            }
            if context.bodyTooLarge || context.overBudget {
                // MHD 0.9.75 accepts a response only before the body or after
                // all of it (MHD_queue_response returns MHD_NO mid-body, seen
                // in tests), so the rest is drained, not stored, and the 413
                // (or 503) goes out at the end. A client still sending after
                // max(cap, 1 MiB) more bytes is cut rather than drained forever.
                let (total, overflow) = context.discardedBytes.addingReportingOverflow(size)
                context.discardedBytes = overflow ? Int.max : total
                return context.discardedBytes > max(context.maxBodyBytes, 1 << 20) ? .NO : .YES
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                    context.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            return .YES
        }

        // Last call: the whole request is in.
        if context.responded { return .YES }
        context.responded = true
        core.watch.received(key(connection))
        if context.overBudget { return queue(busyResponse(), on: connection, core: core, context: context, byServer: true) }
        guard !context.bodyTooLarge, let respond = context.respond else {
            return queue(tooLargeResponse(), on: connection, core: core, context: context, byServer: true)
        }
        var body: [UInt8] = []
        swap(&body, &context.body)
        let head = context.head
        let request = HTTPRequest(method: head.method, path: head.path, headers: head.headers, body: body,
                                  remoteAddress: head.remoteAddress)
        let response = respond(request)
        return queue(response, on: connection, core: core, context: context)
    }

    /// The MHD_RequestCompletedCallback: called for every request that reached
    /// the access handler, however it ended (answered, timed out, aborted,
    /// daemon shutdown); frees the request's context. A kept-alive connection's
    /// next request is due within the request deadline from now.
    static let requestCompleted: MHD_RequestCompletedCallback = { cls, connection, conCls, _ in
        guard let cls, let conCls, let raw = conCls.pointee else { return }
        conCls.pointee = nil
        let context = Unmanaged<RequestContext>.fromOpaque(raw)
        let reserved = context.takeUnretainedValue().reservedBytes
        context.release()
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.release(reserved)
        if let connection { core.watch.awaitingNext(key(connection)) }
        core.requestsInFlight.subtract(1, ordering: .sequentiallyConsistent)
        // The body and what its handler built are freed by now: give the memory back.
        if core.returnMemoryAfterBytes > 0, reserved >= core.returnMemoryAfterBytes { _ = CMicroHTTPD_trim_memory() }
    }

    /// Reserves what a chunked body's next `size` bytes need beyond what its request holds
    /// (a `Content-Length` reserved all of it already); false when the budget has no room.
    static func reserve(_ size: Int, for context: RequestContext, core: ServerCore) -> Bool {
        let needed = context.body.count + size - context.reservedBytes
        guard needed > 0 else { return true }
        guard core.reserve(needed) else { return false }
        context.reservedBytes += needed
        return true
    }

    /// The MHD_NotifyConnectionCallback: a connection opened (its first request
    /// is due within the deadline) or closed (MHD closes its socket after this).
    static let connectionNotified: MHD_NotifyConnectionCallback = { cls, connection, _, code in
        guard let cls, let connection else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        // MHD_CONNECTION_NOTIFY_STARTED is 0, MHD_CONNECTION_NOTIFY_CLOSED 1 (microhttpd.h).
        switch code.rawValue {
        case 0: core.watch.opened(key(connection), socket: CMicroHTTPD_connection_socket(connection))
        case 1: core.watch.closed(key(connection))
        default: break
        }
    }

    /// A connection's identity in the watch: its address, unique while it is open.
    static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    /// The MHD_KeyValueIterator collecting header fields into a `HeaderCollector`.
    static let collectHeader: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let collector = Unmanaged<HeaderCollector>.fromOpaque(cls).takeUnretainedValue()
        // A field's value is what lies between its leading and trailing spaces and tabs (RFC 9110
        // §5.5): `Bearer <token> ` is the credential `Bearer <token>`.
        collector.fields.append((name: String(cString: key), value: value.map { trimmingSpaces(String(cString: $0)) } ?? ""))
        return .YES
    }

    /// The 413 for a body over the cap: bare (no `Retry-After`), JSON body.
    static func tooLargeResponse() -> HTTPResponse {
        HTTPResponse.json(status: 413, tooLargeBody)
    }

    /// The 503 for a body the budget cannot take now: with `Retry-After`, the client sends it again.
    static func busyResponse() -> HTTPResponse {
        HTTPResponse.json(status: 503, busyBody, headers: [("Retry-After", "30")])
    }

    /// The `Content-Length` the client announced, when present and numeric.
    static func contentLength(_ connection: OpaquePointer) -> UInt64? {
        guard let raw = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") else {
            return nil
        }
        let text = trimmingSpaces(String(cString: raw))
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        // Digits that overflow UInt64 are certainly over any cap.
        return UInt64(text) ?? UInt64.max
    }

    /// The request's header fields in arrival order.
    static func requestHeaders(_ connection: OpaquePointer) -> HTTPHeaders {
        let collector = HeaderCollector()
        let unmanaged = Unmanaged.passRetained(collector)
        defer { unmanaged.release() }
        _ = MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, unmanaged.toOpaque())
        return HTTPHeaders(collector.fields)
    }

    /// The client's IP address as text, or "" when MHD cannot tell.
    static func clientAddress(_ connection: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard CMicroHTTPD_client_address(connection, &buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Copies `response` into MHD and queues it; an invalid response (a handler
    /// bug) becomes a 500 so nothing malformed reaches the wire.
    static func queue(_ response: HTTPResponse, on connection: OpaquePointer, core: ServerCore,
                      context: RequestContext, byServer: Bool = false) -> MHD_Result {
        let result = queue(response, on: connection, core: core)
        if let onAnswered = core.onAnswered {
            let seconds = Double(RequestContext.now() - context.startedNanoseconds) / 1e9
            onAnswered(HTTPAnswered(method: context.head.method, path: context.head.path,
                                    status: response.problem == nil ? response.status : 500,
                                    seconds: seconds, bodyBytes: context.receivedBytes, byServer: byServer))
        }
        return result
    }

    /// Copies `response` into MHD and queues it (see `queue(_:on:core:context:)`).
    static func queue(_ response: HTTPResponse, on connection: OpaquePointer, core: ServerCore) -> MHD_Result {
        var response = response
        if let problem = response.problem {
            logLine("http.invalid_response reason=\(problem)")
            response = HTTPResponse.json(status: 500, #"{"error":"internal error"}"#)
        }
        let created: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            // MUST_COPY: MHD owns its copy; our array may go away before sending.
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse = created else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers where !HTTPResponse.isSetByMHD(field.name) {
            guard MHD_add_response_header(mhdResponse, field.name, field.value) == .YES else {
                logLine("http.header_rejected")
                return .NO
            }
        }
        if core.stopping.load(ordering: .sequentiallyConsistent) {
            // Shutting down: don't invite the client to reuse this connection.
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        // `problem` keeps status within 200...599.
        return MHD_queue_response(connection, UInt32(clamping: response.status), mhdResponse)
    }

    /// One line on stderr; never request data.
    static func logLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Receives header fields from `MHD_get_connection_values`.
    final class HeaderCollector {
        /// The fields collected so far.
        var fields: [(name: String, value: String)] = []
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmingSpaces(_ text: String) -> String {
        var utf8 = Substring(text).utf8
        while let first = utf8.first, first == 0x20 || first == 0x09 { utf8 = utf8.dropFirst() }
        while let last = utf8.last, last == 0x20 || last == 0x09 { utf8 = utf8.dropLast() }
        return String(Substring(utf8))
    }
}
