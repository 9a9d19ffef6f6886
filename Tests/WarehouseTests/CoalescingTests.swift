import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// Apple Health replacing fine samples with one combined sample (docs/views.md,
/// "Coalescing"): the combined sample counts in no total when its parts add up to it,
/// whichever arrived first, with totals computed by hand.
@Suite("Coalesced samples")
struct CoalescingTests {
    typealias S = Sample

    static let phone = "com.apple.health.iphone"
    static let watch = "com.apple.health.watch"

    /// A step sample of the phone on 2026-03-10 (+01:00) between two clock times.
    static func steps(_ n: Int, _ from: String, _ to: String, _ value: Double, source: String = phone,
                      day: String = "2026-03-10", type: String = HK.steps) -> String {
        S.quantity(S.U(n), type, source: source, start: "\(day)T\(from):00.000+01:00", end: "\(day)T\(to):00.000+01:00", value: value)
    }

    static func total(_ c: PostgresConnection, day: String = "2026-03-10", type: String = HK.steps) throws -> String? {
        try c.query("SELECT value::text FROM health.daily_totals WHERE person = 'p' AND day = $1 AND type = $2", [day, type]).first?[0]
    }

    static func coalesced(_ c: PostgresConnection) throws -> [[String?]] {
        try c.table("""
            SELECT uuid::text, day::text, source, value::text, parts::text, parts_total::text, counted::text
            FROM health.coalesced_samples WHERE person = 'p' ORDER BY start_at, uuid
            """).rows
    }

    static func expectConsistent(_ c: PostgresConnection) throws {
        let drift = try c.table("SELECT level, type, source FROM health_store.verify_rollups('p')")
        #expect(drift.count == 0, "verify_rollups: \(drift.rows)")
    }

