import Foundation
import HTTPServer
import Postgres
@testable import Receiver
import Testing
import TestSupport
import Warehouse

/// What is decided when a request's header fields arrive, before any body is read.
@Suite("Receiver admission")
struct ReceiverAdmissionTests {
    @Test("with a token minted, a request without it is answered 401 before its body is sent; a wrong type 415 likewise")
    func refusedBeforeBody() throws {
        try withReceiver { receiver, db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "alice", label: nil).token
            // 3 MB announced, a few bytes sent, then the client waits: the answer comes anyway.
            for (headers, status) in [([("Content-Type", "application/json")], 401),
                                      ([("Content-Type", "application/json"), ("Authorization", "Bearer \(token)x")], 401),
                                      ([("Content-Type", "text/plain"), ("Authorization", "Bearer \(token)")], 415)] {
                let connection = try HTTPTestClient.sendLyingContentLength(port: receiver.port, contentLength: 3_000_000,
                                                                           body: Array("{\"sch".utf8), headers: headers)
                let answer = try connection.readResponse(timeout: 10)
                #expect(answer.status == status, "\(headers)")
                #expect(connection.waitForClose(timeout: 5), "the rest of the body is never read")
            }
            #expect(try counts(db, person: "alice").deliveries == 0)
            // The same token, whole body: stored.
            let stored = try receiver.post(try Bodies.fixture("contract-example.json"), headers: [("Authorization", "Bearer \(token)")])
            #expect(stored.status == 200)
            #expect(try counts(db, person: "alice").samples == 3)
        }
    }

    @Test("a request forwarded by a proxy while no token exists gets 401 with a hint to mint one, on healthd's and Stridee's paths; with a token it is stored",
          arguments: ["Forwarded", "X-Forwarded-For", "X-Real-IP", "Via", "X-Forwarded-Host", "X-Forwarded-Proto", "x-forwarded-port",
                      "X-Forwarded-Anything", "CF-Connecting-IP", "True-Client-IP", "X-Client-IP"])
    func forwardedWithoutTokens(header: String) throws {
        try withReceiver { receiver, db in
            let body = try Bodies.fixture("contract-example.json")
            let forwarded = [(name: header, value: header == "Forwarded" ? "for=203.0.113.7" : header == "Via" ? "1.1 proxy.example" : "203.0.113.7")]
            let answer = try receiver.post(body, headers: forwarded)
            #expect(answer.status == 401)
            #expect(try receiver.post(Array(StrideeBody.workout().utf8), headers: forwarded, path: "/v1/accounts/default/apple/workouts").status == 401)
            let hint = json(answer)["error"] as? String ?? ""
            #expect(hint.contains("reverse proxy"))
            #expect(hint.contains("health-warehouse token create --person NAME"))
            #expect(try receiver.get("/stats", headers: forwarded).status == 401)
            // No data in /healthz: a monitor behind the proxy may still ask.
            #expect(try receiver.get("/healthz", headers: forwarded).status == 200)
            #expect(try counts(db).deliveries == 0)
            // Without the header (a client on this machine) the default person still works.
            #expect(try receiver.post(body).status == 200)

            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            let token = try TokenStore(pool: pool).create(person: "bob", label: nil).token
            let viaProxy = try receiver.post(body, headers: forwarded + [("Authorization", "Bearer \(token)")])
            #expect(viaProxy.status == 200)
            #expect(try counts(db, person: "bob").samples == 3)
        }
    }

    @Test("one mapping: lock and statement timeouts and a lost COMMIT are 503 with Retry-After; a rolled-back COMMIT is 500",
          arguments: [(PostgresError.Kind.server, "55P03", 503), (.server, "57014", 503), (.commitOutcomeUnknown, "57P01", 503),
                      (.server, "25P02", 500)])
    func timeoutMapping(kind: PostgresError.Kind, state: String, status: Int) {
        let response = ReceiverOutcome.failed(PostgresError(kind: kind, sqlState: state, message: "m")).response
        #expect(response.status == status)
        #expect(response.headers.contains { $0.name == "Retry-After" && $0.value == "60" } == (status == 503))
    }

    @Test("a writer held up by a row lock answers 503 with Retry-After at its lock or statement timeout, nothing changed; 200 once the lock is gone",
          .disabled(if: TestPostgres.citusURL != nil, Comment(rawValue: TestPostgres.workerTimeoutsReason)),
          arguments: [[("lock_timeout", "500ms"), ("statement_timeout", "60s")], [("lock_timeout", "60s"), ("statement_timeout", "500ms")]])
    func lockedRowAnswers503(settings: [(String, String)]) throws {
        try TestPostgres.withDatabase { db in
            let receiver = try RunningReceiver(connectionString: db.connectionString,
                                               sessionSettings: settings.map { (name: $0.0, value: $0.1) })
            defer { receiver.stop() }
            let uuid = "A1B2C3D4-0000-4000-8000-0000000000AA"
            let first = Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "1")])
            let changed = Bodies.json(samples: [Bodies.quantity(uuid: uuid, start: "2026-08-21T10:00:00.000+02:00", value: "2")])
            #expect(try receiver.post(first).status == 200)

            // A second session (the superuser, as a stand-in for anything holding a row the
            // write needs) locks the sample's row: the replacing write must wait for it.
            let holder = try db.connect()
            defer { holder.close() }
            try holder.query("BEGIN")
            try holder.query("SELECT 1 FROM health_store.sample_rows WHERE uuid = $1::uuid FOR UPDATE", [uuid])
            let refused = try receiver.post(changed, headers: [], path: "/")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "60")
            #expect(json(refused)["error"] as? String == "database busy; retry later")
            // The lock is still held: it was the timeout that answered.
            #expect(holder.isInTransaction)
            #expect(try db.scalar("SELECT value FROM health_store.samples", as: Double.self) == 1)
            #expect(try counts(db).deliveries == 1)

            try holder.query("ROLLBACK")
            let retried = try receiver.post(changed)
            #expect(retried.status == 200)
            #expect(json(retried)["replaced"] as? Int == 1)
            #expect(try db.scalar("SELECT value FROM health_store.samples", as: Double.self) == 2)
        }
    }

    /// A Grafana or notebook login (granted health_reader) takes every lock it is allowed to —
    /// the advisory keys writers once used and the migrator's, ACCESS SHARE on every view and so
    /// on the tables behind them, a long snapshot — and tries the ones it is not: writers are
    /// not delayed at all, far from their lock timeout.
    @Test("a reader login holding every lock it can take does not hold up a writer; the person's row lock is out of its reach")
    func readerCannotStallWriters() throws {
        try TestPostgres.withDatabase { db in
            let receiver = try RunningReceiver(connectionString: db.connectionString,
                                               sessionSettings: [(name: "lock_timeout", value: "1s")])
            defer { receiver.stop() }
            let body = try Bodies.fixture("contract-example.json")
            #expect(try receiver.post(body).status == 200)

            let admin = try db.connect()
            defer { admin.close() }
            let role = "reader_" + db.name
            try admin.query("CREATE ROLE \(role) LOGIN PASSWORD 'reader-test'")
            try admin.query("GRANT health_reader TO \(role)")
            defer { _ = try? admin.query("DROP ROLE IF EXISTS \(role)") }
            let info = try PostgresConnectionInfo(parsing: db.connectionString)
            let reader = try PostgresConnection(connectionString: info.setting("user", to: role).setting("password", to: "reader-test").connectionString)
            defer { reader.close() }

            try reader.query("BEGIN ISOLATION LEVEL REPEATABLE READ")
            // The advisory keys of the person lock before it was a row lock, and the migrator's.
            try reader.query("SELECT pg_advisory_lock(hashtext('health_warehouse.person'), hashtext('default'))")
            try reader.query("SELECT pg_advisory_xact_lock(hashtext('health_warehouse.person'), hashtext('default'))")
            try reader.query("SELECT pg_advisory_lock(7527605601647616372)")
            let views = try reader.query("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'health' AND c.relkind = 'v'")
            for view in views.map({ $0[0]! }) {
                try reader.query("LOCK TABLE health.\(view) IN ACCESS SHARE MODE")
                try reader.query("SELECT count(*) FROM (SELECT * FROM health.\(view) LIMIT 10) x")
            }
            // What it may not do: lock a row of health_store (the person lock) or any view's rows.
            for sql in ["SAVEPOINT s", "SELECT 1 FROM health_store.persons FOR UPDATE", "ROLLBACK TO s",
                        "SELECT 1 FROM health.samples FOR SHARE", "ROLLBACK TO s",
                        "LOCK TABLE health.samples IN SHARE MODE", "ROLLBACK TO s",
                        "SELECT health_store.lock_person('default')", "ROLLBACK TO s"] {
                if sql.hasPrefix("SAVEPOINT") || sql.hasPrefix("ROLLBACK") { try reader.query(sql); continue }
                #expect(throws: PostgresError.self, "\(sql)") { try reader.query(sql) }
            }

            // Meanwhile the writer changes a sample of the same person and adds new ones.
            var changed = String(decoding: body, as: UTF8.self)
            changed = changed.replacingOccurrences(of: "\"value\":42", with: "\"value\":43")
            let answer = try receiver.post(Array(changed.utf8))
            #expect(answer.status == 200, "a 503 here means the writer waited out its 1 s lock timeout")
            #expect(json(answer)["replaced"] as? Int == 1)
            try reader.query("ROLLBACK")
        }
    }

    @Test("a logged field with control characters stays on one line, escaped: a request path cannot forge a log line")
    func logLineEscapes() {
        let line = Log.line("http.request", ["method": "POST", "path": "/x\nlevel=error forged=1", "status": 200,
                                             "note": "tab\there\r\u{1B}[31m\u{2028}", "plain": "/a/b", "empty": ""])
        #expect(!line.contains("\n"))
        #expect(!line.contains("\r"))
        #expect(!line.contains("\u{1B}"))
        #expect(!line.contains("\u{2028}"))
        #expect(line.hasSuffix(#"http.request method=POST path="/x\nlevel=error forged=1" status=200 note="tab\there\r\u{1b}[31m\u{2028}" plain=/a/b empty="""#))
        #expect(Log.line("e", ["backslash": #"a\nb"#]).hasSuffix(#"e backslash=a\\nb"#))
    }
}
