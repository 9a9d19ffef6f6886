import Foundation
import Postgres

/// One person as `person list` shows them (`health_store.people()`).
public struct PersonListing: Sendable, Equatable {
    public var person: String
    /// Live tokens (not revoked, not expired).
    public var tokens: Int
    /// Samples held.
    public var samples: Int
    /// The first and last local day with a sample; nil when none.
    public var firstDay: String?
    public var lastDay: String?
    /// When they last sent anything (a batch or a Stridee push), ISO 8601 UTC; nil when never.
    public var lastReceivedAt: String?
}

/// The person named is not held (no row, no token).
public struct UnknownPersonError: Error, CustomStringConvertible, Equatable {
    public var person: String

    public init(person: String) {
        self.person = person
    }

    public var description: String { "unknown person \"\(person.prefix(80))\": `health-warehouse person list` shows who is held" }
}

/// A person's data as a whole (docs/people.md): who is held, and deleting one person's rows
/// from every table in one transaction. The list of tables is `health_store.person_tables`
/// (`migrations/repeatable/64_people.sql`), the one home `delete` and the tests read.
public struct PersonStore: Sendable {
    let pool: PostgresPool

    /// A store over `pool`.
    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Every person held, in byte order of their names.
    public func list() throws -> [PersonListing] {
        try pool.withConnection { connection in
            try connection.query("""
                SELECT person, tokens, samples, first_day::text, last_day::text,
                       to_char(last_received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                FROM health_store.people()
                """).map { row in
                PersonListing(person: try row.decode(0), tokens: try row.decode(1), samples: try row.decode(2),
                              firstDay: row[3], lastDay: row[4], lastReceivedAt: row[5])
            }
        }
    }

    /// True when anything of `person` is held.
    public func exists(_ person: String) throws -> Bool {
        try pool.withConnection { try $0.query("SELECT health_store.person_exists($1)", [person]).first!.decode(0) }
    }

    /// Rows of `person` per table (`health_store.person_tables`), without deleting: what
    /// `person delete` asks about before it deletes.
    public func counts(_ person: String) throws -> [(table: String, rows: Int)] {
        try pool.withConnection { connection in
            try connection.query("SELECT table_name, held FROM health_store.person_rows($1)", [person])
                .map { (try $0.decode(0), try $0.decode(1)) }
        }
    }

    /// Deletes every row of `person` in one transaction and returns the rows removed per table;
    /// throws `UnknownPersonError` when nothing of them is held. A batch of theirs being stored
    /// lands before; one arriving after finds its token gone (`health_store.hold_person`).
    public func delete(_ person: String) throws -> [(table: String, rows: Int)] {
        do {
            return try pool.withTransaction { connection in
                try connection.query("SELECT table_name, deleted FROM health_store.delete_person($1)", [person])
                    .map { (try $0.decode(0), try $0.decode(1)) }
            }
        } catch let error as PostgresError where error.sqlState == SQLState.noDataFound {
            throw UnknownPersonError(person: person)
        }
    }

    /// `person`'s settings as JSON text (`health_store.person_settings`).
    public func settingsJSON(_ person: String, on connection: PostgresConnection) throws -> String {
        try connection.query("SELECT health_store.person_settings($1)::text", [person]).first!.decode(0)
    }

    /// Writes back settings as `settingsJSON` gave them.
    public func restoreSettings(_ json: [UInt8], person: String) throws {
        try pool.withTransaction { connection in
            try connection.query("SELECT health_store.restore_settings($1, $2::jsonb)", [person, PostgresBinaryText(json)])
        }
    }
}

/// The receiver's credential re-checked under the person lock by the statement that stores
/// (`health_store.hold_person`, called by `store_batch` for origin http and by the Stridee writers
/// with `p_credential`): a person deleted since the request's head was read (their tokens with
/// them) gets `revoked`, and nothing is stored.
public enum CredentialHold {
    /// SQLSTATE `health_store.hold_person` raises when the person holds no live token.
    public static let revokedSQLState = SQLState.credentialGone

    /// True for the error a store throws when the credential is gone.
    public static func isRevoked(_ error: any Error) -> Bool {
        (error as? PostgresError)?.sqlState == revokedSQLState
    }
}
