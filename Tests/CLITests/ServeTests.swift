import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// `serve` as a process: flags, refusal of a public address, logs, signals.
@Suite("serve")
struct ServeTests {
    @Test("refuses a non-loopback address with no token minted, unless --insecure-no-auth")
    func refusesPublicWithoutToken() throws {
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["serve", "--listen", "0.0.0.0:0", "--database-url", db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: refusing to listen on 0.0.0.0"))
            #expect(out.stderr.contains("hint: mint one with `health-warehouse token create --person NAME`"))

            let (insecure, _) = try CLIProcess.startServe(["--listen", "0.0.0.0:0", "--insecure-no-auth", "--database-url", db.connectionString])
            insecure.signal(SIGTERM)
            #expect(insecure.wait().status == 0)
        }
    }

    @Test("a port another server holds: exit 1, the address and the reason said once")
    func portInUse() throws {
        try TestPostgres.withDatabase { db in
            let (first, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            defer {
                first.signal(SIGTERM)
                _ = first.wait()
            }
            let out = try CLIProcess.run(["serve", "--listen", "127.0.0.1:\(port)", "--database-url", db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: cannot listen on 127.0.0.1:\(port): address already in use"), "\(out.stderr)")
            #expect(out.stderr.components(separatedBy: "cannot listen on").count == 2, "said once: \(out.stderr)")
            let metrics = try CLIProcess.run(["serve", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:\(port)",
                                              "--database-url", db.connectionString])
            #expect(metrics.status == 1)
            #expect(metrics.stderr.contains("error: metrics: cannot listen on 127.0.0.1:\(port): address already in use"), "\(metrics.stderr)")
        }
    }

    @Test("bad flags are usage errors, exit 64", arguments: [
        ["--listen", "nonsense"], ["--listen", "127.0.0.1:99999"], ["--max-body", "lots"], ["--pool-size", "0"],
        ["--auth-header", "Bad Header"], ["--timeout", "-1"], ["extra"], ["--lock-timeout", "never"], ["--statement-timeout", "0s"],
        ["--request-deadline", "0"], ["--per-address-limit", "-1"],
        ["--auth-header", "X-Api-Key,Y"], ["--auth-header", "Host"], ["--auth-header", "content-type"], ["--auth-header", "X-Forwarded-Token"],
        ["--max-body", "100MiB"], ["--metrics-per-person"], ["--listen", "127.0.0.1:9400", "--metrics-listen", "9400"],
        ["--listen", "0.0.0.0:9400", "--metrics-listen", "127.0.0.1:9400"],
    ])
    func badFlags(arguments: [String]) throws {
        let out = try CLIProcess.run(["serve"] + arguments)
        #expect(out.status == 64, "\(arguments): \(out.stderr)")
        #expect(out.stderr.hasPrefix("error: "))
    }

    @Test("SIGHUP to a serve without TLS is logged and stops nothing; SIGTERM still stops it")
    func hangUpWithoutTLS() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            serve.signal(SIGHUP)
            #expect(serve.waitForStderr("serve.hangup_ignored", timeout: 10))
            #expect(try HTTPTestClient.request(port: port, method: "GET", path: "/healthz").status == 200)
            serve.signal(SIGTERM)
            let out = serve.wait()
            #expect(out.status == 0)
            #expect(out.stderr.contains("signal=SIGTERM") && !out.stderr.contains("signal=SIGHUP"), "\(out.stderr)")
        }
    }

    @Test("a --max-body over the default body budget names the budget's default, not a value never given")
    func budgetMessage() throws {
        let out = try CLIProcess.run(["serve", "--max-body", "100MiB"])
        #expect(out.status == 64)
        #expect(out.stderr.contains("its default 64MiB is smaller than --max-body") && !out.stderr.contains("got \""), "\(out.stderr)")
        #expect(try CLIProcess.run(["--parse-only", "serve", "--max-body", "100MiB", "--body-budget", "128MiB"]).status == 0)
    }

    @Test("--parse-only accepts the command lines compose runs without running them")
    func parseOnly() throws {
        #expect(try CLIProcess.run(["--parse-only", "serve", "--listen", "0.0.0.0:8080"]).status == 0)
        #expect(try CLIProcess.run(["--parse-only", "serve", "--listen", "0.0.0.0:x"]).status == 64)
    }

    @Test("SIGTERM while a batch is in flight: the batch is answered and stored, then exit 0")
    func gracefulStop() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            // Hold the person lock so the batch waits inside its transaction.
            let blocker = try db.connect()
            try blocker.query("BEGIN")
            try blocker.query("SELECT health_store.lock_person('default')")
            let body = try Bodies.fixture("contract-example.json")
            let sender = BackgroundJob {
                try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: [("Content-Type", "application/json")], body: body, timeout: 30)
            }
            #expect(waitUntil { (try? db.scalar(TestPostgres.lockWaitsSQL, as: Int.self)) == 1 })
            serve.signal(SIGTERM)
            #expect(serve.waitForStderr("serve.stopping"))
            try blocker.query("ROLLBACK")
            let response = try #require(sender.wait(timeout: 30)).get()
            #expect(response.status == 200)
            #expect(serve.wait().status == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 3)
        }
    }

    @Test("a full run's logs hold no token, body, password or connection string")
    func logsHoldNoSecrets() throws {
        try TestPostgres.withDatabase { db in
            let secretURL = db.connectionString + " password=hunter2-do-not-log application_name=probe"
            let token = try CLIProcess.run(["token", "create", "--person", "alice", "--database-url", secretURL]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.hasPrefix("hw_"))
            let (serve, port) = try CLIProcess.startServe(["--database-url", secretURL])
            let marker = "SecretSourceName-7f3a"
            let body = Bodies.json(samples: [Bodies.quantity(uuid: "AB000000-0000-4000-8000-000000000001", source: marker, start: "2026-08-21T10:00:00.000+02:00", value: "5")])
            let bad = Array("{\"schemaVersion\":1,\"oops\":\"\(marker)\"".utf8)
            for (headers, payload) in [([("Authorization", "Bearer \(token)")], body), ([("Authorization", "Bearer \(token)x")], body),
                                       ([("Authorization", "Bearer \(token)")], bad)] {
                _ = try HTTPTestClient.request(port: port, method: "POST", path: "/", headers: headers + [("Content-Type", "application/json")], body: payload)
            }
            _ = try HTTPTestClient.request(port: port, method: "GET", path: "/stats", headers: [("Authorization", "Bearer \(token)")])
            serve.signal(SIGTERM)
            let out = serve.wait()
            #expect(out.stderr.contains("status=200"))
            #expect(out.stderr.contains("status=401"))
            #expect(out.stderr.contains("status=400"))
            for secret in [token, String(token.dropFirst(3)), marker, "hunter2", db.connectionString, "samples\":["] {
                #expect(!out.stderr.contains(secret), "log leaks \(secret)")
                #expect(!out.stdout.contains(secret), "stdout leaks \(secret)")
            }
        }
    }

    @Test("a body over --max-body is answered 413 by the server itself, and logged like any request")
    func tooLargeLogged() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString, "--max-body", "1KiB"])
            let body = Bodies.json(samples: (1...20).map { Bodies.quantity(uuid: String(format: "AB000000-0000-4000-8000-%012d", $0),
                                                                        start: "2026-08-21T10:00:00.000+02:00", value: "5") })
            #expect(body.count > 1024)
            let response = try HTTPTestClient.request(port: port, method: "POST", path: "/big", headers: [("Content-Type", "application/json")], body: body)
            #expect(response.status == 413)
            serve.signal(SIGTERM)
            let out = serve.wait()
            let line = out.stderr.split(separator: "\n").first { $0.contains("status=413") }
            #expect(line?.contains("http.request") == true && line?.contains("path=/big") == true, "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 0)
        }
    }

    @Test("a request path with control characters is logged as one escaped line, never a forged one")
    func pathCannotForgeLogLine() throws {
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--database-url", db.connectionString])
            // MHD passes a raw CR, ESC or DEL in the request target through to the application.
            let connection = try HTTPTestConnection(port: port)
            try connection.send(Array("GET /x\r\u{1B}[2K2026-01-01T00:00:00Z level=error forged=1\u{7F} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            #expect(try connection.readResponse(timeout: 10).status == 405)
            serve.signal(SIGTERM)
            let out = serve.wait()
            let lines = out.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            let logged = lines.filter { $0.contains("forged=1") }
            #expect(logged.count == 1, "\(out.stderr)")
            #expect(logged.first?.contains(#"path="/x\r\u{1b}[2K2026-01-01T00:00:00Z level=error forged=1\u{7f}" status=405"#) == true,
                    "\(logged)")
            #expect(!out.stderr.contains("\r"))
            #expect(!out.stderr.contains("\u{1B}"))
        }
    }
}