    @Test("parts then the combined sample: the day counts 30 + 70 = 100 steps, not 200; the combined sample is listed, not counted")
    func partsThenCombined() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 30), Self.steps(2, "10:05", "10:10", 70)])
            #expect(try Self.total(c) == "100")
            try store.batch([Self.steps(3, "10:00", "10:10", 100)])
            #expect(try Self.total(c) == "100")
            #expect(try Self.coalesced(c) == [[S.U(3).lowercased(), "2026-03-10", Self.phone, "100", "2", "100", "false"]])
            #expect(try c.query("SELECT samples::text FROM health.daily_source_totals WHERE person = 'p'").first?[0] == "2",
                    "a coalescing counts in no sample count")
            #expect(try c.query("SELECT steps::text FROM health.daily_summary WHERE person = 'p'").first?[0] == "100")
            try Self.expectConsistent(c)
        }
    }

    @Test("the combined sample first, then its parts one batch at a time: 100, then 130 while one part is in, then 100")
    func combinedThenParts() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(3, "10:00", "10:10", 100)])
            #expect(try Self.total(c) == "100")
            try store.batch([Self.steps(1, "10:00", "10:05", 30)])
            #expect(try Self.total(c) == "130", "one sample inside is no coalescing")
            #expect(try Self.coalesced(c).isEmpty)
            try Self.expectConsistent(c)
            try store.batch([Self.steps(2, "10:05", "10:10", 70)])
            #expect(try Self.total(c) == "100")
            #expect(try Self.coalesced(c).map { $0[6] } == ["false"])
            try Self.expectConsistent(c)
        }
    }

    @Test("parts and their combined sample in one batch after everything held: 20 + 100, not 220")
    func combinedWithPartsAfterFrontier() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "09:00", "09:05", 20)])
            // All of it starts after the latest end held: only its own samples are compared.
            try store.batch([Self.steps(2, "10:00", "10:05", 30), Self.steps(3, "10:05", "10:10", 70),
                             Self.steps(4, "10:00", "10:10", 100)])
            #expect(try Self.total(c) == "120")
            #expect(try Self.coalesced(c).map { $0[0] } == [S.U(4).lowercased()])
            // A batch starting exactly where the last one ended touches, and covers nothing.
            try store.batch([Self.steps(5, "10:10", "10:15", 8)])
            #expect(try Self.total(c) == "128")
            try Self.expectConsistent(c)
        }
    }

    @Test("a sample starting where the latest held one ends covers the held samples with no duration at that instant: 5 + 3 + 4, the 7 not counted")
    func coversInstantsAtFrontier() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "09:50", "09:55", 5), Self.steps(2, "10:00", "10:00", 3), Self.steps(3, "10:00", "10:00", 4)])
            #expect(try Self.total(c) == "12")
            try store.batch([Self.steps(4, "10:00", "10:05", 7)])
            #expect(try Self.total(c) == "12")
            #expect(try Self.coalesced(c) == [[S.U(4).lowercased(), "2026-03-10", Self.phone, "7", "2", "7", "false"]])
            try Self.expectConsistent(c)
        }
    }

    @Test("samples of one very span each lie inside the others: 1 + 1 and their 2 is a coalescing (2 steps); 300 more of that span break it (304), each listed")
    func oneVerySpan() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 1), Self.steps(2, "10:00", "10:05", 1), Self.steps(3, "10:00", "10:05", 2)])
            #expect(try Self.total(c) == "2")
            #expect(try Self.coalesced(c) == [[S.U(1).lowercased(), "2026-03-10", Self.phone, "1", "2", "3", "true"],
                                              [S.U(2).lowercased(), "2026-03-10", Self.phone, "1", "2", "3", "true"],
                                              [S.U(3).lowercased(), "2026-03-10", Self.phone, "2", "2", "2", "false"]])
            // Each new one of the span is inside every held one, and they inside it: every
            // sample is re-decided, each span's contents summed once.
            try store.batch((4...303).map { Self.steps($0, "10:00", "10:05", 1) })
            #expect(try Self.total(c) == "304")
            let listed = try c.table("SELECT count(*), bool_and(counted)::text, min(parts), max(parts) FROM health.coalesced_samples WHERE person = 'p'").rows
            #expect(listed == [["303", "true", "302", "302"]])
            try Self.expectConsistent(c)
        }
    }

    @Test("parts that do not add up: both counted (30 + 60 + 100 = 190) and listed with counted true")
    func partsNotAddingUp() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 30), Self.steps(2, "10:05", "10:10", 60), Self.steps(3, "10:00", "10:10", 100)])
            #expect(try Self.total(c) == "190")
            #expect(try Self.coalesced(c) == [[S.U(3).lowercased(), "2026-03-10", Self.phone, "100", "2", "90", "true"]])
            try Self.expectConsistent(c)
        }
    }

    @Test("another source's samples inside are not parts: phone 30 + 70 and watch 100 over them stay 100 each")
    func otherSourceInside() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 30), Self.steps(2, "10:05", "10:10", 70),
                             Self.steps(3, "10:00", "10:10", 100, source: Self.watch)])
            let totals = try c.table("SELECT source, total::text FROM health.daily_source_totals WHERE person = 'p' ORDER BY source")
            #expect(totals.rows == [[Self.phone, "100"], [Self.watch, "100"]])
            #expect(try Self.coalesced(c).isEmpty)
            try Self.expectConsistent(c)
        }
    }

    @Test("the winner rule sees a coalesced source's true total: phone 60 + 60 (plus its combined 120) loses to the watch's 150")
    func winnerWithCoalescedSource() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "08:00", "08:30", 60), Self.steps(2, "08:30", "09:00", 60),
                             Self.steps(4, "08:00", "09:00", 150, source: Self.watch)])
            try store.batch([Self.steps(3, "08:00", "09:00", 120)])
            let row = try c.table("SELECT value::text, source, alternatives::text FROM health.daily_totals WHERE person = 'p'")
            #expect(row.rows == [["150", Self.watch, "{\"\(Self.phone)\": 120}"]], "counted twice the phone would win with 240")
            try Self.expectConsistent(c)
        }
    }

    @Test("reading types are never coalesced: a heart-rate reading over two others is three readings")
    func readingsUnaffected() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 30, type: HK.heartRate), Self.steps(2, "10:05", "10:10", 30, type: HK.heartRate),
                             Self.steps(3, "10:00", "10:10", 60, type: HK.heartRate)])
            let row = try c.table("SELECT samples::text, mean::text FROM health.daily_readings WHERE person = 'p'")
            #expect(row.rows == [["3", "40"]])
            #expect(try Self.coalesced(c).isEmpty)
        }
    }

    @Test("a combined sample over midnight counts on no day; its parts on theirs (40 and 60)")
    func overMidnight() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([
                S.quantity(S.U(1), HK.steps, source: Self.phone, start: "2026-03-10T23:30:00.000+01:00", end: "2026-03-10T23:59:00.000+01:00", value: 40),
                S.quantity(S.U(2), HK.steps, source: Self.phone, start: "2026-03-11T00:00:00.000+01:00", end: "2026-03-11T00:30:00.000+01:00", value: 60),
            ])
            try store.batch([S.quantity(S.U(3), HK.steps, source: Self.phone, start: "2026-03-10T23:30:00.000+01:00",
                                        end: "2026-03-11T00:30:00.000+01:00", value: 100)])
            #expect(try Self.total(c, day: "2026-03-10") == "40")
            #expect(try Self.total(c, day: "2026-03-11") == "60")
            #expect(try Self.coalesced(c).map { [$0[1], $0[6]] } == [["2026-03-10", "false"]])
            try Self.expectConsistent(c)
            // A time zone that moves the days keeps the rule.
            try c.query("SELECT health.set_time_zone('p', 'America/New_York')")
            #expect(try Self.total(c, day: "2026-03-10") == "100", "both parts are on the 10th in New York")
            try Self.expectConsistent(c)
        }
    }

    @Test("decimal values add up exactly: 0.1 + 0.2 km walked is a coalescing of 0.3")
    func decimals() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 0.1, type: HK.distance), Self.steps(2, "10:05", "10:10", 0.2, type: HK.distance),
                             Self.steps(3, "10:00", "10:10", 0.3, type: HK.distance)])
            #expect(try Self.total(c, type: HK.distance) == "0.3")
            #expect(try Self.coalesced(c).map { $0[6] } == ["false"])
            try Self.expectConsistent(c)
        }
    }

    @Test("a replaced part breaks the match: 70 resent as 80, and the combined sample counts again (100 + 30 + 80)")
    func replacedPartBreaksMatch() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(1, "10:00", "10:05", 30), Self.steps(2, "10:05", "10:10", 70), Self.steps(3, "10:00", "10:10", 100)])
            #expect(try Self.total(c) == "100")
            try store.batch([Self.steps(2, "10:05", "10:10", 80)])
            #expect(try Self.total(c) == "210")
            #expect(try Self.coalesced(c).map { [$0[5], $0[6]] } == [["110", "true"]])
            try Self.expectConsistent(c)
            // Moved out of the span entirely: one part left inside, no covering at all.
            try store.batch([Self.steps(2, "11:05", "11:10", 70)])
            #expect(try Self.total(c) == "200")
            #expect(try Self.coalesced(c).isEmpty)
            try Self.expectConsistent(c)
        }
    }

    @Test("a combined sample far longer than an hour is found from parts arriving later, and rebuild_rollups gives the same")
    func longCombinedFoundLater() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            try store.batch([Self.steps(10, "00:00", "23:59", 1000)])
            let parts = (0..<10).map { Self.steps(20 + $0, String(format: "%02d:00", 8 + $0), String(format: "%02d:30", 8 + $0), 100) }
            for part in parts { try store.batch([part]) }
            #expect(try Self.total(c) == "1000")
            #expect(try Self.coalesced(c).map { [$0[4], $0[6]] } == [["10", "false"]])
            try Self.expectConsistent(c)
            try c.query("SELECT health_store.rebuild_rollups('p')")
            #expect(try Self.total(c) == "1000")
            try Self.expectConsistent(c)
        }
    }
}
