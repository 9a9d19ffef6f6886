import Postgres
import Testing
import TestSupport

/// A grouping writer's queued rollup refreshes (`health_store.defer_rollups`, migration 0097): a
/// temporary table of its session, emptied at every COMMIT, and a COMMIT that forgot
/// `flush_rollups` is refused rather than leaving the rollups wrong.
@Suite("Deferred rollups")
struct DeferredRollupsTests {
    typealias S = Sample

    static let steps = [S.quantity(S.U(1), HK.steps, source: "phone", start: "2026-03-10T08:00:00.000+01:00", value: 1200),
                        S.quantity(S.U(2), HK.steps, source: "phone", start: "2026-03-10T09:00:00.000+01:00", value: 300)]

    @Test("the queue lives in the writer's session only; a COMMIT that skips flush_rollups is refused and stores nothing; a flushed one leaves no queue and the day right")
    func queueGuarded() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            defer { c.close() }
            let other = try db.connect()
            defer { other.close() }
            let store = Store(connection: c)

            try c.query("BEGIN")
            #expect(try store.batch(Self.steps, deferRollups: true).inserted == 2)
            #expect(try c.query("SELECT count(*) FROM pg_temp.deferred_rollups WHERE person = 'p'").first?[0] == "1")
            // Queued, not yet done: the rollups have nothing for the day inside the transaction.
            #expect(try c.query("SELECT count(*) FROM health_store.rollup_source WHERE person = 'p'").first?[0] == "0")
            // Another session has no queue of its own and never sees this one.
            #expect(try other.query("SELECT to_regclass('pg_temp.deferred_rollups') IS NULL").first?[0] == "t")
            #expect(try db.scalar("SELECT count(*) FROM pg_class WHERE relname = 'deferred_rollups' AND relpersistence <> 't'", as: Int.self) == 0)
            let refused = #expect(throws: PostgresError.self) { try c.query("COMMIT") }
            #expect(refused?.message.contains("not flushed before COMMIT") == true, "\(String(describing: refused))")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE person = 'p'", as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries WHERE person = 'p'", as: Int.self) == 0)

            try c.query("BEGIN")
            #expect(try store.batch(Self.steps, deferRollups: true).inserted == 2)
            try c.query("SELECT health_store.lock_person('p'), health_store.flush_rollups('p')")
            try c.query("COMMIT")
            #expect(try c.query("SELECT count(*) FROM pg_temp.deferred_rollups").first?[0] == "0")
            #expect(try db.scalar("SELECT steps FROM health.daily_summary WHERE person = 'p' AND day = '2026-03-10'", as: Double.self) == 1500)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('p')", as: Int.self) == 0)

            // A transaction that deferred nothing flushes nothing and commits.
            try c.query("BEGIN")
            try c.query("SELECT health_store.lock_person('p'), health_store.flush_rollups('p')")
            try c.query("COMMIT")
            #expect(try db.scalar("SELECT steps FROM health.daily_summary WHERE person = 'p' AND day = '2026-03-10'", as: Double.self) == 1500)
        }
    }

    // The newest end is never queued (apply_sample_changes): grouped batches set it as they go,
    // a grouped replace looks it up again, and the flush leaves it as it is.
    @Test("grouped batches note the newest end as they go: new samples move it on, a replace in the same group moves it back, the flush keeps it")
    func newestEndInAGroup() throws {
        try TestPostgres.withDatabase { db in
            let c = try db.connect()
            defer { c.close() }
            let store = Store(connection: c)
            func newest() throws -> String? { try c.newestEnd(of: "p") }
            try c.query("BEGIN")
            #expect(try store.batch(Self.steps, deferRollups: true).inserted == 2)
            #expect(try newest() == "08:00")
            #expect(try store.batch([S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-03-10T09:30:00.000Z",
                                                end: "2026-03-10T09:50:00.000Z", value: 40)], deferRollups: true).inserted == 1)
            #expect(try newest() == "09:50")
            // The same sample again with an earlier end: the end held moves back before any flush.
            #expect(try store.batch([S.quantity(S.U(3), HK.steps, source: "phone", start: "2026-03-10T09:30:00.000Z",
                                                end: "2026-03-10T09:35:00.000Z", value: 40)], deferRollups: true).replaced == 1)
            #expect(try newest() == "09:35")
            try c.query("SELECT health_store.lock_person('p'), health_store.flush_rollups('p')")
            try c.query("COMMIT")
            #expect(try newest() == "09:35")
            #expect(try db.scalar("SELECT steps FROM health.daily_summary WHERE person = 'p' AND day = '2026-03-10'", as: Double.self) == 1540)
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('p')", as: Int.self) == 0)
        }
    }
}
