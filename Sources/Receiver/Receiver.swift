import Foundation
import Hashing
import HealthPayload
import HTTPServer
import Postgres
import Synchronization
import Warehouse

/// Turns a request into a stored batch and a status code: credential → person, content
/// type → decoder → store → answer. Runs on the HTTP server's connection threads and may
/// block on the database there.
///
/// The credential and the content type are checked in `admit`, when the header fields
/// arrive and before any body is read, so a client without a valid token cannot make the
/// receiver buffer or parse anything; the person found there reaches the body's handler as
/// a captured value, never looked up twice.
public final class Receiver: Sendable {
    let pool: PostgresPool
    let store: BatchStore
    let stridee: StrideeStore
    let tokens: TokenStore
    let configuration: ReceiverConfiguration
    /// Where samples, 503 causes and the last batch are counted; nil counts nothing.
    let metrics: ReceiverMetrics?
    /// False while `serve` is still migrating the database: every request is then `503` with
    /// `Retry-After` (`/healthz` included), and nothing touches the database.
    private let ready: Atomic<Bool>

    /// A receiver over `pool`; with `ready` false it answers `503` until `markReady()`. With
    /// `metrics`, what it stores and why it answers 503 are counted there.
    public init(pool: PostgresPool, configuration: ReceiverConfiguration = ReceiverConfiguration(), ready: Bool = true,
                metrics: ReceiverMetrics? = nil) {
        self.metrics = metrics
        self.pool = pool
        self.store = BatchStore(pool: pool)
        self.stridee = StrideeStore(pool: pool)
        self.tokens = TokenStore(pool: pool)
        self.configuration = configuration
        self.ready = Atomic(ready)
    }

    /// The database is migrated: requests are served from now on.
    public func markReady() {
        ready.store(true, ordering: .sequentiallyConsistent)
    }

    /// True once `markReady` was called: the database is migrated.
    public var isReady: Bool { ready.load(ordering: .sequentiallyConsistent) }

    /// Decides on a request from its header fields alone (the server's `onHead`): answers
    /// `GET`s, refusals (401, 403, 405, 409, 415) and database trouble at once, and accepts a
    /// batch `POST` or a Stridee request with the handler that decodes and stores its body for
    /// the person found, under the body limit of its path.
    public func admit(_ head: HTTPRequestHead) -> HTTPHeadDecision {
        let started = DispatchTime.now().uptimeNanoseconds
        var person: String?
        let body: (person: String, limit: Int?, handle: @Sendable ([UInt8], inout PhaseTiming) -> ReceiverOutcome)
        switch decide(head, person: &person) {
        case .answer(let outcome):
            let response = outcome.response
            log(method: head.method, path: head.path, person: person, outcome: outcome, status: response.status,
                timing: PhaseTiming(), started: started)
            return .reject(response)
        case .readBody(let who, let format):
            body = (who, nil, { [self] bytes, timing in receive(bytes, person: who, format: format, timing: &timing) })
        case .readStrideeBody(let who, let route, let method):
            body = (who, route.maxBodyBytes, { [self] bytes, timing in
                receiveStridee(bytes, person: who, route: route, method: method, timing: &timing)
            })
        case .readHAEBody(let who, let aggregation):
            body = (who, configuration.maxHAEBodyBytes, { [self] bytes, timing in
                receiveHAE(bytes, person: who, aggregation: aggregation, timing: &timing)
            })
        }
        let headNanoseconds = DispatchTime.now().uptimeNanoseconds - started
        return .accept(maxBodyBytes: body.limit) { [self] request in
            let started = DispatchTime.now().uptimeNanoseconds
            var timing = PhaseTiming()
            let outcome = body.handle(request.body, &timing)
            let response = outcome.response
            log(method: request.method, path: request.path, person: body.person, outcome: outcome, status: response.status,
                timing: timing, started: started - min(started, headNanoseconds))
            return response
        }
    }

