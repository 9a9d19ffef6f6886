import Foundation
import Postgres
import Synchronization
import Testing
import TestSupport

@Suite("Connection pool")
struct PostgresPoolTests {
    @Test("a connection left inside a transaction is never handed out again")
    func neverHandsOutOpenTransaction() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            try pool.withConnection { conn in
                try conn.query("CREATE TABLE t (k int)")
                try conn.query("BEGIN")
                try conn.query("INSERT INTO t VALUES (1)")
            }
            try pool.withConnection { conn throws in
                #expect(!conn.isInTransaction)
                #expect(try conn.query("SELECT count(*) FROM t").first?.decode(0, as: Int.self) == 0)
            }
        }
    }

    @Test("at most maxConnections are open; a waiting caller gets one when it is freed")
    func boundedAndShared() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
            defer { pool.close() }
            let pids = Mutex<Set<Int32>>([])
            let done = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                try? pool.withConnection { conn in
                    try conn.query("SELECT pg_sleep(0.05)")
                    pids.withLock { _ = $0.insert(conn.backendPID) }
                    done.add(1, ordering: .relaxed)
                }
            }
            // Every caller was served, by at most two server processes.
            #expect(done.load(ordering: .relaxed) == 8)
            let seen = pids.withLock { $0 }
            #expect((1...2).contains(seen.count))
            #expect(pool.openConnections <= 2)
        }
    }

    @Test("the pool survives a server restart without its callers noticing")
    func survivesRestart() throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let db = try cluster.freshDatabase(label: "restart")
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
        defer { pool.close() }
        let before = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int32.self) }
        try cluster.stop()
        #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
        try cluster.start()
        let after = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.decode(0, as: Int32.self) }
        #expect(after != before)
    }

    @Test("an idle connection killed by a crash is replaced on the next call")
    func survivesKill() throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let db = try cluster.freshDatabase(label: "kill")
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
        defer { pool.close() }
        _ = try pool.withConnection { try $0.query("SELECT 1") }
        try cluster.kill()
        try cluster.start()
        let value = try pool.withConnection { try $0.query("SELECT 41 + 1").first!.decode(0, as: Int.self) }
        #expect(value == 42)
    }

    @Test("a connection lost at COMMIT is reported as commitOutcomeUnknown and never replayed")
    func lostCommitIsNotReplayed() throws {
        try TestPostgres.withDatabase { db in
            // A deferred trigger makes COMMIT wait for an advisory lock the test holds, so the
            // backend can be terminated while it is inside COMMIT.
            try db.query("CREATE TABLE t (k int)")
            try db.query("""
                CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NULL; END $$
                """)
            try db.query("""
                CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON t DEFERRABLE INITIALLY DEFERRED
                FOR EACH ROW EXECUTE FUNCTION hold_commit()
                """)
            let holder = try db.connect()
            defer { holder.close() }
            try holder.query("SELECT pg_advisory_lock(4242)")

            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2)
            defer { pool.close() }
            let runs = Atomic<Int>(0)
            let writer = BackgroundJob { () throws -> PostgresError? in
                do {
                    try pool.withTransaction { connection in
                        runs.add(1, ordering: .relaxed)
                        try connection.query("INSERT INTO t VALUES (1)")
                    }
                    return nil
                } catch let error as PostgresError {
                    return error
                }
            }
            // The writer's backend waits for the lock, inside COMMIT: end it there.
            var waiting: Int32?
            #expect(waitUntil {
                waiting = try? db.scalar("""
                    SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                    WHERE l.locktype = 'advisory' AND NOT l.granted AND a.query = 'COMMIT'
                    """, as: Int32.self)
                return waiting != nil
            })
            let pid = try #require(waiting)
            #expect(try db.scalar("SELECT pg_terminate_backend($1::integer)", [pid], as: Bool.self) == true)
            // Let a replay, if there were one, through.
            try holder.query("SELECT pg_advisory_unlock(4242)")
            let outcome = try #require(writer.wait(timeout: 30)).get()
            let error = try #require(outcome, "the lost COMMIT was reported as a success")
            #expect(error.kind == .commitOutcomeUnknown, "\(error)")
            #expect(error.isTransient)
            #expect(runs.load(ordering: .relaxed) == 1, "the transaction was run again after COMMIT was sent")
            #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
            // The pool serves the next caller on a fresh connection.
            #expect(try pool.withConnection { try $0.query("SELECT 7").first?.decode(0, as: Int.self) } == 7)
        }
    }

    @Test("a COMMIT the server turned into a ROLLBACK is an error (25P02), not a success")
    func commitThatRolledBackThrows() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            try pool.withConnection { try $0.query("CREATE TABLE t (k int PRIMARY KEY)") }
            let error = #expect(throws: PostgresError.self) {
                try pool.withTransaction { connection in
                    try connection.query("INSERT INTO t VALUES (1)")
                    // A caller that swallows a failure leaves the transaction aborted.
                    _ = try? connection.query("INSERT INTO t VALUES (1)")
                }
            }
            #expect(error?.sqlState == "25P02")
            #expect(error?.isTransient == false)
            #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        }
    }

    @Test("session settings are set on every connection the pool opens")
    func sessionSettings() throws {
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 2,
                                    sessionSettings: [("lock_timeout", "1500ms"), ("statement_timeout", "45s")])
            defer { pool.close() }
            let seen = Mutex<Set<String>>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let row = try? pool.withConnection { try $0.query("SELECT current_setting('lock_timeout'), current_setting('statement_timeout'), pg_sleep(0.05)").first }
                seen.withLock { _ = $0.insert("\(row?[0] ?? "-") \(row?[1] ?? "-")") }
            }
            #expect(seen.withLock { $0 } == ["1500ms 45s"])
        }
    }

    @Test("a writer waiting on a row lock gives up at lock_timeout (55P03) or statement_timeout (57014), both timeouts")
    func writerTimeouts() throws {
        try TestPostgres.withDatabase { db in
            try db.query("CREATE TABLE t (k int PRIMARY KEY, v int)")
            try db.query("INSERT INTO t VALUES (1, 0)")
            let holder = try db.connect()
            defer { holder.close() }
            try holder.query("BEGIN")
            try holder.query("SELECT * FROM t WHERE k = 1 FOR UPDATE")
            for (settings, state) in [([("lock_timeout", "200ms"), ("statement_timeout", "60s")], "55P03"),
                                      ([("lock_timeout", "60s"), ("statement_timeout", "200ms")], "57014")] {
                let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1, sessionSettings: settings)
                defer { pool.close() }
                let error = #expect(throws: PostgresError.self) {
                    try pool.withTransaction { try $0.query("UPDATE t SET v = v + 1 WHERE k = 1") }
                }
                #expect(error?.sqlState == state)
                #expect(error?.isTimeout == true)
                #expect(error?.isTransient == true)
            }
            try holder.query("ROLLBACK")
            #expect(try db.scalar("SELECT v FROM t", as: Int.self) == 0)
        }
    }
}
