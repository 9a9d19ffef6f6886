import Foundation
import HealthPayload
import Postgres

/// Stores what an import of the Health app's export brings besides its samples
/// (docs/apple-export.md): its workouts' routes and its activity summaries, each with one call of
/// `migrations/repeatable/33_apple_export.sql`, inside the caller's transaction. The samples
/// themselves go through `BatchStore`, as healthd-shaped batches with origin `export`.
public enum ExportStore {
    /// Stores an imported workout's route under it (or under the pushed workout it matched,
    /// when that has none of its own); true when it was stored. `start` and `end` are the
    /// workout's span in the reference's timestamp shape; `points` are in time order.
    public static func storeRoute(workout: String, start: String, end: String, points: WorkoutRoute, person: String,
                                  on connection: PostgresConnection) throws -> Bool {
        var parameters: [(any PostgresBindable)?] = [person, workout, start, end]
        let route = StrideeStore.routeRow(points, after: &parameters)
        let row = try connection.query("SELECT health_store.store_export_route($1, $2::uuid, $3::timestamptz, $4::timestamptz, \(route))",
                                       parameters)
        return try row.first?.decode(0, as: Bool.self) == true
    }

    /// Upserts activity summaries, one per day, received now by this process's clock: `json` is
    /// `[{day, active_energy_kcal, …, summary}]`.
    public static func storeActivitySummaries(_ json: [UInt8], person: String, on connection: PostgresConnection) throws {
        try connection.query("SELECT health_store.store_activity_summaries($1, $2::jsonb, $3::timestamptz)",
                             [person, PostgresBinaryText(json), Date()])
    }

    /// The highest batch sequence stored under `exportId` for `person` (0 when none): an
    /// import resumed goes on numbering after it.
    public static func lastSequence(exportId: String, person: String, on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT coalesce(max(batch_sequence), 0) FROM health_store.deliveries WHERE person = $1 AND export_id = $2::uuid",
                             [person, exportId]).first!.decode(0)
    }
}

/// A type of the warehouse's catalog (`health_store.catalog`): its group, kind, unit and rule.
public struct CatalogType: Sendable, Equatable {
    public var type: String
    public var group: String
    public var kind: String
    /// The unit healthd sends the type's values in; nil for sleep and workouts.
    public var unit: String?
    /// `total`, `sleep`, `reading`, `latest` or `workout`.
    public var rule: String

    /// Every type of the catalog.
    public static func all(on connection: PostgresConnection) throws -> [CatalogType] {
        try connection.query("SELECT type, grp, kind, unit, rule FROM health_store.catalog").map { row in
            CatalogType(type: try row.decode(0), group: try row.decode(1), kind: try row.decode(2),
                        unit: try row.decodeIfPresent(3), rule: try row.decode(4))
        }
    }
}
