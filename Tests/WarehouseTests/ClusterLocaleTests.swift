import Foundation
import Postgres
import Testing
import TestSupport

/// Nothing may depend on the database's collation or locale, nor on the server's time zone:
/// the test clusters are made as a user's may be (an ICU collation, a zone far from UTC), and
/// the rules that handle text by letters are held to give the same answer under any collation.
@Suite("Collation and time zone")
struct ClusterLocaleTests {
    @Test("the tests' cluster has an ICU collation (unless HEALTH_WAREHOUSE_TEST_LOCALE=C) and a server time zone far from UTC")
    func clusterLikeAUsers() throws {
        let environment = ProcessInfo.processInfo.environment
        guard (environment[TestPostgres.externalURLVariable] ?? "").isEmpty, TestPostgres.citusURL == nil else { return }
        try TestPostgres.withDatabase { db in
            let row = try #require(try db.query("""
                SELECT datlocprovider::text, coalesce(daticulocale, ''), current_setting('TimeZone')
                FROM pg_database WHERE datname = current_database()
                """).first)
            switch TestCluster.locale {
            case .c: #expect(row[0] == "c")
            case .icu(let name):
                #expect(row[0] == "i")
                #expect(row[1] == name)
            }
            #expect(row[2] == TestCluster.serverTimeZone)
            #expect(row[2] != "UTC")
        }
    }

    @Test("a stream's healthkit.v1 name is the same under every collation (initcap would make heart_rate Heart_rate under ICU)",
          arguments: ["C", "en-US-x-icu", "tr-TR-x-icu", "de-DE-x-icu"])
    func bodyNames(collation: String) throws {
        try TestPostgres.withDatabase { db in
            let exists = try db.scalar("SELECT count(*) FROM pg_collation WHERE collname = $1", [collation], as: Int.self) ?? 0
            try #require(exists > 0, "PostgreSQL was built without ICU: collation \(collation) is missing")
            // The collation name is one of the fixed arguments above, never input.
            let rows = try db.query("""
                SELECT stream || '=' || health_store.body_name(stream COLLATE "\(collation)")
                FROM health_store.stream_kinds ORDER BY stream COLLATE "C"
                """).map { try $0.decode(0, as: String.self) }
            #expect(rows == ["cycling_cadence=cyclingCadence", "cycling_power=cyclingPower", "heart_rate=heartRate",
                             "running_power=runningPower"])
        }
    }
}
