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
        case .unsupportedMediaType(let type):
            return .json(status: 415, Self.error("Content-Type must be application/json or text/csv, got \(type ?? "none")"))
        case .rejected(let error):
            return .json(status: 400, Self.error(error.message))
        case .failed(let error):
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
