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
}
