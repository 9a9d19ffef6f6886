import HealthPayload
import HTTPServer
import Postgres
import Warehouse

/// Everything a request can come to, before it becomes a status code.
enum ReceiverOutcome {
    case stored(StoreCounts)
    case probe
    case stats(json: String)
    case healthy
    case unhealthy
    case methodNotAllowed
    case unauthorized
    case forwardedWithoutTokens
    case unsupportedMediaType(String?)
    case rejected(PayloadError)
    case failed(any Error)

    /// The one place an outcome becomes an HTTP answer (docs/receiver.md, "Answers"). Payload problems are
    /// 4xx and never retried by the app; our trouble is 5xx so the app keeps the batch.
    var response: HTTPResponse {
        switch self {
        case .stored(let counts):
            return .json(status: 200, counts.jsonText)
        case .probe:
            return .json(status: 200, #"{"probe":true}"#)
        case .stats(let json):
            return .json(status: 200, json)
        case .healthy:
            return .json(status: 200, #"{"database":"up"}"#)
        case .unhealthy:
            return .json(status: 503, #"{"database":"down"}"#, headers: [("Retry-After", "60")])
        case .methodNotAllowed:
            return .json(status: 405, Self.error("use POST to send a batch"), headers: [("Allow", "POST")])
        case .unauthorized:
            return .json(status: 401, Self.error("missing or wrong credential"))
        case .forwardedWithoutTokens:
            return .json(status: 401, Self.error(
                "this request came through a reverse proxy (Forwarded, X-Forwarded-For or X-Real-IP) and no token exists: "
                    + "mint one with `health-warehouse token create --person NAME` and send it with every request"))
        case .unsupportedMediaType(let type):
            return .json(status: 415, Self.error("Content-Type must be application/json or text/csv, got \(type ?? "none")"))
        case .rejected(let error):
            return .json(status: 400, Self.error(error.message))
        case .failed(let error):
            if let postgres = error as? PostgresError, postgres.isTimeout {
                // A writer waited past its lock_timeout (55P03) or statement_timeout (57014):
                // busy, not broken. The app keeps the batch and honours Retry-After.
                return .json(status: 503, Self.error("database busy; retry later"), headers: [("Retry-After", "60")])
            }
            if let postgres = error as? PostgresError, postgres.isTransient {
                return .json(status: 503, Self.error("database unavailable; retry later"), headers: [("Retry-After", "60")])
            }
            return .json(status: 500, Self.error("internal error; retry later"))
        }
    }

    static func error(_ message: String) -> String {
        "{\"error\":" + JSONString.quoted(message) + "}"
    }
}
