import Foundation
import HealthPayload
import Postgres

/// A person's Stridee connection (`PUT`/`GET`/`DELETE /v1/device/connections/apple`).
public struct StrideeConnection: Sendable, Equatable {
    /// True while device pushes are accepted; false once disconnected.
    public var isActive: Bool
    /// When the connection was last made, ISO 8601 UTC with milliseconds (`2026-10-01T06:02:11.000Z`).
    public var connectedAt: String

    /// Creates a connection as stored.
    public init(isActive: Bool, connectedAt: String) {
        self.isActive = isActive
        self.connectedAt = connectedAt
    }
}

/// What storing a Stridee push did (`health_store.push_outcome`).
public enum StrideePushResult: String, Sendable, Equatable {
    /// Stored (a workout new to the person, or a wellness batch).
    case stored
    /// A workout held before with another body, replaced whole.
    case replaced
    /// The same workout body again: nothing changed but when it was last received.
    case unchanged
    /// A device push while the person is not connected: nothing stored (`409`).
    case notConnected = "not_connected"

    /// The outcome PostgreSQL answered; a value this version does not know is an error, never
    /// taken for one it does.
    static func decode(_ text: String?) throws -> StrideePushResult {
        guard let text, let result = StrideePushResult(rawValue: text) else {
            throw StrideeStoreError.unknownOutcome(text ?? "NULL")
        }
        return result
    }
}

/// The database answered something this version of the store does not understand.
public enum StrideeStoreError: Error, CustomStringConvertible, Equatable {
    /// A `push_outcome` value outside the ones `StrideePushResult` knows.
    case unknownOutcome(String)

    public var description: String {
        switch self {
        case .unknownOutcome(let value): return "unknown push outcome \"\(value)\" from health_store"
        }
    }
}

/// Stores the Stridee formats (docs/stridee.md): one call, one transaction, in
/// `migrations/repeatable/35_stridee.sql`'s functions, on the pool the receiver stores healthd
/// batches with. Database trouble surfaces as the `PostgresError` `BatchStore` gives, so the
/// receiver answers it the same way (`503` with `Retry-After`, or `500`).
public struct StrideeStore: Sendable {
    let pool: PostgresPool

    /// A store writing through `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Stores one decoded `healthkit.v1` workout of `person`, replacing an earlier copy whole.
    ///
    /// `connect` is true for a relay push (`/v1/accounts/{id}/…`), which connects the person;
    /// a device push (false) needs an active connection. `bodySHA256` tells a resend of the
    /// same bytes from a changed copy.
    ///
    /// The workout is consumed: each decoded column is released as soon as it is encoded, so
    /// a 30 MiB body's columns and their encoding are never held whole at once (serve's memory stays bounded whatever clients send).
    /// With `holdingCredential` (the receiver) the credential is re-checked under the person
    /// lock by the same statement (`CredentialHold`), as `BatchStore` does.
    public func storeWorkout(_ workout: consuming StrideeWorkout, person: String, connect: Bool,
                             bodySHA256: [UInt8], holdingCredential: Bool = false) throws -> StrideePushResult {
        var parameters: [(any PostgresBindable)?] = [person, connect, holdingCredential, PostgresBinaryText(workout.headerJSON),
                                                     PostgresBytea(bodySHA256)]
        var streams: [String] = []
        // Taken out of the workout, so each stream's columns are released once encoded.
        var taken = workout.takeStreams()
        for k in taken.indices {
            let n = parameters.count
            streams.append("ROW($\(n + 1), $\(n + 2), $\(n + 3))::health_store.workout_stream")
            parameters.append(taken[k].name)
            parameters += Self.arrayParameters(&taken[k].stream)
        }
        let route = Self.routeRow(taking: &workout.route, after: &parameters)
        parameters.append(Date())
        // One statement, a transaction of its own (on Citus, one call on the person's worker).
        let outcome: String? = try pool.withConnection { connection in
            try connection.query("""
                SELECT health_store.store_workout($1, $2, $3, $4::jsonb, $5, ARRAY[\(streams.joined(separator: ", "))], \(route),
                                                  $\(parameters.count)::timestamptz)::text
                """, parameters).first?[0]
        }
        return try StrideePushResult.decode(outcome)
    }

    /// A `health_store.workout_route` row of `route` for a statement: its SQL, whose parameters
    /// are appended to `parameters`. Stridee bodies and the Health app's export both store routes
    /// through it.
    public static func routeRow(_ route: WorkoutRoute, after parameters: inout [(any PostgresBindable)?]) -> String {
        var route = route
        return routeRow(taking: &route, after: &parameters)
    }

