import Postgres
import Testing
@testable import Warehouse

/// `migrate` retries a run that lost a race on a shared catalog row (docs/scaling.md, "Testing
/// on Citus"): only that internal error, never another, is taken for one.
@Suite("Migrations: a run that lost a catalog race")
struct MigratorRaceTests {
    @Test("\"tuple concurrently updated\" (XX000) is retried; another internal error, or the text under another SQLSTATE, is not")
    func catalogRace() {
        func error(_ state: String?, _ message: String) -> PostgresError {
            PostgresError(kind: .server, sqlState: state, message: message)
        }
        #expect(Migrator.catalogRace(error("XX000", "tuple concurrently updated")))
        #expect(!Migrator.catalogRace(error("XX000", "could not open relation with OID 16384")))
        #expect(!Migrator.catalogRace(error("42501", "tuple concurrently updated")))
        #expect(!Migrator.catalogRace(error(nil, "tuple concurrently updated")))
    }
}
