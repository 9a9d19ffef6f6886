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
    /// `serve` is listening but still migrating the database.
    case migrating
    /// A method the path does not answer; `allow` lists those it does.
    case methodNotAllowed(allow: [String])
    case unauthorized
    case forwardedWithoutTokens
    /// A content type the path does not take; `accepted` names those it does.
    case unsupportedMediaType(String?, accepted: String = "application/json or text/csv")
    case rejected(PayloadError)
    case failed(any Error)
    // The Stridee endpoints (docs/stridee.md).
    /// A `healthkit.v1` workout stored (or held already).
    case workoutAccepted(uuid: String)
    /// A `healthkit.wellness.v1` batch of `items` stored.
    case wellnessAccepted(items: Int)
    /// The person's connection, after a `PUT` or for a `GET`.
    case connection(StrideeConnection)
    /// After a `DELETE`: the connection, now disconnected; nil when there never was one.
    case disconnected(StrideeConnection?)
    /// `GET` of a connection never made.
    case neverConnected
    /// A device push while the person is not connected.
    case notConnected
    /// A relay path (`/v1/accounts/{id}/…`) whose `{id}` is not the token's person.
    case wrongAccount
    /// A Stridee body refused by its decoder, naming the field.
    case strideeRejected(StrideePayloadError)
    // Health Auto Export (`POST /hae`).
    /// A body stored: its counts and workouts.
    case haeStored(HAECounts)
    /// A body that is not `{"data": {…}}` with arrays (or a grouping header the app never
    /// sends), naming the JSON path.
    case haeRejected(StrideePayloadError)

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
            return .json(status: 503, #"{"database":"down","error":"the database does not answer; retry later"}"#, headers: [("Retry-After", "60")])
        case .migrating:
            return .json(status: 503, #"{"database":"migrating","error":"the database is being migrated; retry later"}"#,
                         headers: [("Retry-After", "60")])
        case .methodNotAllowed(let allow):
            let message = allow == ["POST"] ? "use POST to send a batch" : "use " + allow.joined(separator: ", ") + " on this path"
            return .json(status: 405, Self.error(message), headers: [("Allow", allow.joined(separator: ", "))])
        case .unauthorized:
            return .json(status: 401, Self.error("missing or wrong credential"))
        case .forwardedWithoutTokens:
            return .json(status: 401, Self.error(
                "this request came through a reverse proxy (it carries Forwarded, Via, X-Forwarded-…, X-Real-IP or the like) and no token exists: "
                    + "mint one with `health-warehouse token create --person NAME` and send it with every request"))
        case .unsupportedMediaType(let type, let accepted):
            return .json(status: 415, Self.error("Content-Type must be \(accepted), got \(type ?? "none")"))
        case .rejected(let error):
            return .json(status: 400, Self.error(error.message))
        case .workoutAccepted(let uuid):
            return .json(status: 202, #"{"status":"active","uuid":"# + JSONString.quoted(uuid) + "}")
        case .wellnessAccepted(let items):
            return .json(status: 202, #"{"items":\#(items),"status":"active"}"#)
        case .connection(let connection):
            return .json(status: 200, Self.connectionJSON(connection))
        case .disconnected(let connection):
            return .json(status: 200, Self.connectionJSON(connection.map { StrideeConnection(isActive: false, connectedAt: $0.connectedAt) }))
        case .neverConnected:
            return .json(status: 404, Self.error("never connected: PUT /v1/device/connections/apple connects"))
        case .notConnected:
            return .json(status: 409, Self.error("not connected: PUT /v1/device/connections/apple first (a relay push connects too)"))
        case .wrongAccount:
            return .json(status: 403, Self.error("the account in the path is not the credential's person"))
        case .strideeRejected(let error):
            // More items than a batch may hold is a size limit, like a body too large.
            return .json(status: error.reason == .tooManyItems ? 413 : 400, Self.error(error.description))
        case .haeStored(let counts):
            return .json(status: 200, counts.jsonText)
        case .haeRejected(let error):
            return .json(status: 400, Self.error(error.description))
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

    /// Why this outcome is a 503 or 500, for the metrics; nil for any other answer.
    var unavailableCause: UnavailableCause? {
        switch self {
        case .migrating: return .migrating
        case .failed(let error):
            guard let postgres = error as? PostgresError else { return .internalError }
            if postgres.isTimeout { return postgres.sqlState == SQLState.lockNotAvailable ? .lockTimeout : .statementTimeout }
            return postgres.isTransient ? .databaseDown : .internalError
        default: return nil
        }
    }

    /// What storing failing comes to: `unauthorized` when the credential was gone once the
    /// person lock was held (the person was deleted meanwhile: `CredentialHold`), else `failed`.
    static func storeFailed(_ error: any Error) -> ReceiverOutcome {
        CredentialHold.isRevoked(error) ? .unauthorized : .failed(error)
    }

    static func error(_ message: String) -> String {
        "{\"error\":" + JSONString.quoted(message) + "}"
    }

    /// `{"provider":"apple","status":"active","connected_at":"…"}`; `connected_at` null and
    /// status `disconnected` for a connection never made.
    static func connectionJSON(_ connection: StrideeConnection?) -> String {
        let status = connection?.isActive == true ? "active" : "disconnected"
        let connectedAt = connection.map { JSONString.quoted($0.connectedAt) } ?? "null"
        return #"{"provider":"apple","status":""# + status + #"","connected_at":"# + connectedAt + "}"
    }
}
