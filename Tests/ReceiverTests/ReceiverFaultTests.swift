import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

@Suite("Receiver under database faults")
struct ReceiverFaultTests {
    /// Batch `n` of `size` step samples (1000 make about half a megabyte of table).
    static func batch(_ n: Int, size: Int = 50) -> [UInt8] {
        let samples = (0..<size).map { i in
            Bodies.quantity(uuid: String(format: "B%07d-0000-4000-8000-%012d", n, i), start: "2026-08-21T10:00:00.000+02:00", value: "\(i)")
        }
        return Bodies.json(samples: samples, exportId: String(format: "B%07d-0000-4000-8000-000000000000", n), sequence: 1)
    }

    @Test("PostgreSQL stopped: 503 with Retry-After and nothing partial; back up: the same batches store fully, no restart")
    func databaseDown() throws {
        let cluster = try TestCluster()
        defer { cluster.destroy() }
        let db = try cluster.freshDatabase(label: "down")
        let receiver = try RunningReceiver(connectionString: db.connectionString)
        defer { receiver.stop() }
        #expect(try receiver.post(Self.batch(0)).status == 200)

        try cluster.stop()
        for n in 1...3 {
            let answer = try receiver.post(Self.batch(n))
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "60")
        }
        #expect(try receiver.get("/healthz").status == 503)

        try cluster.start()
        #expect(try receiver.get("/healthz").status == 200)
        for n in 1...3 {
            let answer = try receiver.post(Self.batch(n))
            #expect(answer.status == 200)
            #expect(json(answer)["inserted"] as? Int == 50)
        }
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 200)
        #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 4)
    }

    @Test("a read-only database answers 503, never 4xx, and stores nothing")
    func readOnly() throws {
        try withReceiver { receiver, db in
            try db.query("ALTER DATABASE \(db.name) SET default_transaction_read_only = on")
            // Pooled connections opened before the change keep the old setting; a fresh pool sees it.
            let fresh = try RunningReceiver(connectionString: db.connectionString)
            defer { fresh.stop() }
            let answer = try fresh.post(Self.batch(7))
            #expect(answer.status == 503)
            #expect(answer.header("Retry-After") == "60")
            let admin = try db.connect()
            defer { admin.close() }
            try admin.query("SET default_transaction_read_only = off")
            try admin.query("ALTER DATABASE \(db.name) RESET default_transaction_read_only")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }

    /// The samples table is moved to a tablespace on a 2 MB tmpfs, which fills after a few
    /// batches: PostgreSQL fails to extend the table (SQLSTATE 53100, disk full).
    @Test("a full disk answers 503 with Retry-After, never 4xx; the failed batch left nothing; with space back it stores fully",
          .enabled(if: SmallFilesystem.canMount, "needs root and a machine that allows tmpfs mounts"))
    func diskFull() throws {
        let disk = try SmallFilesystem(megabytes: 2, owner: LocalCluster.superuser)
        defer { disk.remove() }
        let cluster = try TestCluster()
        defer { cluster.destroy() }  // before the filesystem is unmounted: defers run in reverse
        let db = try cluster.freshDatabase(label: "disk_full")
        try db.query("CREATE TABLESPACE small LOCATION '\(disk.path)'")
        try db.query("ALTER TABLE health_store.samples SET TABLESPACE small")
        let receiver = try RunningReceiver(connectionString: db.connectionString)
        defer { receiver.stop() }

        var stored = 0
        var refused: HTTPTestResponse?
        for n in 0..<20 {
            let answer = try receiver.post(Self.batch(n, size: 1000))
            guard answer.status == 200 else { refused = answer; break }
            stored += 1
        }
        let answer = try #require(refused, "2 MB must fill within 20 batches of 1000 samples")
        #expect(answer.status == 503, "a full disk is transient: the app must keep the batch and retry")
        #expect(answer.header("Retry-After") == "60")
        #expect(stored >= 1, "the first batch fits")
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == stored * 1000, "nothing of the refused batch")
        #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == stored)

        // Space is back: the table moves to the cluster's own disk; the same batch stores fully.
        try db.query("ALTER TABLE health_store.samples SET TABLESPACE pg_default")
        let retried = try receiver.post(Self.batch(stored, size: 1000))
        #expect(retried.status == 200)
        #expect(json(retried)["inserted"] as? Int == 1000)
        #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == (stored + 1) * 1000)
        try db.query("DROP TABLESPACE small")
    }
}

/// A small tmpfs mounted for one test, owned by the database server's user, so a tablespace
/// on it runs out of space for real.
struct SmallFilesystem {
    let path: String

    /// Whether this machine lets us mount one: root, and a kernel and sandbox that allow
    /// tmpfs mounts (tried once with a 1 MB one).
    static let canMount: Bool = {
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount"),
              let probe = try? SmallFilesystem(megabytes: 1, owner: "root") else { return false }
        probe.remove()
        return true
    }()

    init(megabytes: Int, owner: String) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hw-small-fs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        guard let user = getpwnam(owner) else { throw FilesystemError(message: "no user \(owner)") }
        let mounted = try CLIProcess.runProgram("/bin/mount", [
            "-t", "tmpfs", "-o", "size=\(megabytes)m,uid=\(user.pointee.pw_uid),gid=\(user.pointee.pw_gid),mode=0700", "tmpfs", path])
        guard mounted.status == 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw FilesystemError(message: "mount failed: \(mounted.stderr)")
        }
    }

    func remove() {
        _ = try? CLIProcess.runProgram("/bin/umount", [path])
        try? FileManager.default.removeItem(atPath: path)
    }

    struct FilesystemError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}