    /// Answers one whole request: `admit` on its head, then the body's handler. For callers
    /// that already hold the body (tests, benchmarks); the server calls `admit` itself.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let head = HTTPRequestHead(method: request.method, path: request.path, headers: request.headers,
                                   remoteAddress: request.remoteAddress, contentLength: UInt64(request.body.count))
        switch admit(head) {
        case .reject(let response): return response
        case .accept(_, let respond): return respond(request)
        }
    }

    /// What the head of a request leads to.
    enum HeadOutcome {
        /// Answered without a body.
        case answer(ReceiverOutcome)
        /// A batch for `person` in `format`: read its body.
        case readBody(person: String, format: PayloadFormat)
        /// A Stridee request of `person` on `route` (docs/stridee.md): read its body.
        case readStrideeBody(person: String, route: StrideeRoute, method: String)
        /// A Health Auto Export body of `person`, grouped as its `automation-aggregation` header says.
        case readHAEBody(person: String, aggregation: String?)
    }

    func decide(_ head: HTTPRequestHead, person: inout String?) -> HeadOutcome {
        let method = head.method.uppercased()
        guard ready.load(ordering: .sequentiallyConsistent) else { return .answer(.migrating) }
        do {
            // Health Auto Export's path and the Stridee paths first: every other path keeps the
            // healthd rules below.
            if head.path == Self.haePath {
                return try decideHAE(head, method: method, person: &person)
            }
            if let route = StrideeRoute.match(head.path) {
                return try decideStridee(head, route: route, method: method, person: &person)
            }
            if method == "GET" || method == "HEAD" {
                switch head.path {
                case "/healthz":
                    // No credential and no data: a monitor behind a proxy may ask it too.
                    return .answer((try? pool.withConnection { PersonStats.isDatabaseUp($0) }) == true ? .healthy : .unhealthy)
                case "/stats":
                    switch try authenticate(head.headers) {
                    case .person(let who):
                        person = who
                        return .answer(.stats(json: try pool.withConnection { try PersonStats.jsonText(person: who, on: $0) }))
                    case .missingOrWrong: return .answer(.unauthorized)
                    case .forwardedWithoutTokens: return .answer(.forwardedWithoutTokens)
                    }
                default:
                    return .answer(.methodNotAllowed(allow: ["POST"]))
                }
            }
            if let refusal = try refusePOST(head, method: method, person: &person) { return .answer(refusal) }
            let contentType = head.headers["Content-Type"]
            guard let format = Self.format(of: contentType) else { return .answer(.unsupportedMediaType(contentType)) }
            return .readBody(person: person!, format: format)
        } catch {
            return .answer(.failed(error))
        }
    }

    /// What refuses a batch `POST` by its method and credential (`405`, `401`), or nil with
    /// `person` set to the credential's person.
    func refusePOST(_ head: HTTPRequestHead, method: String, person: inout String?) throws -> ReceiverOutcome? {
        guard method == "POST" else { return .methodNotAllowed(allow: ["POST"]) }
        switch try authenticate(head.headers) {
        case .missingOrWrong: return .unauthorized
        case .forwardedWithoutTokens: return .forwardedWithoutTokens
        case .person(let who):
            person = who
            return nil
        }
    }

    /// Decodes and stores a batch body for `person`.
    func receive(_ body: [UInt8], person: String, format: PayloadFormat, timing: inout PhaseTiming) -> ReceiverOutcome {
        let result = timing.measure(\.decodeMilliseconds) {
            Result { () throws(PayloadError) in try PayloadDecoder.decode(body, format: format) }
        }
        let decoded: DecodedBody
        switch result {
        case .success(let value): decoded = value
        case .failure(let error): return .rejected(error)
        }
        switch decoded {
        case .probe:
            return .probe
        case .batches(let batches):
            do {
                let digest = SHA256.hash(body)
                let counts = try timing.measure(\.storeMilliseconds) {
                    try store.store(batches, person: person, origin: .http, bodySHA256: digest, holdingCredential: true)
                }
                metrics?.stored(format == .json ? .healthdJSON : .healthdCSV, person: person,
                                [.inserted: counts.inserted, .duplicate: counts.duplicates, .replaced: counts.replaced,
                                 .quarantined: counts.quarantined])
                return .stored(counts)
            } catch {
                return .storeFailed(error)
            }
        }
    }

    /// One line about a request (never a body or a credential), and one more when storing failed.
    func log(method: String, path: String, person: String?, outcome: ReceiverOutcome, status: Int, timing: PhaseTiming,
             started: UInt64) {
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        var counts = StoreCounts()
        if case .stored(let stored) = outcome { counts = stored }
        if case .haeStored(let stored) = outcome { counts = stored.samples }
        Log.event("http.request", [
            "method": method, "path": path, "status": status, "person": person ?? "-",
            "samples": counts.samples, "inserted": counts.inserted, "duplicates": counts.duplicates,
            "replaced": counts.replaced, "quarantined": counts.quarantined,
            "decode_ms": timing.decodeMilliseconds, "db_ms": timing.storeMilliseconds, "ms": ms,
        ])
        if case .failed(let error) = outcome {
            Log.event("http.store_failed", ["person": person ?? "-", "error": "\(error)"])
        }
        if let metrics, let cause = outcome.unavailableCause { metrics.unavailable(cause) }
    }

    /// Whose request it is, from its credential header: `--auth-header` for healthd,
    /// `Authorization: Bearer` always on the Stridee paths.
    enum Credential: Equatable {
        /// A live token's person, or `default` while no token was ever minted.
        case person(String)
        /// Tokens exist and this one is missing, malformed, unknown or revoked.
        case missingOrWrong
        /// No token exists, and a reverse proxy forwarded the request: loopback behind a
        /// proxy is the internet, so the default person is not handed out (docs/receiver.md).
        case forwardedWithoutTokens
    }

    /// The credential of a request's header fields. The whole header value is compared
    /// (`Bearer <token>` with `Authorization`, the token itself with another header), of a
    /// header sent once (two are no credential: `HTTPHeaders.only`);
    /// `bearer` reads `Authorization: Bearer <token>` whatever `--auth-header` says.
    func authenticate(_ headers: HTTPHeaders, bearer: Bool = false) throws -> Credential {
        let token = bearer ? headers.only("Authorization").flatMap(ReceiverConfiguration.bearerToken)
            : headers.only(configuration.authHeader).flatMap(configuration.token(fromHeader:))
        if let token, let person = try tokens.person(forToken: token) {
            return .person(person)
        }
        if try tokens.anyMinted() { return .missingOrWrong }
        if headers.isForwarded { return .forwardedWithoutTokens }
        return .person(PersonName.defaultPerson)
    }

    /// `application/json` or `text/csv`, with any parameters (`; charset=utf-8`).
    static func format(of contentType: String?) -> PayloadFormat? {
        guard let contentType else { return nil }
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        switch mediaType {
        case "application/json": return .json
        case "text/csv": return .csv
        default: return nil
        }
    }
}

/// Where a request's time went, for the log line.
struct PhaseTiming {
    var decodeMilliseconds = 0.0
    var storeMilliseconds = 0.0

    mutating func measure<T>(_ phase: WritableKeyPath<PhaseTiming, Double>, _ body: () throws -> T) rethrows -> T {
        let started = DispatchTime.now().uptimeNanoseconds
        defer { self[keyPath: phase] += Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000 }
        return try body()
    }
}
