import Foundation
import Testing
import TestSupport

/// `serve --tls-cert --tls-key` (docs/exposing.md) over real sockets: a throwaway CA made by
/// `openssl`, `curl` and Python's `ssl` as the clients, GnuTLS under libmicrohttpd as the server.
@Suite("serve over TLS")
struct ServeTLSTests {
    /// A CA with a current `server` pair, for each test.
    static func withTLSServe(_ extra: [String] = [], _ body: (CLIProcess.Running, Int, ThrowawayCA, TestDatabase) throws -> Void) throws {
        let ca = try ThrowawayCA()
        defer { ca.remove() }
        let pair = try ca.issue("server")
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe(["--tls-cert", pair.certificate, "--tls-key", pair.key,
                                                           "--database-url", db.connectionString] + extra)
            defer { serve.signal(SIGTERM); _ = serve.wait() }
            try body(serve, port, ca, db)
        }
    }

    /// `curl` over HTTPS to `localhost:port`, trusting `ca`; its output (`%{http_code}` last).
    static func curl(_ port: Int, _ ca: ThrowawayCA, path: String = "/healthz", _ options: [String] = []) throws -> CLIProcess.Output {
        try CLIProcess.runProgram("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", ca.certificatePath, "-o", "/dev/null",
                                                    "-w", "%{http_code}"] + options + ["https://localhost:\(port)\(path)"])
    }

    @Test("curl --cacert posts the worked example over HTTPS: 200 and 3 samples stored")
    func curlPostsABatch() throws {
        try Self.withTLSServe { _, port, ca, db throws in
            let body = Bodies.fixtures.appendingPathComponent("contract-example.json").path
            let out = try Self.curl(port, ca, path: "/", ["-H", "Content-Type: application/json", "--data-binary", "@" + body])
            #expect(out.stdout == "200", "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples", as: Int.self) == 3)
        }
    }

    @Test("Python's ssl with a TLS 1.2 ceiling (what an older iPhone offers) posts a batch: 200")
    func python12() throws {
        try Self.withTLSServe { _, port, ca, _ throws in
            let script = """
                import http.client, ssl, sys
                context = ssl.create_default_context(cafile=sys.argv[1])
                context.maximum_version = ssl.TLSVersion.TLSv1_2
                connection = http.client.HTTPSConnection("localhost", int(sys.argv[2]), context=context, timeout=10)
                connection.request("POST", "/", body='{"schemaVersion":1,"connectivityTest":true}',
                                   headers={"Content-Type": "application/json"})
                print(connection.getresponse().status, connection.sock.version())
                """
            let out = try CLIProcess.runProgram("/usr/bin/env", ["python3", "-c", script, ca.certificatePath, String(port)])
            #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "200 TLSv1.2", "\(out.stderr)")
        }
    }

    @Test("TLS 1.1, and TLS 1.2 with a suite without forward secrecy, are refused; TLS 1.3 and ECDHE are taken")
    func refusesOldAndStaticSuites() throws {
        try Self.withTLSServe { _, port, ca, _ throws in
            #expect(try Self.curl(port, ca, ["--tls-max", "1.1"]).stdout == "000")
            #expect(try Self.curl(port, ca, ["--tls-max", "1.2", "--ciphers", "AES128-GCM-SHA256"]).stdout == "000")
            #expect(try Self.curl(port, ca, ["--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"]).stdout == "200")
            #expect(try Self.curl(port, ca, ["--tlsv1.3"]).stdout == "200")
        }
    }

    @Test("plain HTTP sent to the TLS port gets no HTTP answer")
    func plainGetsNothing() throws {
        try Self.withTLSServe { _, port, _, _ throws in
            let connection = try HTTPTestConnection(port: port)
            defer { connection.close() }
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(throws: HTTPTestClientError.self) { _ = try connection.readResponse(timeout: 5) }
        }
    }

    @Test("a certificate swapped and SIGHUP: the next connection gets the new one, an open one keeps working")
    func reloadOnHangUp() throws {
        try Self.withTLSServe { serve, port, ca, _ throws in
            // A request in flight across the reload: its head and half its body before, the rest after.
            let probe = Array(#"{"schemaVersion":1,"connectivityTest":true}"#.utf8)
            let open = try HTTPTestConnection(port: port, tlsAuthority: ca.certificatePath, priorities: nil)
            defer { open.close() }
            try open.send(HTTPTestClient.head(method: "POST", path: "/", headers: [("Content-Type", "application/json"),
                                                                                  ("Content-Length", String(probe.count))]))
            try open.send(Array(probe.prefix(10)))
            #expect(try Self.subject(port, ca).contains("CN = server"))
            let renewed = try ca.issue("renewed")
            for (from, to) in [(renewed.certificate, "server.pem"), (renewed.key, "server.key")] {
                try Data(contentsOf: URL(fileURLWithPath: from)).write(to: URL(fileURLWithPath: ca.directory + "/" + to), options: .atomic)
            }
            serve.signal(SIGHUP)
            #expect(serve.waitForStderr("serve.tls_reloaded", timeout: 10))
            #expect(try Self.subject(port, ca).contains("CN = renewed"))
            try open.send(Array(probe.dropFirst(10)))
            #expect(try open.readResponse().status == 200, "a request in flight across the reload is answered")
        }
    }

    /// The subject of the certificate a new connection is given (`openssl s_client`).
    static func subject(_ port: Int, _ ca: ThrowawayCA) throws -> String {
        let out = try CLIProcess.runProgram("/bin/sh", ["-c", "openssl s_client -connect 127.0.0.1:\(port) -CAfile \(ca.certificatePath) </dev/null 2>/dev/null | grep '^subject='"])
        return out.stdout
    }

    @Test("a missing, unreadable, mismatched, expired or half-given pair stops serve at start, naming the file")
    func badPairs() throws {
        let ca = try ThrowawayCA()
        defer { ca.remove() }
        let good = try ca.issue("good")
        let other = try ca.issue("other")
        let expired = try ca.issue("expired", days: -1)
        let encrypted = ca.directory + "/encrypted.key"
        #expect(try CLIProcess.runProgram("/usr/bin/openssl", ["pkey", "-in", good.key, "-aes256", "-passout", "pass:secret",
                                                               "-out", encrypted]).status == 0)
        let cases: [(arguments: [String], status: Int32, names: String)] = [
            (["--tls-cert", ca.directory + "/missing.pem", "--tls-key", good.key], 1, "missing.pem: cannot be read"),
            (["--tls-cert", ca.directory, "--tls-key", good.key], 1, "\(ca.directory): cannot be read"),
            (["--tls-cert", good.certificate, "--tls-key", ca.directory + "/nothing.key"], 1, "nothing.key: cannot be read"),
            (["--tls-cert", good.certificate, "--tls-key", other.key], 1, "other.key: does not belong to the certificate"),
            (["--tls-cert", expired.certificate, "--tls-key", expired.key], 1, "expired.pem: has expired"),
            (["--tls-cert", good.key, "--tls-key", good.key], 1, "good.key: is not a PEM certificate"),
            (["--tls-cert", good.certificate, "--tls-key", encrypted], 1, "encrypted.key: is encrypted; serve takes an unencrypted key"),
            (["--tls-cert", good.certificate], 64, "--tls-cert and --tls-key go together"),
        ]
        for (arguments, status, names) in cases {
            let out = try CLIProcess.run(["serve", "--listen", "127.0.0.1:0", "--data-dir", ca.directory + "/never"] + arguments)
            #expect(out.status == status, "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains(names), "\(arguments): \(out.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: ca.directory + "/never"), "nothing is started before the pair is checked")
    }

    @Test("the page's session cookie is Secure under TLS")
    func secureCookie() throws {
        try Self.withTLSServe(["--insecure-no-auth"]) { _, port, ca, db throws in
            let token = try CLIProcess.run(["token", "create", "--person", "alice", "--database-url", db.connectionString])
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let out = try CLIProcess.runProgram("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", ca.certificatePath, "-D", "-",
                                                                  "-o", "/dev/null", "--data-urlencode", "token=\(token)",
                                                                  "-H", "Origin: https://localhost:\(port)",
                                                                  "https://localhost:\(port)/ui/sign-in"])
            let cookie = out.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
            #expect(cookie.contains("; Secure"), "\(out.stdout)")
        }
    }
}
