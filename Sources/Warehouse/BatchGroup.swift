import Dispatch
import Postgres

/// Several batches of one person stored in one transaction, for a writer whose input is its own
/// durable source (backlog files, the Health app's export) and that can redo what a crash loses.
///
/// - The transaction commits asynchronously (`synchronous_commit = off`): a server crash can
///   lose its last commits, but the ledger row of a file commits with the file's last batch,
///   so the ledger forgets exactly what was lost and the next run stores it again.
/// - The rollups are refreshed once, just before commit, for every key the batches touched
///   (each batch is stored with `deferRollups`, `health_store.flush_rollups` does them:
///   migrations/repeatable/25_rollup_upkeep.sql): the views are right whenever a transaction
///   commits, as with one batch per transaction.
/// - Each step runs in a savepoint of its own, so a batch that fails is undone alone and the
///   others of the group still commit.
///
/// Not for the receiver: an HTTP answer must wait for a durable commit of its own batch.
public final class BatchGroup {
    /// When a group is due to commit: at most this many samples…
    public static let maxSamples = 20_000
    /// …or this long after it began, so a slow reader never holds a person's lock for long.
    public static let maxNanoseconds: UInt64 = 1_000_000_000

    let connection: PostgresConnection
    let person: String
    let started = DispatchTime.now().uptimeNanoseconds
    /// Samples stored in the group so far (as the steps reported them).
    public private(set) var samples = 0

    /// Opens a group's transaction for `person`'s batches on `connection`.
    public init(person: String, on connection: PostgresConnection) throws {
        self.connection = connection
        self.person = person
        try connection.query("BEGIN")
        do {
            try connection.query("SET LOCAL synchronous_commit = off")
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    /// Runs one step (a batch, a ledger row) in a savepoint; `samples` of it count toward the
    /// group's size. An error undoes the step alone and is rethrown.
    @discardableResult
    public func step<T>(samples: Int = 0, _ body: (PostgresConnection) throws -> T) throws -> T {
        let value = try connection.withSavepoint(body)
        self.samples += samples
        return value
    }

    /// True once the group is big or old enough to commit.
    public var isDue: Bool {
        samples >= Self.maxSamples || DispatchTime.now().uptimeNanoseconds - started >= Self.maxNanoseconds
    }

    /// Commits the group: the deferred rollup refresh runs first, in the same transaction.
    public func commit() throws {
        try connection.query("SELECT health_store.lock_person($1), health_store.flush_rollups($1)", [person])
        try connection.commit()
    }

    /// Rolls the group back, ignoring errors (the connection may be gone).
    public func rollback() {
        connection.rollbackQuietly()
    }
}

/// The groups of one writer, one after the other, each on a connection checked out of `pool`
/// for as long as it is open. The connection goes back at each commit or rollback, so one
/// that died meanwhile (a server restart) is never used again.
public final class PooledBatchGroups {
    let pool: PostgresPool
    let person: String
    private var open: (group: BatchGroup, connection: PostgresConnection)?

    /// Groups of `person`'s batches on connections of `pool`, one at a time.
    public init(pool: PostgresPool, person: String) {
        self.pool = pool
        self.person = person
    }

    /// Runs one step in the open group, opening one first if none is.
    @discardableResult
    public func step<T>(samples: Int = 0, _ body: (PostgresConnection) throws -> T) throws -> T {
        try current().step(samples: samples, body)
    }

    /// Commits the open group when it is due, or whenever one is open with `force`; true when
    /// a group was committed.
    @discardableResult
    public func commit(force: Bool) throws -> Bool {
        guard let group = open, force || group.group.isDue else { return false }
        open = nil
        defer { pool.checkIn(group.connection) }
        try group.group.commit()
        return true
    }

    /// Drops the open group, if any: everything stored in it goes together.
    public func rollback() {
        guard let group = open else { return }
        open = nil
        group.group.rollback()
        pool.checkIn(group.connection)
    }

    private func current() throws -> BatchGroup {
        if let group = open { return group.group }
        let connection = try pool.checkOut()
        do {
            let opened = try BatchGroup(person: person, on: connection)
            open = (opened, connection)
            return opened
        } catch {
            pool.checkIn(connection)
            throw error
        }
    }
}
