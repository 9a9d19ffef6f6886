import Foundation
import Postgres
import Testing
import TestSupport

@Suite("PostgreSQL binary array parameters")
struct PostgresArrayParameterTests {
    @Test("float8[] arrives with every value's exact bits, in order")
    func float8() throws {
        let values: [Double] = [0, -0.0, 1.5, -0.1, 47.37691234567891, 8.5417, 1e15, -1e-300, .leastNonzeroMagnitude,
                                .greatestFiniteMagnitude, .infinity, -.infinity]
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let row = try #require(connection.query(
                "SELECT cardinality($1::float8[]), array_lower($1, 1), array_to_string($1, ' ')", [PostgresArrayParameter.float8(values)]).first)
            #expect(try row.decode(0, as: Int.self) == values.count)
            #expect(try row.decode(1, as: Int.self) == 1)
            let back = try #require(row[2]).split(separator: " ").map { Double(postgresText: String($0)) }
            #expect(back.map { $0?.bitPattern } == values.map(\.bitPattern))
            // NaN compares equal to itself in PostgreSQL's float8.
            let nan = try #require(connection.query("SELECT ($1::float8[])[1] = 'NaN'::float8", [PostgresArrayParameter.float8([Double.nan])]).first)
            #expect(try nan.decode(0, as: Bool.self))
        }
    }

    @Test("float8[] with nil elements has SQL NULLs exactly there")
    func float8Nulls() throws {
        let values: [Double?] = [nil, 408.2, nil, nil, -3.25, nil]
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let rows = try connection.query("SELECT i, v FROM unnest($1::float8[]) WITH ORDINALITY AS u(v, i) ORDER BY i",
                                            [PostgresArrayParameter.float8(values)])
            #expect(rows.count == values.count)
            #expect(try rows.map { try $0.decodeIfPresent(1, as: Double.self) } == values)
            // Optional values without a nil make an array without NULLs.
            let plain = try #require(connection.query("SELECT array_position($1::float8[], NULL) IS NULL, $1::text",
                                                      [PostgresArrayParameter.float8([1.0, 2.0] as [Double?])]).first)
            #expect(try plain.decode(0, as: Bool.self))
            #expect(plain[1] == "{1,2}")
        }
    }

    @Test("empty arrays of every type arrive as empty arrays, not NULL")
    func empty() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let parameters: [PostgresArrayParameter] = [
                .float8([Double]()), .float8([Double?]()), .int8([]), .timestamptz(microsecondsSinceEpoch: []),
            ]
            let rows = try connection.query(
                "SELECT $1::float8[]::text, cardinality($2::float8[]), $3::int8[] = '{}'::int8[], $4::timestamptz[] IS NOT NULL AND cardinality($4) = 0",
                parameters)
            let row = try #require(rows.first)
            #expect(row[0] == "{}")
            #expect(try row.decode(1, as: Int.self) == 0)
            #expect(try row.decode(2, as: Bool.self))
            #expect(try row.decode(3, as: Bool.self))
        }
    }

    @Test("int8[] keeps negative, zero and extreme values")
    func int8() throws {
        let values: [Int64] = [0, -1, 42, .max, .min, 1_790_834_531_000_000]
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let row = try #require(connection.query("SELECT $1::int8[]::text", [PostgresArrayParameter.int8(values)]).first)
            #expect(row[0] == "{" + values.map(String.init).joined(separator: ",") + "}")
        }
    }

    @Test("timestamptz[] from Unix microseconds is the same instants, before and after 2000-01-01 and 1970")
    func timestamptz() throws {
        let values: [Int64] = [
            946_684_800_000_000,  // 2000-01-01 00:00:00
            946_684_799_999_999,  // one microsecond before
            946_684_800_000_001,  // one after
            0,  // 1970-01-01
            -1,
            1_790_834_531_250_000,  // 2026-10-01 06:02:11.25
            -62_135_596_800_000_000,  // 0001-01-01
            253_402_300_799_999_999,  // 9999-12-31 23:59:59.999999
        ]
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("SET TIME ZONE 'Asia/Kolkata'")
            let rows = try connection.query("""
                SELECT (extract(epoch FROM t) * 1000000)::int8, to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')
                FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, i) ORDER BY i
                """, [PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: values)])
            #expect(try rows.map { try $0.decode(0, as: Int64.self) } == values)
            #expect(rows.map { $0[1] } == [
                "2000-01-01 00:00:00.000000", "1999-12-31 23:59:59.999999", "2000-01-01 00:00:00.000001",
                "1970-01-01 00:00:00.000000", "1969-12-31 23:59:59.999999", "2026-10-01 06:02:11.250000",
                "0001-01-01 00:00:00.000000", "9999-12-31 23:59:59.999999",
            ])
        }
    }

    @Test("columns bound side by side unnest into rows, as a workout's route is stored")
    func columnsTogether() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            try connection.query("CREATE TABLE p (seq int, t timestamptz, lat float8, altitude float8)")
            let times: [Int64] = (0..<20_000).map { 1_790_834_400_000_000 + Int64($0) * 1_000_000 }
            let lats = (0..<20_000).map { 47 + Double($0) / 1e5 }
            let altitudes: [Double?] = (0..<20_000).map { $0 % 3 == 0 ? nil : Double($0) }
            let inserted = try connection.query("""
                INSERT INTO p SELECT i, t, lat, alt FROM unnest($1::timestamptz[], $2::float8[], $3::float8[]) WITH ORDINALITY AS u(t, lat, alt, i)
                """, [PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: times), PostgresArrayParameter.float8(lats),
                      PostgresArrayParameter.float8(altitudes)])
            #expect(inserted.affectedRows == 20_000)
            let row = try #require(connection.query("""
                SELECT count(*), count(altitude), min(t) = to_timestamp(1790834400), max(lat), sum(altitude)
                FROM p
                """).first)
            #expect(try row.decode(0, as: Int.self) == 20_000)
            #expect(try row.decode(1, as: Int.self) == altitudes.compactMap { $0 }.count)
            #expect(try row.decode(2, as: Bool.self))
            #expect(try row.decode(3, as: Double.self) == lats.last)
            #expect(try row.decode(4, as: Double.self) == altitudes.compactMap { $0 }.reduce(0, +))
        }
    }

    @Test("text[], json[] and bool[] arrive element by element, NULLs and empty strings kept apart, json as its exact text")
    func variableLength() throws {
        try TestPostgres.withDatabase { db in
            let connection = try db.connect()
            let text = try #require(connection.query("""
                SELECT cardinality($1::text[]), $1[1], $1[2] IS NULL, $1[3] = '', $1[4]
                """, [PostgresArrayParameter.text(["Zoë \"x\"", nil, "", "a,b{c}"])]).first)
            #expect(text[0] == "4" && text[1] == "Zoë \"x\"" && text[2] == "t" && text[3] == "t" && text[4] == "a,b{c}")
            let json = try #require(connection.query("SELECT $1[1]::text, ($1[2]->>'k'), cardinality($1)",
                                                     [PostgresArrayParameter.json([#"{"b": 1,  "a":2}"#, #"{"k":"v"}"#])]).first)
            #expect(json[0] == #"{"b": 1,  "a":2}"#, "json keeps the text as sent")
            #expect(json[1] == "v" && json[2] == "2")
            #expect(throws: PostgresError.self, "the server checks each element is JSON") {
                try connection.query("SELECT $1", [PostgresArrayParameter.json(["{not json"])])
            }
            #expect(try connection.query("SELECT array_to_string($1, ',')", [PostgresArrayParameter.bool([true, false, true])]).first?[0]
                    == "t,f,t")
            let stamps = try #require(connection.query("SELECT $1[1] = 'epoch'::timestamptz, $1[2] IS NULL, cardinality($1)",
                                                       [PostgresArrayParameter.timestamptz(microsecondsSinceEpoch: [0, nil] as [Int64?])]).first)
            #expect(stamps[0] == "t" && stamps[1] == "t" && stamps[2] == "2")
            #expect(try connection.query("SELECT cardinality($1)", [PostgresArrayParameter.text([])]).first?[0] == "0")
        }
    }
}
