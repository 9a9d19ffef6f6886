import Foundation
import Postgres
import TestSupport
import Warehouse

/// The Stridee paths (docs/stridee.md), for a person.
struct StrideePaths {
    let person: String
    let relay: Bool

    var workouts: String { relay ? "/v1/accounts/\(person)/apple/workouts" : "/v1/device/apple/workouts" }
    var wellness: String { relay ? "/v1/accounts/\(person)/apple/wellness" : "/v1/device/apple/wellness" }
    static let connection = "/v1/device/connections/apple"
}

/// A person with a token, pushing Stridee bodies to a running receiver.
struct StrideeClient {
    let receiver: RunningReceiver
    let person: String
    let token: String

    var authorization: [(name: String, value: String)] { [("Authorization", "Bearer \(token)")] }

    /// Any request on a Stridee path with the person's credential (JSON body when one is given).
    func send(_ method: String, _ path: String, _ body: [UInt8] = [],
              headers: [(name: String, value: String)]? = nil) throws -> HTTPTestResponse {
        var fields = headers ?? authorization
        if !body.isEmpty { fields.append(("Content-Type", "application/json")) }
        return try HTTPTestClient.request(port: receiver.port, method: method, path: path, headers: fields, body: body, timeout: 60)
    }

    func send(_ method: String, _ path: String, _ body: String) throws -> HTTPTestResponse {
        try send(method, path, Array(body.utf8))
    }

    /// `PUT /v1/device/connections/apple`.
    func connect() throws -> HTTPTestResponse { try send("PUT", StrideePaths.connection) }
}

/// Runs `body` with a receiver over a fresh database and a token for person `alice`.
func withStridee<T>(label: String = #function, authHeader: String = "Authorization", maxBody: Int = 4 << 20,
                    _ body: (StrideeClient, TestDatabase) throws -> T) throws -> T {
    try withReceiver(label: label, authHeader: authHeader, maxBody: maxBody) { receiver, db in
        let token = try TokenStore(pool: receiver.pool).create(person: "alice", label: nil).token
        return try body(StrideeClient(receiver: receiver, person: "alice", token: token), db)
    }
}

/// What the database holds of Stridee data, per table, for `person`.
func strideeCounts(_ db: TestDatabase, person: String = "alice") throws -> [String: Int] {
    let row = try db.query("""
        SELECT (SELECT count(*) FROM health_store.stridee_workouts WHERE person = $1),
               (SELECT count(*) FROM health_store.workout_streams WHERE person = $1),
               (SELECT count(*) FROM health_store.workout_routes WHERE person = $1),
               (SELECT count(*) FROM health_store.wellness_items WHERE person = $1),
               (SELECT count(*) FROM health_store.samples WHERE person = $1)
        """, [person]).first!
    return ["workouts": try row.decode(0), "streams": try row.decode(1), "routes": try row.decode(2),
            "wellness": try row.decode(3), "samples": try row.decode(4)]
}

/// Nothing of any Stridee body (nor any sample) held for `person`.
let nothingStored = ["workouts": 0, "streams": 0, "routes": 0, "wellness": 0, "samples": 0]

/// Every row of a query as its cells' text (nil for SQL NULL).
func cells(_ db: TestDatabase, _ sql: String, _ parameters: [(any PostgresBindable)?] = []) throws -> [[String?]] {
    let rows = try db.query(sql, parameters)
    let width = rows.columns.count
    return rows.map { row in (0..<width).map { row[$0] } }
}
