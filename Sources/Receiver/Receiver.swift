import Foundation
import HealthPayload
import HTTPServer
import Postgres
import Warehouse

/// Turns a request into a stored batch and a status code: credential → person, content
/// type → decoder → store → answer. Runs on the HTTP server's connection threads and may
/// block on the database there.
public final class Receiver: Sendable {
    let pool: PostgresPool
    let store: BatchStore
    let tokens: TokenStore
    let configuration: ReceiverConfiguration

    public init(pool: PostgresPool, configuration: ReceiverConfiguration = ReceiverConfiguration()) {
        self.pool = pool
        self.store = BatchStore(pool: pool)
        self.tokens = TokenStore(pool: pool)
        self.configuration = configuration
    }

    /// Answers one request and logs one line about it (never a body or a credential).
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        var person: String?
        var timing = PhaseTiming()
        let outcome = route(request, person: &person, timing: &timing)
        let response = outcome.response
        let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        var counts = StoreCounts()
        if case .stored(let stored) = outcome { counts = stored }
        Log.event("http.request", [
            "method": request.method, "path": request.path, "status": response.status, "person": person ?? "-",
            "samples": counts.samples, "inserted": counts.inserted, "duplicates": counts.duplicates,
            "replaced": counts.replaced, "quarantined": counts.quarantined,
            "decode_ms": timing.decodeMilliseconds, "db_ms": timing.storeMilliseconds, "ms": ms,
        ])
        if case .failed(let error) = outcome {
            Log.event("http.store_failed", ["person": person ?? "-", "error": "\(error)"])
        }
        return response
    }

    func route(_ request: HTTPRequest, person: inout String?, timing: inout PhaseTiming) -> ReceiverOutcome {
        let method = request.method.uppercased()
        if method == "GET" || method == "HEAD" {
            switch request.path {
            case "/healthz":
                return (try? pool.withConnection { PersonStats.isDatabaseUp($0) }) == true ? .healthy : .unhealthy
            case "/stats":
                do {
                    guard let who = try authenticate(request) else { return .unauthorized }
                    person = who
                    return .stats(json: try pool.withConnection { try PersonStats.jsonText(person: who, on: $0) })
                } catch {
                    return .failed(error)
                }
            default:
                return .methodNotAllowed
            }
        }
        guard method == "POST" else { return .methodNotAllowed }
        do {
            guard let who = try authenticate(request) else { return .unauthorized }
            person = who
            let contentType = request.headers["Content-Type"]
            guard let format = Self.format(of: contentType) else { return .unsupportedMediaType(contentType) }
            let result = timing.measure(\.decodeMilliseconds) {
                Result { () throws(PayloadError) in try PayloadDecoder.decode(request.body, format: format) }
            }
            let decoded: DecodedBody
            switch result {
            case .success(let body): decoded = body
            case .failure(let error): return .rejected(error)
            }
            switch decoded {
            case .probe:
                return .probe
            case .batches(let batches):
                let digest = SHA256.hash(request.body)
                return .stored(try timing.measure(\.storeMilliseconds) {
                    try store.store(batches, person: who, origin: .http, bodySHA256: digest)
                })
            }
        } catch {
            return .failed(error)
        }
    }

    /// The person a request's credential belongs to; `default` while no token was ever minted; nil
    /// for a missing or wrong credential.
    func authenticate(_ request: HTTPRequest) throws -> String? {
        if let value = request.headers[configuration.authHeader], let token = configuration.token(fromHeader: value),
           let person = try tokens.person(forToken: token) {
            return person
        }
        return try tokens.anyMinted() ? nil : PersonName.defaultPerson
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
