/// Every SQLSTATE the code tells apart, by name, in one place: PostgreSQL's own (its manual,
/// Appendix A) and the codes the warehouse's SQL raises itself (`RAISE … USING ERRCODE`,
/// migrations/repeatable/).
public enum SQLState {
    // PostgreSQL's
    /// `invalid_parameter_value`: e.g. an unknown time zone (health.set_time_zone).
    public static let invalidParameterValue = "22023"
    /// `read_only_sql_transaction`: a write in a read-only transaction (a standby, a read-only database).
    public static let readOnlyTransaction = "25006"
    /// `in_failed_sql_transaction`: a statement after an error, before ROLLBACK.
    public static let inFailedTransaction = "25P02"
    /// `deadlock_detected`.
    public static let deadlockDetected = "40P01"
    /// `lock_not_available`: `lock_timeout` passed.
    public static let lockNotAvailable = "55P03"
    /// `query_canceled`: `statement_timeout` passed (or a cancel).
    public static let queryCanceled = "57014"
    /// `no_data_found`: raised by health_store.delete_person for an unknown person.
    public static let noDataFound = "P0002"
    /// `internal_error`: e.g. "tuple concurrently updated", when two sessions change one shared
    /// catalog row at once (Citus propagating a role's grants from two databases' migrations).
    public static let internalError = "XX000"

    // The warehouse's own
    /// The receiver's person holds no live token any more (health_store.hold_person): answered 401.
    public static let credentialGone = "HW401"
    /// A reconciliation would mark more than 20 % of a type deleted (health_store.reconcile_export).
    public static let reconcileTooMuch = "HWR01"
    /// A reconciliation's export is older than the last one reconciled (health_store.reconcile_export).
    public static let reconcileOlderExport = "HWR02"

    /// The classes that mean the server or the connection is in trouble, not the statement:
    /// connection exceptions (08), transaction rollbacks (40), insufficient resources (53),
    /// operator intervention (57), system errors (58).
    static let troubleClasses: Set<String> = ["08", "40", "53", "57", "58"]
}
