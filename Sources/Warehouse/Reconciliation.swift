import Foundation
import HealthPayload
import Postgres

/// Reconciling a person with the Health app's export (docs/apple-export.md, "Deletions"): the export's records
/// staged while it is read, then every sample of the person that starts before its `ExportDate`
/// and no record matches marked deleted (migrations/repeatable/62_deletions.sql).
public enum Reconciliation {
    /// What a reconciliation marks (or would mark) of one type in one month of its days.
    public struct Marks: Sendable, Equatable {
        public var type: String
        /// The month, `YYYY-MM`.
        public var month: String
        public var samples: Int

        public init(type: String, month: String, samples: Int) {
            self.type = type
            self.month = month
            self.samples = samples
        }
    }

    /// A reconciliation refused: nothing was marked.
    public struct Refusal: Error, CustomStringConvertible, Equatable {
        /// Why, naming the type or the dates.
        public var message: String
        public var hint: String?

        public var description: String { message }
    }

    /// Why an export's `ExportDate` (ISO 8601, the offset written) cannot be reconciled with, or
    /// nil: a date after the day after tomorrow (UTC), the bound of every instant (`Plausibility`),
    /// would mark what is held before it and make every real export after it "older".
    public static func exportDateReason(_ exportDate: String, now: Int64 = Plausibility.nowMilliseconds()) -> String? {
        guard let instant = Timestamp(iso8601: exportDate) else { return "is not a date" }
        return Plausibility.instantReason(milliseconds: instant.millisecondsSinceEpoch, latest: Plausibility.latestMilliseconds(now: now))
    }

    /// SQLSTATEs `reconcile_export` refuses with: a type losing over 20 %, an older export.
    static let refusalStates: Set<String> = [SQLState.reconcileTooMuch, SQLState.reconcileOlderExport]

    /// Stages the records of one batch of the export read under `run`.
    public static func stage(_ samplesJSON: [UInt8], person: String, run: UUID, on connection: PostgresConnection) throws {
        try connection.query("SELECT health_store.stage_export_records($1, $2::uuid, $3::jsonb)",
                             [person, run, PostgresBinaryText(samplesJSON)])
    }

    /// Removes what reconciling `person` staged: of `run`, or of every run (nil) — what a
    /// stopped command left.
    public static func discard(person: String, run: UUID?, pool: PostgresPool) throws {
        try pool.withConnection { try $0.query("SELECT health_store.discard_export_records($1, $2::uuid)", [person, run]) }
    }

    /// Reconciles `person` with the export staged under `run`, whose `ExportDate` is
    /// `exportDate`: what is held since before `startedAt` and matched by no record is marked
    /// deleted when `apply`, or only counted. Answers the marks per type and month.
    ///
    /// - Throws: `Refusal` when the export is older than the last one reconciled, or a type would
    ///   lose more than 20 % of its samples held before the export's date (unless `force`).
    public static func reconcile(person: String, run: UUID, exportDate: String, path: String, startedAt: Date, force: Bool,
                                 apply: Bool, pool: PostgresPool) throws -> [Marks] {
        do {
            return try pool.withTransaction { connection in
                try connection.query("""
                    SELECT type, to_char(month, 'YYYY-MM'), deleted
                    FROM health_store.reconcile_export($1, $2::uuid, $3::timestamptz, $4, $5::timestamptz, $6, $7, $8::timestamptz)
                    """, [person, run, exportDate, path, startedAt, force, apply, Date()]).map {
                    Marks(type: try $0.decode(0), month: try $0.decode(1), samples: try $0.decode(2))
                }
            }
        } catch let error as PostgresError where error.sqlState.map(refusalStates.contains) == true {
            throw Refusal(message: error.message, hint: error.hint)
        }
    }
}
