import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// The operational views: freshness, export runs, batches, quarantine, unknown types, settings.
@Suite("Operational views")
struct ViewsOperationsTests {
    typealias S = Sample

    @Test("freshness: last batch, newest sample end, stale after 6 h by default with a hint naming the usual causes")
    func freshness() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            let oldRun = UUID().uuidString
            let newRun = UUID().uuidString
            try store.batch(person: "quiet", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", end: "2026-03-01T10:05:00.000+01:00", value: 10),
            ], exportId: oldRun, basis: "window", receivedAt: try nowMinus(c, hours: 9))
            try store.batch(person: "quiet", [
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-02T10:00:00.000+01:00", end: "2026-03-02T10:07:00.000+01:00", value: 10),
                S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-02-01T10:00:00.000+01:00", value: 10),
            ], exportId: newRun, basis: "anchor", receivedAt: try nowMinus(c, hours: 7))
            try store.batch(person: "busy", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: 10),
            ], receivedAt: try nowMinus(c, hours: 1))

            let f = try c.table("SELECT * FROM health.freshness")
            #expect(f.count == 2)
            let quiet = f.row(where: "person", is: "quiet")
            #expect(text(quiet, "last_export_id") == newRun.lowercased())
            #expect(text(quiet, "last_basis") == "anchor")
            #expect(text(quiet, "newest_sample_end_at").flatMap(Date.init(postgresText:)) == Date(postgresText: "2026-03-02 09:07:00+00"))
            #expect(close(double(quiet, "hours_since_last_batch"), 7, tolerance: 0.01))
            #expect(text(quiet, "stale_after") == "06:00:00")
            #expect(text(quiet, "is_stale") == "t")
            let hint = try #require(text(quiet, "hint"))
            for cause in ["Low Power Mode", "swiped away", "locked", "unreachable", "credential", "401"] {
                #expect(hint.contains(cause), "hint names \(cause)")
            }
            #expect(!hint.lowercased().contains("live"))
            #expect(!hint.lowercased().contains("real-time"))

            let busy = f.row(where: "person", is: "busy")
            #expect(text(busy, "is_stale") == "f")
            #expect(isNull(busy, "hint"))

            try c.query("SELECT health.set_stale_after('quiet', interval '12 hours')")
            let relaxed = try c.table("SELECT * FROM health.freshness").row(where: "person", is: "quiet")
            #expect(text(relaxed, "stale_after") == "12:00:00")
            #expect(text(relaxed, "is_stale") == "f")
            #expect(isNull(relaxed, "hint"))
            let bad = #expect(throws: PostgresError.self) {
                try c.query("SELECT health.set_stale_after('quiet', interval '-1 hour')")
            }
            #expect(bad?.sqlState == "22023")
        }
    }

    @Test("the newest sample end follows what is held: a replaced end, a sample Health deleted and one received again; /stats says the same")
    func newestEndFollowsTheSamples() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            func newest() throws -> (view: String?, stats: String?) {
                let view = try c.table("SELECT to_char(newest_sample_end_at AT TIME ZONE 'UTC', 'HH24:MI') AS t FROM health.freshness WHERE person = 'p'")
                let stats = try PersonStats.jsonText(person: "p", on: c)
                let json = try JSONSerialization.jsonObject(with: Data(stats.utf8)) as? [String: Any]
                return ((view.rows.first?.first ?? nil), json?["newest_sample_end_at"] as? String)
            }
            try store.batch([
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000Z", end: "2026-03-01T10:05:00.000Z", value: 10),
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:30:00.000Z", value: 20),
            ])
            #expect(try newest() == ("11:30", "2026-03-01T11:30:00.000Z"))
            // The newest sample sent again with an earlier end: the end held moves back.
            try store.batch([S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:10:00.000Z", value: 20)])
            #expect(try newest() == ("11:10", "2026-03-01T11:10:00.000Z"))
            // Deleted in Health: it counts nowhere, its end neither.
            try c.query("SELECT health_store.lock_person('p')")
            try c.query("SELECT health_store.mark_deleted('p', ARRAY[$1::uuid], now(), now())", [S.U(2)])
            #expect(try newest() == ("10:05", "2026-03-01T10:05:00.000Z"))
            // Received again, it exists again.
            try store.batch([S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:10:00.000Z", value: 20)])
            #expect(try newest() == ("11:10", "2026-03-01T11:10:00.000Z"))
        }
    }

    // The lookup after a replace reads the samples started in the hour before the latest start
    // and the ends of the samples longer than an hour (note_newest_end): each case here is one
    // the other part alone gets wrong.
    @Test("the newest end looked up again after a replace: a long sample started hours before, a short one started over an hour before a sample that ends before it starts")
    func newestEndLookedUpAgain() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            func newest() throws -> String? { try c.newestEnd(of: "p") }
            try store.batch([
                S.sleep(S.U(1), source: "watch", start: "2026-03-01T01:00:00.000Z", end: "2026-03-01T12:00:00.000Z", value: 0),
                S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:30:00.000Z", value: 20),
            ])
            #expect(try newest() == "12:00")
            // A replace may move the end back: looked up, the in-bed sample that began at 01:00 still ends last.
            try store.batch([S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:10:00.000Z", value: 21)])
            #expect(try newest() == "12:00")
            try c.query("SELECT health_store.lock_person('p')")
            try c.query("SELECT health_store.mark_deleted('p', ARRAY[$1::uuid], now(), now())", [S.U(1)])
            #expect(try newest() == "11:10")
            // The latest start is a sample ending before it starts (10:00 after 12:30): the newest
            // end, 11:59, belongs to a sample started before the hour before 12:30.
            try store.batch([
                S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:59:00.000Z", value: 5),
                S.quantity(S.U(4), HK.heartRate, source: "watch", start: "2026-03-01T12:30:00.000Z", end: "2026-03-01T10:00:00.000Z", value: 60),
            ])
            #expect(try newest() == "11:59")
            try store.batch([S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-01T11:00:00.000Z", end: "2026-03-01T11:05:00.000Z", value: 22)])
            #expect(try newest() == "11:59")
            try c.query("SELECT health_store.mark_deleted('p', ARRAY[$1::uuid], now(), now())", [S.U(3)])
            #expect(try newest() == "11:05")
        }
    }

    @Test("export runs: a truncated run is incomplete, a late batch completes it, a retried batch counts once")
    func exportRuns() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let store = Store(connection: c)
            let run = UUID().uuidString
            func batch(_ n: Int, uuids: [Int], final: Bool) throws {
                try store.batch(uuids.map { S.quantity(S.U($0), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: Double($0)) },
                                exportId: run, sequence: n, isFinal: final, basis: "anchor")
            }
            try batch(1, uuids: [1, 2], final: false)
            try batch(3, uuids: [5, 6, 7], final: true)
            var r = try c.table("SELECT * FROM health.export_runs").row(where: "export_id", is: run.lowercased())
            #expect(text(r, "basis") == "anchor")
            #expect(text(r, "batches_received") == "2")
            #expect(text(r, "last_batch_sequence") == "3")
            #expect(text(r, "final_batch_sequence") == "3")
            #expect(text(r, "is_complete") == "f")
            #expect(text(r, "samples") == "5")

            try batch(2, uuids: [3, 4], final: false)
            try batch(2, uuids: [3, 4], final: false)  // the app retried a batch it never saw answered
            r = try c.table("SELECT * FROM health.export_runs").row(where: "export_id", is: run.lowercased())
            #expect(text(r, "batches_received") == "3")
            #expect(text(r, "is_complete") == "t")
            #expect(text(r, "samples") == "7")
            #expect(text(r, "inserted") == "7")
            #expect(text(r, "duplicates") == "2")
            #expect(text(r, "generated_at").flatMap(Date.init(postgresText:)) == Date(postgresText: "2026-04-01 10:00:00+00"))

            // A run whose first batch is lost: final arrived, but 1 is missing.
            let gap = UUID().uuidString
            try store.batch([S.quantity(S.U(9), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: 9)],
                            exportId: gap, sequence: 2, isFinal: true)
            let g = try c.table("SELECT * FROM health.export_runs").row(where: "export_id", is: gap.lowercased())
            #expect(text(g, "is_complete") == "f")
            #expect(text(g, "final_batch_sequence") == "2")

            let deliveries = try c.table("SELECT * FROM health.deliveries WHERE export_id = $1 ORDER BY received_at", [run])
            #expect(deliveries.count == 4)
            #expect(deliveries.dictionaries.map { text($0, "batch_sequence") } == ["1", "3", "2", "2"])
            #expect(deliveries.dictionaries.map { text($0, "duplicates") } == ["0", "0", "0", "2"])
        }
    }

    @Test("samples of unknown types are kept, counted per type and per day")
    func unknownTypes() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            let novel = "HKQuantityTypeIdentifierSomethingNew"
            try Store(connection: c).batch([
                S.quantity(S.U(1), novel, source: "watch", start: "2026-03-01T10:00:00.000+01:00", value: 1, unit: "count", group: "activity"),
                S.quantity(S.U(2), novel, source: "phone", start: "2026-03-01T11:00:00.000+01:00", value: 2, unit: "count", group: "activity"),
                S.quantity(S.U(3), novel, source: "watch", start: "2026-03-04T09:00:00.000+01:00", value: 3, unit: "count", group: "activity"),
                S.quantity(S.U(4), HK.steps, source: "phone", start: "2026-03-04T10:00:00.000+01:00", value: 3),
            ])
            let unknown = try c.table("SELECT * FROM health.unknown_types")
            #expect(unknown.count == 1)
            let row = unknown.row(where: "type", is: novel)
            #expect(text(row, "kind") == "quantity")
            #expect(text(row, "samples") == "3")
            #expect(text(row, "first_start_at").flatMap(Date.init(postgresText:)) == Date(postgresText: "2026-03-01 09:00:00+00"))
            #expect(text(row, "last_start_at").flatMap(Date.init(postgresText:)) == Date(postgresText: "2026-03-04 08:00:00+00"))
            let summary = try c.table("SELECT day, unknown_samples, steps FROM health.daily_summary ORDER BY day")
            #expect(summary.rows == [["2026-03-01", "2", nil], ["2026-03-04", "1", "3"]])
            #expect(try c.table("SELECT * FROM health.daily_totals").count == 1)
        }
    }

    @Test("settings: one row per known person with defaults; quarantine rows carry their batch")
    func settingsAndQuarantine() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            try c.query("INSERT INTO health_store.tokens (person, token_sha256) VALUES ('minted', sha256('x'))")
            try c.query("SELECT health.set_stale_after('tuned', interval '2 hours')")
            try c.query("SELECT health.set_time_zone('zoned', 'America/New_York')")
            let run = UUID().uuidString
            try Store(connection: c).batch(person: "sender", [
                S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-01T10:00:00.000+01:00", value: 1),
            ], exportId: run, sequence: 4, quarantine: #"[{"position": 2, "reason": "missing key uuid", "raw": "{\"type\":\"x\"}"}]"#)
            let settings = try c.table("SELECT * FROM health.settings ORDER BY person")
            #expect(settings.rows == [
                ["minted", nil, "06:00:00"],
                ["sender", nil, "06:00:00"],
                ["tuned", nil, "02:00:00"],
                ["zoned", "America/New_York", "06:00:00"],
            ])
            let q = try c.table("SELECT * FROM health.quarantine")
            #expect(q.count == 1)
            let row = q.row(where: "person", is: "sender")
            #expect(text(row, "export_id") == run.lowercased())
            #expect(text(row, "batch_sequence") == "4")
            #expect(text(row, "position") == "2")
            #expect(text(row, "reason") == "missing key uuid")
            #expect(text(row, "raw") == #"{"type":"x"}"#)
        }
    }

    private func nowMinus(_ c: PostgresConnection, hours: Int) throws -> String {
        try #require(try c.query("SELECT (now() - make_interval(hours => $1))::text", [hours]).first?[0])
    }
}
