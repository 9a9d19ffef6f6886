import Foundation
import Postgres
import Testing
import TestSupport

@Suite("PostgreSQL rows one at a time")
struct PostgresRowStreamTests {
    @Test("forEachRow gives every row in order with its parameters; a throwing handler or a failing statement leaves the connection usable")
    func streamsRows() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            defer { connection.close() }
            var seen: [Int] = []
            try connection.forEachRow("SELECT g, repeat('x', $2::int) FROM generate_series(1, $1::int) g ORDER BY g", [5000, 1000]) { row in
                seen.append(try row.decode(0))
                #expect(row[1]?.count == 1000)
            }
            #expect(seen == Array(1...5000))

            struct Stop: Error {}
            var calls = 0
            #expect(throws: Stop.self) {
                try connection.forEachRow("SELECT g FROM generate_series(1, 1000) g") { _ in
                    calls += 1
                    if calls == 3 { throw Stop() }
                }
            }
            #expect(calls == 3)
            #expect(try connection.query("SELECT 41 + 1").first?.decode(0, as: Int.self) == 42)

            let failing = #expect(throws: PostgresError.self) {
                try connection.forEachRow("SELECT 1 / (10 - g) FROM generate_series(1, 20) g") { _ in }
            }
            #expect(failing?.sqlState == "22012")
            #expect(try connection.query("SELECT 'still here'").first?[0] == "still here")
        }
    }
}
