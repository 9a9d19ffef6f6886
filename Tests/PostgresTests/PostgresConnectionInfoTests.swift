import Foundation
@testable import Postgres
import Testing
import TestSupport

@Suite("Connection strings, read by libpq")
struct PostgresConnectionInfoTests {
    @Test("keyword strings and URIs are read by libpq; a later keyword overrides an earlier one")
    func parsesBothForms() throws {
        let keywords = try PostgresConnectionInfo(parsing: "host=/run/pg port=5433 dbname=first user=me dbname=second")
        #expect(keywords["host"] == "/run/pg")
        #expect(keywords["port"] == "5433")
        #expect(keywords["dbname"] == "second")
        #expect(keywords["user"] == "me")

        let uri = try PostgresConnectionInfo(parsing: "postgresql://someone:p%40ss@db.example:6543/health?sslmode=disable&application_name=x")
        #expect(uri["user"] == "someone")
        #expect(uri["password"] == "p@ss")
        #expect(uri["host"] == "db.example")
        #expect(uri["port"] == "6543")
        #expect(uri["dbname"] == "health")
        #expect(uri["sslmode"] == "disable")

        // Changing a keyword works the same whatever the form was.
        #expect(uri.setting("dbname", to: "other")["dbname"] == "other")
        #expect(keywords.setting("dbname", to: "third").parameters.filter { $0.keyword == "dbname" }.count == 1)
        #expect(try PostgresConnectionInfo(parsing: "").parameters.isEmpty)
    }

    @Test("rendered back to a string, values with spaces, quotes and backslashes survive libpq's reading")
    func rendersQuoted() throws {
        let info = PostgresConnectionInfo([("host", "/tmp/a folder/with 'quotes' and \\ backslash"), ("port", "5432"),
                                           ("user", "postgres"), ("dbname", "health"), ("password", "s3cret word")])
        let again = try PostgresConnectionInfo(parsing: info.connectionString)
        // libpq lists what it read in its own keyword order.
        #expect(Dictionary(uniqueKeysWithValues: again.parameters.map { ($0.keyword, $0.value) })
                == Dictionary(uniqueKeysWithValues: info.parameters.map { ($0.keyword, $0.value) }))
        // Plain values stay bare, as people write them.
        #expect(PostgresConnectionInfo([("host", "/tmp/x"), ("port", "5432")]).connectionString == "host=/tmp/x port=5432")
        #expect(!info.description.contains("s3cret"))
        #expect(info.description.contains("password=***"))
    }

    @Test("a malformed connection string's error holds no part of it, from parsing, connecting or a pool",
          arguments: ["postgresql://someone:hunter2%zz@127.0.0.1:1/nowhere",
                      "host=127.0.0.1 password='hunter2 unterminated",
                      "host=127.0.0.1 hunter2secret"])
    func malformedIsRedacted(connectionString: String) throws {
        let parsing = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(parsing: connectionString) }
        #expect(parsing?.kind == .invalidConnectionString)
        #expect(parsing?.isTransient == false)
        let connecting = #expect(throws: PostgresError.self) { try PostgresConnection(connectionString: connectionString) }
        let pool = PostgresPool(connectionString: connectionString)
        let pooled = #expect(throws: PostgresError.self) { try pool.withConnection { _ in } }
        for error in [parsing, connecting, pooled] {
            let text = error.map { "\($0) \($0.debugDescription)" } ?? ""
            #expect(!text.contains("hunter2"), "\(text)")
            #expect(!text.contains("%zz"), "\(text)")
            #expect(text.contains("connection string is not valid"), "\(text)")
        }
    }

    @Test("libpq's own reason survives with only keywords and = left in quotes")
    func reasonKept() throws {
        let percent = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(parsing: "postgresql://u:pw%zz@h/d") }
        #expect(percent?.message == #"invalid percent-encoded token: "…""#)
        let unknown = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(parsing: "host=x colour=blue") }
        #expect(unknown?.message == #"invalid connection option "…""#)
        let missing = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(parsing: "host") }
        #expect(missing?.message == #"missing "=" after "host" in connection info string"#)
        let stray = #expect(throws: PostgresError.self) { try PostgresConnectionInfo(parsing: "host=x secretword") }
        #expect(stray?.message == #"missing "=" after "…" in connection info string"#)
    }

    @Test("a parameter size beyond libpq's 32-bit lengths is an error, never a trap")
    func oversizedParameter() throws {
        let fine = try PostgresConnection.libpqSizes([0, 10, Int(Int32.max)])
        #expect(fine.count == 3)
        #expect(fine.lengths == [0, 10, Int32.max])
        let error = #expect(throws: PostgresError.self) { try PostgresConnection.libpqSizes([5, Int(Int32.max) + 1]) }
        #expect(error?.kind == .parameterTooLarge)
        #expect(error?.message == "parameter $2 is 2147483648 bytes; libpq sends at most 2147483647")
        #expect(error?.isTransient == false)
    }
}
