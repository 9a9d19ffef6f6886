import Civil
import Foundation
import Postgres
import Testing
import TestSupport

@Suite("PostgreSQL connection")
struct PostgresConnectionTests {
    @Test("parameters of every type travel as $n and come back unchanged")
    func parametersRoundTrip() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let id = UUID()
            let body = "{\"source\": \"Zoë's \\\"Watch\\\", 1\"}" + String(repeating: "x", count: 100_000)
            let row = try #require(connection.query(
                "SELECT $1::text, $2::bigint, $3::float8, $4::bool, $5::uuid, $6::text IS NULL, length($7::text), $7::text = $1 || '' ",
                ["it's \"quoted\"", Int64(-42), 0.1, true, id, nil, PostgresBinaryText(body)]).first)
            #expect(try row.decode(0, as: String.self) == "it's \"quoted\"")
            #expect(try row.decode(1, as: Int64.self) == -42)
            #expect(try row.decode(2, as: Double.self) == 0.1)
            #expect(try row.decode(3, as: Bool.self) == true)
            #expect(try row.decode(4, as: UUID.self) == id)
            #expect(try row.decode(5, as: Bool.self) == true)
            #expect(try row.decode(6, as: Int.self) == body.count)
        }
    }

    @Test("a large body sent as binary text arrives byte for byte")
    func binaryTextBody() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let text = String(repeating: "ä€😀,\n\"", count: 50_000)
            let row = try #require(connection.query("SELECT md5($1), length($1)", [PostgresBinaryText(text)]).first)
            let expected = try #require(connection.query("SELECT md5($1::text)", [text]).first)
            #expect(row[0] == expected[0])
            #expect(try row.decode(1, as: Int.self) == text.count)
        }
    }

    @Test("timestamptz reads back as the same instant, whatever the session zone")
    func timestamps() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("SET TIME ZONE 'Asia/Kolkata'")
            let instant = Date(timeIntervalSince1970: 1_787_300_730.123)
            let row = try #require(connection.query("SELECT $1::timestamptz, '2026-08-21T10:25:30.000+02:00'::timestamptz", [instant]).first)
            let back = try row.decode(0, as: Date.self)
            #expect(abs(back.timeIntervalSince1970 - instant.timeIntervalSince1970) < 0.000_001)
            #expect(try row.decode(1, as: Date.self).timeIntervalSince1970 == 1_787_300_730)
        }
    }

    @Test("an instant beyond 64-bit microseconds is sent as infinity, a date before year 1 as BC: never a trap")
    func extremeTimestamps() throws {
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: 1e300)) == "infinity")
        #expect(PostgresTimestamp.format(Date(timeIntervalSince1970: -1e300)) == "-infinity")
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            // 15 March 44 BC, noon UTC: astronomical year -43.
            let ides = Date(timeIntervalSince1970: Double(CivilDate.daysFromCivil(year: -43, month: 3, day: 15)) * 86_400 + 43_200)
            let row = try #require(connection.query(
                "SELECT $1::timestamptz = '0044-03-15 12:00:00+00 BC'::timestamptz, $2::timestamptz = 'infinity'",
                [ides, Date(timeIntervalSince1970: 1e300)]).first)
            #expect(try row.decode(0, as: Bool.self) == true)
            #expect(try row.decode(1, as: Bool.self) == true)
        }
    }

    @Test("a unique violation carries SQLSTATE 23505 and keeps the value out of its description")
    func uniqueViolation() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("CREATE TABLE t (k text PRIMARY KEY)")
            try connection.query("INSERT INTO t VALUES ($1)", ["secret-value-1"])
            let error = #expect(throws: PostgresError.self) {
                try connection.query("INSERT INTO t VALUES ($1)", ["secret-value-1"])
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.kind == .server)
            #expect(error?.constraint == "t_pkey")
            #expect(error?.isTransient == false)
            #expect(error.map { !$0.description.contains("secret-value-1") } == true)
            #expect(error?.detail?.contains("secret-value-1") == true)
            // The connection stays usable after an error outside a transaction.
            #expect(try connection.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self) == 1)
        }
    }

    @Test("invalid input keeps the value out of the description")
    func invalidInputRedacted() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let error = #expect(throws: PostgresError.self) {
                try connection.query("SELECT $1::uuid", ["not-a-uuid-token-abc"])
            }
            #expect(error?.sqlState == "22P02")
            #expect(error.map { !$0.description.contains("token-abc") } == true)
        }
    }

    @Test("a failing statement inside withTransaction leaves nothing behind")
    func transactionRollsBack() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("CREATE TABLE t (k int PRIMARY KEY)")
            #expect(throws: PostgresError.self) {
                try connection.withTransaction { conn in
                    try conn.query("INSERT INTO t VALUES (1), (2)")
                    try conn.query("INSERT INTO t VALUES (2)")
                }
            }
            #expect(!connection.isInTransaction)
            #expect(try connection.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self) == 0)
        }
    }

    @Test("a Swift error thrown inside withTransaction rolls back too")
    func swiftErrorRollsBack() throws {
        struct Stop: Error {}
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("CREATE TABLE t (k int)")
            #expect(throws: Stop.self) {
                try connection.withTransaction { conn in
                    try conn.query("INSERT INTO t VALUES (1)")
                    throw Stop()
                }
            }
            try connection.withTransaction { try $0.query("INSERT INTO t VALUES (7)") }
            #expect(try connection.query("SELECT array_agg(k)::text FROM t").first?[0] == "{7}")
        }
    }

    @Test("a failed connection names no password or connection string, on one line")
    func connectionErrorIsSafe() throws {
        let error = #expect(throws: PostgresError.self) {
            _ = try PostgresConnection(connectionString: "postgresql://someone:hunter2-secret@127.0.0.1:1/nowhere?connect_timeout=2")
        }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.isTransient == true)
        #expect(error.map { !$0.description.contains("hunter2") && !$0.debugDescription.contains("hunter2") } == true)
        // libpq's two lines as one: printed on one line, no escaped newline shows.
        let text = error?.description ?? ""
        #expect(text.contains("Connection refused; Is the server running") && !text.contains("\n") && !text.contains("\t"), "\(text)")
    }
}
