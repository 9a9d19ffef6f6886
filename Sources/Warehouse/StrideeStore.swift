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

/// What storing a Stridee push did.
public enum StrideePushResult: Sendable, Equatable {
    /// Stored (a workout new or changed, or a wellness batch of this many items).
    case stored
    /// The same workout body again: nothing changed but when it was last received.
    case unchanged
    /// A device push while the person is not connected: nothing stored (`409`).
    case notConnected
}

/// Stores the Stridee formats (CONTRACT.md §4): one call, one transaction, in
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
    /// a 30 MiB body's columns and their encoding are never held whole at once (issue 21.3).
    public func storeWorkout(_ workout: consuming StrideeWorkout, person: String, connect: Bool,
                             bodySHA256: [UInt8]) throws -> StrideePushResult {
        var parameters: [(any PostgresBindable)?] = [person, connect, PostgresBinaryText(workout.headerJSON), PostgresBytea(bodySHA256)]
        for keyPath in [\StrideeWorkout.heartRate, \.runningPower, \.cyclingPower, \.cyclingCadence] {
            parameters += Self.arrayParameters(&workout[keyPath: keyPath])
        }
        parameters += Self.arrayParameters(&workout.route)
        let outcome: String = try pool.withTransaction { connection in
            try connection.query("""
                SELECT health_store.store_workout($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                                                  $13, $14, $15, $16, $17, $18, $19, $20)
                """, parameters).first!.decode(0)
        }
        switch outcome {
        case "stored": return .stored
        case "unchanged": return .unchanged
        default: return .notConnected
        }
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
    /// the item of the same kind and start; `connect` as for `storeWorkout`.
    public func storeWellness(_ items: [WellnessItem], person: String, connect: Bool) throws -> StrideePushResult {
        let parameters: [(any PostgresBindable)?] = [
            person, connect,
            PostgresArrayParameter.text(items.map { $0.kind.rawValue }),
            PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: items.map(\.start.microsecondsSinceEpoch)),
            PostgresArrayParameter.text(items.map(\.calendarDate)),
            PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: items.map { $0.end?.microsecondsSinceEpoch }),
            PostgresArrayParameter.int8(items.map { $0.tzOffsetSeconds.map(Int64.init) }),
            PostgresArrayParameter.bool(items.map(\.isFinal)),
            PostgresArrayParameter.text(items.map(\.id)),
            PostgresArrayParameter.json(items.map(\.json)),
        ]
        let stored: Int = try pool.withTransaction { connection in
            try connection.query("SELECT health_store.store_wellness($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", parameters)
                .first!.decode(0)
        }
        return stored < 0 ? .notConnected : .stored
    }

    /// Connects `person` (`active`) or disconnects them, and returns the connection; nil when
    /// disconnecting a person who was never connected (nothing is recorded then).
    public func setConnection(person: String, active: Bool) throws -> StrideeConnection? {
        try pool.withTransaction { connection in
            // The person lock orders this against the person's pushes, which check the
            // connection under it.
            try connection.query("SELECT health_store.lock_person($1)", [person])
            return try Self.connection(connection.query(
                "SELECT c.status, \(Self.connectedAtText) FROM health_store.set_connection($1, $2) c", [person, active]))
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
