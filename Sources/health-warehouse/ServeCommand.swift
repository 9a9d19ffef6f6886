import Dispatch
import Assistant
import Foundation
import HTTPServer
import Postgres
import Receiver
import Synchronization
import Warehouse
import WebUI

/// `health-warehouse serve`
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "receive healthd batches over HTTP (migrates first)"
    static let help = """
        usage: health-warehouse serve [options] [database options]

        Receives healthd v1 batches (JSON or CSV) by POST on any path and stores them, one
        transaction per batch. GET /healthz answers 200 while the database does; GET /stats
        gives the caller's counts. Runs pending migrations first. Stops cleanly on SIGTERM or
        SIGINT: stops accepting, finishes batches in flight, exits 0.

        POST /hae takes Health Auto Export's REST API automation (docs/health-auto-export.md):
        its JSON, the credential as for healthd, the automation-aggregation header read.

        The Stridee paths are matched first (docs/stridee.md): POST /v1/device/apple/workouts
        and /v1/device/apple/wellness, their relay twins /v1/accounts/PERSON/apple/…, and
        PUT/GET/DELETE /v1/device/connections/apple, with Authorization: Bearer always and
        their own body limits (30 MiB a workout, 10 MiB and 2,000 items a wellness batch).

        GET /ui is a page of the signed-in person's days (docs/ui.md), read as role
        health_reader: open for person `default` on loopback while no token exists, else
        signed in with a token (POST /ui/sign-in) into a session cookie.

        With --mcp, /mcp is the assistant's MCP server over Streamable HTTP (docs/assistant.md):
        the tools of `health-warehouse mcp` (never sql) for the person of the token sent as
        Authorization: Bearer, a session per initialize, ended when its token is revoked.

          --listen HOST:PORT     address to listen on (default 127.0.0.1:8080; 0.0.0.0:8080
                                 or [::]:8080 to accept the phone from the network)
          --host NAME            a host name clients reach this server by (repeatable):
                                 what a reverse proxy or the phone puts in Host, such as
                                 health.example.net. IP addresses and localhost are always
                                 answered; any other name gets 421 and changes nothing, on
                                 every path (a web page cannot reach serve by pointing its
                                 own name at this machine: DNS rebinding)
          --auth-header NAME     header carrying the credential (default Authorization, whose
                                 value must be `Bearer <token>`; with another name the whole
                                 value is the token)
          --max-body SIZE        largest healthd body accepted, e.g. 4MiB (default); larger
                                 gets 413 (the Stridee paths keep their own limits)
          --max-hae-body SIZE    largest Health Auto Export body POST /hae accepts (default
                                 64MiB, at most 1GiB); larger gets 413: the app's "batch
                                 requests" setting splits its exports (docs/health-auto-export.md)
          --body-budget SIZE     the most body bytes all requests in flight may hold at once
                                 (default 64MiB, at least 32MiB, --max-body and --max-hae-body);
                                 a body beyond it gets 503 with Retry-After and is sent again
                                 later, so memory stays bounded whatever clients send at once
          --pool-size N          database connections (default 8)
          --connection-limit N   HTTP connections at once (default 64)
          --per-address-limit N  HTTP connections at once from one client address (default
                                 16; 0 for none). Behind a reverse proxy every client is the
                                 proxy: raise it to --connection-limit and limit in the proxy
          --timeout SECONDS      idle HTTP connections are cut after this (default 60)
          --request-deadline SECONDS
                                 a request's headers and body must arrive within this, or the
                                 connection is cut (default 60)
        \(WriterTimeouts.help(column: 25))
          --mcp                  serve the assistant's MCP server at /mcp (POST, DELETE)
          --insecure-no-auth     allow a non-loopback address with no token minted (every
                                 batch then belongs to person `default`)
        \(OperationsOptions.help)

        The credential is checked when the header fields arrive, before any body is read.
        A batch that waits past --lock-timeout or runs past --statement-timeout is answered
        503 with Retry-After (the app keeps it and retries).

        Tokens: `health-warehouse token create --person NAME`. Once one exists, every request
        needs one. A 401 is not retried by the app: that batch is lost until exported again.

        \(DatabaseOptions.help)
        """

    var address: ListenAddress
    /// The names of `--host`: requests naming any other host are answered 421.
    var hostNames: HostNames
    var authHeader: String
    var maxBody: Int
    var maxHAEBody: Int
    var bodyBudget: Int
    var poolSize: Int
    var connectionLimit: Int
    var perAddressLimit: Int
    var timeout: Int
    var requestDeadline: Int
    var writerTimeouts: WriterTimeouts
    var insecureNoAuth: Bool
    var mcp: Bool
    var operations: OperationsOptions
    var database: DatabaseOptions

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: OperationsOptions.flagNames.union(["insecure-no-auth", "mcp"]),
                                         options: DatabaseOptions.optionNames.union(WriterTimeouts.optionNames).union(OperationsOptions.optionNames).union([
                                             "listen", "host", "auth-header", "max-body", "max-hae-body", "body-budget", "pool-size", "connection-limit", "per-address-limit",
                                             "timeout", "request-deadline"]))
        guard parsed.positionals.isEmpty else {
            throw UsageError(message: "serve takes no arguments, got \"\(parsed.positionals[0])\"", command: Self.name)
        }
        do {
            address = try ListenAddress.parse(parsed.value("listen") ?? "127.0.0.1:8080")
        } catch {
            throw UsageError(message: "--listen: \(error)", command: Self.name)
        }
        let names = parsed.values["host"] ?? []
        if let bad = names.first(where: { !HostNames.isValidName($0) }) {
            throw UsageError(message: "--host takes a host name such as health.example.net (no port, no scheme), got \"\(bad)\"",
                             command: Self.name)
        }
        hostNames = HostNames(names)
        authHeader = parsed.value("auth-header") ?? "Authorization"
        if let problem = ReceiverConfiguration.authHeaderProblem(authHeader) {
            throw UsageError(message: "--auth-header \"\(authHeader)\" \(problem): use a header name such as Authorization or X-Token",
                             command: Self.name)
        }
        let maxBodyText = parsed.value("max-body") ?? "4MiB"
        guard let size = ByteSize.parse(maxBodyText), size >= 1024, size <= 1 << 30 else {
            throw UsageError(message: "--max-body must be a size from 1KiB to 1GiB such as 4MiB, got \"\(maxBodyText)\"", command: Self.name)
        }
        maxBody = size
        let haeText = parsed.value("max-hae-body") ?? "64MiB"
        guard let haeSize = ByteSize.parse(haeText), haeSize >= 1024, haeSize <= 1 << 30 else {
            throw UsageError(message: "--max-hae-body must be a size from 1KiB to 1GiB such as 64MiB, got \"\(haeText)\"", command: Self.name)
        }
        maxHAEBody = haeSize
        let budgetText = parsed.value("body-budget") ?? "64MiB"
        let floor = max(size, haeSize, 32 * 1_048_576)
        guard let budget = ByteSize.parse(budgetText), budget >= floor, budget <= 1 << 34 else {
            // Named as given: a budget left at its default is too small for the bodies asked for.
            let given = parsed.value("body-budget").map { "got \"\($0)\"" }
                ?? "its default 64MiB is smaller than --max-body or --max-hae-body: pass --body-budget too"
            throw UsageError(message: "--body-budget must be a size from \(floor >> 20)MiB (the largest body a path takes) to 16GiB, \(given)",
                             command: Self.name)
        }
        bodyBudget = budget
        poolSize = try parsed.integer("pool-size", default: 8, range: 1...100, command: Self.name)
        connectionLimit = try parsed.integer("connection-limit", default: 64, range: 1...10_000, command: Self.name)
        perAddressLimit = try parsed.integer("per-address-limit", default: 16, range: 0...10_000, command: Self.name)
        timeout = try parsed.integer("timeout", default: 60, range: 1...3600, command: Self.name)
        requestDeadline = try parsed.integer("request-deadline", default: 60, range: 1...3600, command: Self.name)
        writerTimeouts = try WriterTimeouts(parsed, command: Self.name)
        insecureNoAuth = parsed.has("insecure-no-auth")
        mcp = parsed.has("mcp")
        operations = try OperationsOptions(parsed, command: Self.name)
        if let metrics = operations.metricsAddress, metrics.port != 0, metrics.port == address.port,
           metrics.host == address.host || [metrics.host, address.host].contains(where: { $0 == "0.0.0.0" || $0 == "::" }) {
            throw UsageError(message: "--metrics-listen \(metrics) and --listen \(address) are one port: give the metrics another",
                             command: Self.name)
        }
        database = DatabaseOptions(parsed)
    }

    /// Whether the listener speaks TLS (`--tls-cert`), for the page's `Secure` cookie.
    var listensWithTLS: Bool { operations.tls != nil }

    /// Listens first, then migrates (answering `503` meanwhile, `/healthz` and the page
    /// included), then takes batches: an upgrade waiting for a dashboard's transaction never
    /// leaves the port closed. A TLS pair is checked before anything else.
    func run() throws -> Int32 {
        if let tls = operations.tls {
            do { try tls.load() } catch { throw CommandFailure(message: "\(error)", hint: "give a readable, current PEM pair with --tls-cert and --tls-key") }
        }
        return try database.withDatabase(migrate: false) { url in
            let pool = PostgresPool(connectionString: url, maxConnections: poolSize,
                                    sessionSettings: writerTimeouts.sessionSettings)
            defer { pool.close() }
            let minted = try Self.anyTokenMinted(pool)
            if !minted && !address.isLoopback && !insecureNoAuth {
                throw CommandFailure(
                    message: "refusing to listen on \(address) with no token minted: anyone who can reach it could write health data",
                    hint: "mint one with `health-warehouse token create --person NAME`, or pass --insecure-no-auth")
            }
            let metrics = ReceiverMetrics(version: BuildInfo.version, schema: BuildInfo.schema, pool: pool,
                                          perPerson: operations.metricsPerPerson)
            let receiver = Receiver(pool: pool, configuration: ReceiverConfiguration(authHeader: authHeader, maxHAEBodyBytes: maxHAEBody), ready: false,
                                    metrics: metrics)
            // The page and the assistant read the views through one reader pool.
            let readerPool = WebUI.readerPool(connectionString: url, maxConnections: mcp ? 6 : 3)
            defer { readerPool.close() }
            let page = WebUI(tokenPool: pool, readerPool: readerPool,
                             configuration: WebUIConfiguration(secureCookies: listensWithTLS, openWithoutTokens: address.isLoopback))
            let assistant = mcp ? MCPEndpoint(tokenPool: pool, credentials: ReceiverConfiguration(authHeader: authHeader)) : nil
            // /mcp and paths under /ui are routed before the receiver's any-path rule (docs/ui.md,
            // docs/assistant.md); until migrated, the receiver answers everything with 503.
            let server = HTTPServer(configuration: serverConfiguration(metrics), onHead: { head in
                guard receiver.isReady else { return receiver.admit(head) }
                return assistant?.admit(head) ?? page.admit(head) ?? receiver.admit(head)
            })
            let metricsServer = operations.metricsServer(metrics, hostNames: hostNames)
            let stopped = DispatchSemaphore(value: 0)
            let stopping = Atomic<Bool>(false)
            Shutdown.shared.takeOver { signal in
                Log.event("serve.stopping", ["signal": signal == SIGINT ? "SIGINT" : "SIGTERM", "in_flight": server.requestsInFlight])
                stopping.store(true, ordering: .sequentiallyConsistent)
                server.stop(graceSeconds: 30)
                metricsServer?.stop(graceSeconds: 0)
                stopped.signal()
            }
            // SIGHUP re-reads the TLS pair; without one there is nothing to re-read, and a
            // `systemctl reload` must not stop the receiver.
            Shutdown.shared.onHangUp {
                if server.usesTLS { Self.reloadTLS(server) } else { Log.event("serve.hangup_ignored", ["reason": "no TLS pair to re-read"]) }
            }
            try start(server, metricsServer)
            Log.event("serve.listening", ["address": "\(address.host):\(server.boundPort)", "tls": server.usesTLS,
                                          "metrics": metricsServer.map { "\(operations.metricsAddress!.host):\($0.boundPort)" } ?? "off",
                                          "auth": minted ? "tokens" : "none (person default)",
                                          "auth_header": authHeader, "max_body": maxBody, "max_hae_body": maxHAEBody, "body_budget": bodyBudget,
                                          "lock_timeout_ms": Int((writerTimeouts.lock * 1000).rounded()),
                                          "statement_timeout_ms": Int((writerTimeouts.statement * 1000).rounded())])
            do {
                try database.runMigrations(url, shouldStop: { stopping.load(ordering: .sequentiallyConsistent) })
            } catch MigrationError.stopped {
                stopped.wait()
                return 0
            } catch {
                server.stop(graceSeconds: 0)
                metricsServer?.stop(graceSeconds: 0)
                throw error
            }
            if let problem = page.checkReader() { Log.event("ui.unavailable", ["reason": problem]) }
            if let assistant { Self.startAssistant(assistant, readerPool) }
            if let last = OperationsOptions.lastBatch(pool) { metrics.restoreLastBatch(secondsSinceEpoch: last) }
            receiver.markReady()
            Log.event("serve.ready")
            stopped.wait()
            Log.event("serve.stopped")
            return 0
        }
    }

    /// Gives `/mcp` its server once the views are there; without them (no reader role, say)
    /// `/mcp` keeps answering 503 and the log says why.
    static func startAssistant(_ endpoint: MCPEndpoint, _ readerPool: PostgresPool) {
        do {
            let reader = try AssistantReader(pool: readerPool)
            endpoint.start(MCPServer(toolbox: Toolbox(reader: reader, allowSQL: false), version: BuildInfo.version))
        } catch {
            Log.event("mcp.unavailable", ["reason": "\(error)"])
        }
    }

    /// The receiver's listener: the options, TLS when asked, every answer counted in `metrics`.
    func serverConfiguration(_ metrics: ReceiverMetrics) -> HTTPServerConfiguration {
        HTTPServerConfiguration(
            address: address, maxBodyBytes: maxBody, connectionLimit: connectionLimit,
            perAddressConnectionLimit: perAddressLimit, connectionTimeoutSeconds: timeout,
            requestDeadlineSeconds: Double(requestDeadline), bodyBudgetBytes: bodyBudget,
            returnMemoryAfterBytes: Self.returnMemoryAfterBytes, tls: operations.tls,
            onAnswered: { [mcp] answered in
                metrics.answered(answered, family: mcp && answered.path == MCPEndpoint.path ? .other : nil)
                if answered.byServer { Self.logServerAnswer(answered) }
            },
            hostNames: hostNames, onMisdirected: Self.logMisdirected)
    }

    /// The request line of an answer the server gave itself (the `413` of a body over its
    /// limit, the `503` of a body the budget cannot take now), which no handler logs: the
    /// same `http.request` line as every other, with the body bytes that came.
    static func logServerAnswer(_ answered: HTTPAnswered) {
        Log.event("http.request", ["method": answered.method, "path": answered.path, "status": answered.status, "person": "-",
                                   "body_bytes": answered.bodyBytes, "ms": answered.seconds * 1000])
    }

    /// One line for a request refused for its `Host` (421): the name it used, so a proxy that
    /// needs `--host` is found.
    static let logMisdirected: @Sendable (HTTPRequestHead) -> Void = { head in
        Log.event("http.misdirected", ["method": head.method, "path": head.path, "host": head.headers["Host"] ?? "",
                                       "hint": "add the name with --host NAME if clients should reach serve by it"])
    }

    /// Starts the receiver, then the metrics listener; either failing stops both.
    func start(_ server: HTTPServer, _ metricsServer: HTTPServer?) throws {
        do {
            try server.start()
        } catch {
            throw CommandFailure(message: Self.listenFailure(error, "\(address)"), hint: "choose another address with --listen HOST:PORT")
        }
        do {
            try metricsServer?.start()
        } catch {
            server.stop(graceSeconds: 0)
            throw CommandFailure(message: "metrics: " + Self.listenFailure(error, "\(operations.metricsAddress!)"),
                                 hint: "choose another address with --metrics-listen HOST:PORT")
        }
    }

    /// `cannot listen on ADDRESS: why`, once: the server's own start errors say it already.
    static func listenFailure(_ error: any Error, _ address: String) -> String {
        let text = "\(error)"
        return text.hasPrefix("cannot listen on") ? text : "cannot listen on \(address): \(text)"
    }

    /// SIGHUP: the TLS pair read again for new connections; a refused one leaves the old served.
    static func reloadTLS(_ server: HTTPServer) {
        do {
            let expiry = try server.reloadTLS()
            Log.event("serve.tls_reloaded", ["expires_at": Int(expiry)])
        } catch {
            Log.event("serve.tls_reload_failed", ["error": "\(error)"])
        }
    }

    /// Bodies of 1 MiB or more give their memory back once answered (`malloc_trim`), and
    /// buffers that large are mappings of their own, unmapped when freed.
    static let returnMemoryAfterBytes = 1_048_576

    /// Whether any token was ever minted; false on a database not yet migrated at all.
    static func anyTokenMinted(_ pool: PostgresPool) throws -> Bool {
        let exists = try pool.withConnection { conn in
            try conn.query("SELECT to_regclass('health_store.tokens') IS NOT NULL").first?.decode(0, as: Bool.self) ?? false
        }
        return try exists && TokenStore(pool: pool).anyMinted()
    }
}