    /// `routeRow`, releasing each of `route`'s columns once it is encoded (when the caller holds
    /// the only copy, its memory goes at once): a dense 30 MiB route is ~70 MB of columns.
    public static func routeRow(taking route: inout WorkoutRoute, after parameters: inout [(any PostgresBindable)?]) -> String {
        let n = parameters.count
        parameters += arrayParameters(&route)
        return "ROW(" + (n + 1...n + 8).map { "$\($0)" }.joined(separator: ", ") + ")::health_store.workout_route"
    }

    /// A stream as its two array parameters (`timestamptz[]`, `float8[]`), each column released
    /// once encoded.
    static func arrayParameters(_ stream: inout WorkoutStream) -> [(any PostgresBindable)?] {
        let times = PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: stream.times)
        stream.times = []
        let values = PostgresArrayParameter.float8(stream.values)
        stream.values = []
        return [times, values]
    }

    /// A route as its eight array parameters (`t`, `lat`, `lon`, then the optional columns), each
    /// column released once encoded.
    static func arrayParameters(_ route: inout WorkoutRoute) -> [(any PostgresBindable)?] {
        var out: [(any PostgresBindable)?] = [PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: route.times)]
        route.times = []
        for column in [\WorkoutRoute.latitudes, \.longitudes] {
            out.append(PostgresArrayParameter.float8(route[keyPath: column]))
            route[keyPath: column] = []
        }
        for column in [\WorkoutRoute.altitudes, \.speeds, \.courses, \.horizontalAccuracies, \.verticalAccuracies] {
            out.append(PostgresArrayParameter.float8(route[keyPath: column]))
            route[keyPath: column] = []
        }
        return out
    }

    /// Stores the items of one decoded `healthkit.wellness.v1` body of `person`, each replacing
    /// the item of the same kind and start; `connect` as for `storeWorkout`. Answers the outcome,
    /// how many items were stored (two of one identity in one body are one) and how many of
    /// those were new (the rest replaced an item held).
    public func storeWellness(_ items: [WellnessItem], person: String,
                              connect: Bool, holdingCredential: Bool = false) throws -> (result: StrideePushResult, stored: Int, inserted: Int) {
        let parameters: [(any PostgresBindable)?] = [
            person, connect, holdingCredential,
            PostgresArrayParameter.text(items.map { $0.kind.rawValue }),
            PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: items.map(\.start.microsecondsSinceEpoch)),
            PostgresArrayParameter.text(items.map(\.calendarDate)),
            PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: items.map { $0.end?.microsecondsSinceEpoch }),
            PostgresArrayParameter.int8(items.map { $0.tzOffsetSeconds.map(Int64.init) }),
            PostgresArrayParameter.bool(items.map(\.isFinal)),
            PostgresArrayParameter.text(items.map(\.id)),
            PostgresArrayParameter.json(items.map(\.json)), Date(),
        ]
        let row = try pool.withConnection { connection in
            try connection.query("""
                SELECT outcome::text, items, inserted
                FROM health_store.store_wellness($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::timestamptz)
                """, parameters).first
        }
        return (try StrideePushResult.decode(row?[0]), try row?.decode(1) ?? 0, try row?.decode(2) ?? 0)
    }

    /// Connects `person` (`active`) or disconnects them, and returns the connection; nil when
    /// disconnecting a person who was never connected (nothing is recorded then).
    public func setConnection(person: String, active: Bool, holdingCredential: Bool = false) throws -> StrideeConnection? {
        try pool.withConnection { connection in
            try Self.connection(connection.query(
                "SELECT c.status, \(Self.connectedAtText) FROM health_store.set_connection($1, $2, $3, $4::timestamptz) c",
                [person, active, holdingCredential, Date()]))
        }
    }

    /// The connection of `person`; nil when never connected.
    public func connection(person: String) throws -> StrideeConnection? {
        try pool.withConnection { connection in
            try Self.connection(connection.query(
                "SELECT c.status, \(Self.connectedAtText) FROM health_store.connections c WHERE c.person = $1", [person]))
        }
    }

    /// `connected_at` as ISO 8601 UTC with milliseconds, as `GET /stats` writes its times.
    static let connectedAtText = #"to_char(c.connected_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#

    static func connection(_ rows: PostgresRows) throws -> StrideeConnection? {
        guard let row = rows.first, let status = row[0], let connectedAt = row[1] else { return nil }
        return StrideeConnection(isActive: status == "active", connectedAt: connectedAt)
    }
}
