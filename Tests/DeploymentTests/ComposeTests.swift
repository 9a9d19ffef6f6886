import Foundation
import Postgres
import Testing
import TestSupport
import Warehouse

/// compose.yaml, .env.example, .dockerignore and the documented docker lines: the services and
/// their order of start, no secret in the file, every command line they run accepted by the
/// binary's own parser (`health-warehouse --parse-only …`), and the hardening: the warehouse
/// connects as a role that owns its schemas and nothing more, the receiver is published on
/// loopback, no service gains privileges, and a placeholder password stops everything.
@Suite("Docker Compose")
struct ComposeTests {
    static let warehouseServices = ["warehouse", "ingest"]

    @Test("the services: db, the owner role, warehouse, the reader login, grafana, prometheus behind the monitoring profile, and ingest behind the backlog profile")
    func services() throws {
        let compose = try ComposeFile.load()
        #expect(compose.serviceNames == ["db", "owner-role", "warehouse", "reader-login", "grafana", "prometheus", "ingest"])
        #expect(compose.root["version"] == nil, "the obsolete version key makes Compose warn")
        #expect(compose.root["volumes"]?.keys == ["db-data", "grafana-data", "prometheus-data"])
        for name in compose.serviceNames where !["ingest", "prometheus"].contains(name) {
            #expect(compose.service(name)?["profiles"] == nil, "\(name) starts with a plain `up`")
        }
        #expect(compose.service("ingest")?["profiles"]?.strings == ["backlog"])
        #expect(compose.service("prometheus")?["profiles"]?.strings == ["monitoring"])
        for name in ["db", "warehouse", "grafana", "prometheus", "ingest"] {
            #expect(compose.service(name)?["restart"]?.string == "unless-stopped", "\(name)")
        }
        for job in ["owner-role", "reader-login"] {
            #expect(compose.service(job)?["restart"]?.string == "no", "\(job) is a one-shot job")
        }
    }

    @Test("db: the official postgres image, 16 or newer, on a named volume, with a pg_isready healthcheck")
    func database() throws {
        let compose = try ComposeFile.load()
        let db = try #require(compose.service("db"))
        let image = try #require(db["image"]?.string)
        #expect(image.hasPrefix("postgres:"))
        let major = Int(image.dropFirst("postgres:".count).prefix { $0.isNumber }) ?? 0
        #expect(major >= 16, "\(image)")
        #expect(db["volumes"]?.strings.first == "db-data:/var/lib/postgresql/data")
        let test = db["healthcheck"]?["test"]?.strings ?? []
        #expect(test.first == "CMD-SHELL")
        #expect(test.last?.hasPrefix("pg_isready ") == true)
        // $$ reaches the container as $, so the container's own variables are used.
        #expect(try compose.interpolate(test.last ?? "") == #"pg_isready -U "${POSTGRES_USER}" -d "${POSTGRES_DB}""#)
        for key in ["interval", "timeout", "retries", "start_period"] {
            #expect(db["healthcheck"]?[key] != nil, "healthcheck.\(key)")
        }
        #expect(reportedPorts(db).allSatisfy { $0.hasPrefix("127.0.0.1:") }, "the database is reachable from this machine only")
    }

    @Test("every depends_on waits on a condition, and service_healthy only on a service with a healthcheck")
    func startOrder() throws {
        let compose = try ComposeFile.load()
        let expected: [String: [String: String]] = [
            "owner-role": ["db": "service_healthy"],
            "warehouse": ["db": "service_healthy", "owner-role": "service_completed_successfully"],
            "reader-login": ["db": "service_healthy"],
            "grafana": ["db": "service_healthy", "reader-login": "service_completed_successfully"],
            "ingest": ["db": "service_healthy", "owner-role": "service_completed_successfully"],
            "prometheus": ["warehouse": "service_healthy"],
        ]
        for name in compose.serviceNames {
            let dependsOn = compose.service(name)?["depends_on"]
            var found: [String: String] = [:]
            for (dependency, settings) in dependsOn?.pairs ?? [] {
                found[dependency] = settings["condition"]?.string
                if settings["condition"]?.string == "service_healthy" {
                    #expect(compose.service(dependency)?["healthcheck"] != nil, "\(name) waits for \(dependency) to be healthy")
                }
            }
            #expect(found == (expected[name] ?? [:]), "\(name) depends_on")
        }
    }

    @Test("warehouse: built from the Dockerfile, serves on 0.0.0.0:8080 in its container after migrating, DATABASE_URL without the password")
    func warehouse() throws {
        let compose = try ComposeFile.load()
        let warehouse = try #require(compose.service("warehouse"))
        #expect(warehouse["build"]?["context"]?.string == ".")
        #expect(warehouse["build"] == compose.service("ingest")?["build"], "ingest builds the same way")
        #expect(warehouse["image"]?.string == compose.service("ingest")?["image"]?.string, "ingest runs the same image")
        // The base images default to the official ones; .env may name local ones.
        let dockerfile = try Dockerfile.load()
        for name in ["SWIFT_IMAGE", "RUNTIME_IMAGE"] {
            let argument = try #require(warehouse["build"]?["args"]?[name]?.string)
            #expect(try compose.interpolate(argument, defaultsOnly: true) == dockerfile.arguments[name], "\(name)")
        }
        #expect(Array((warehouse["command"]?.strings ?? []).prefix(3)) == ["serve", "--listen", "0.0.0.0:8080"])
        let url = try compose.interpolate(try #require(warehouse["environment"]?["DATABASE_URL"]?.string))
        #expect(url == "host=db port=5432 dbname=health user=health_owner")
        #expect(!url.contains("password") && !url.contains("@"), "the password travels in PGPASSWORD")
        #expect(warehouse["environment"]?["PGPASSWORD"]?.string?.hasPrefix("${WAREHOUSE_DB_PASSWORD") == true)
        #expect(reportedPorts(warehouse) == ["${WAREHOUSE_BIND:-127.0.0.1}:${WAREHOUSE_PORT:-8080}:8080"])
        let test = warehouse["healthcheck"]?["test"]?.strings ?? []
        #expect(Array(test.prefix(3)) == ["CMD", "bash", "-c"])
        #expect(test.last?.contains("GET /healthz") == true)
    }

    @Test("ingest: every hour over the mounted ./backlog folder, only with --profile backlog")
    func ingest() throws {
        let compose = try ComposeFile.load()
        let ingest = try #require(compose.service("ingest"))
        let command = try (ingest["command"]?.strings ?? []).map { try compose.interpolate($0) }
        #expect(command.first == "ingest")
        #expect(command.contains("/backlog"))
        #expect(command.firstIndex(of: "--every").map { command[$0 + 1] } == "1h")
        #expect(ingest["volumes"]?.strings == ["./backlog:/backlog:ro"])
        #expect(ingest["environment"]?["PGPASSWORD"] == compose.service("warehouse")?["environment"]?["PGPASSWORD"])
        #expect(ingest["environment"]?["DATABASE_URL"]?.string == compose.service("warehouse")?["environment"]?["DATABASE_URL"]?.string)
    }

    @Test("no secret is written in compose.yaml: every password is a ${…} reference to .env, which git and docker ignore")
    func secrets() throws {
        let compose = try ComposeFile.load()
        for (path, value) in compose.root.scalars() {
            let key = path.split(separator: ".").last.map(String.init) ?? ""
            if key.range(of: "PASSWORD|SECRET|TOKEN|_KEY", options: .regularExpression) != nil {
                let references = ComposeFile.references(in: value)
                #expect(references.count == 1 && references[0].range == value.startIndex..<value.endIndex, "\(path) must be only ${…}")
                #expect(references.first?.fallback == nil, "\(path) has no default: a missing secret stops compose")
                #expect(references.first?.required == true, "\(path) uses ${NAME:?message}")
            }
            // What is written around the references: no `password=…` and no URL carrying one.
            var literal = value
            for reference in ComposeFile.references(in: value).reversed() { literal.replaceSubrange(reference.range, with: "$REF") }
            #expect(literal.range(of: #"(?i)password\s*[=:]\s*[^$\s]"#, options: .regularExpression) == nil, "\(path): \(value)")
            #expect(literal.range(of: #"://[^/\s:]+:[^@\s]+@"#, options: .regularExpression) == nil, "\(path): a URL with a password")
        }
        // Every variable compose.yaml reads is in .env.example or has a default.
        let text = try Repository.text("compose.yaml")
        for reference in ComposeFile.references(in: text) where !reference.name.isEmpty {
            #expect(compose.exampleEnvironment[reference.name] != nil || reference.fallback != nil, "${\(reference.name)}")
        }
        // .env.example: placeholders only, for every secret it lists.
        for (name, value) in compose.exampleEnvironment where name.contains("PASSWORD") {
            #expect(value.hasPrefix("change-me"), "\(name) in .env.example is a placeholder")
        }
        let gitignore = try Repository.text(".gitignore").split(separator: "\n")
        #expect(gitignore.contains("/.env"))
        let dockerignore = try Repository.text(".dockerignore").split(separator: "\n").map(String.init)
        for excluded in [".env", ".git", ".build", "backlog", "health-warehouse-data"] {
            #expect(dockerignore.contains(excluded), ".dockerignore leaves out \(excluded)")
        }
    }

    @Test("every command line compose, the Dockerfile and the docs run is accepted by the binary's parser")
    func commandLines() throws {
        let compose = try ComposeFile.load()
        var lines: [[String]] = []
        for name in Self.warehouseServices {
            let command = compose.service(name)?["command"]?.strings ?? []
            // With .env.example's values, and with the defaults written in compose.yaml alone.
            lines.append(try command.map { try compose.interpolate($0) })
            lines.append(try command.map { try compose.interpolate($0, defaultsOnly: true) })
        }
        let dockerfile = try Dockerfile.load()
        let runtime = try #require(dockerfile.stages.last)
        #expect(try runtime.arguments(of: "ENTRYPOINT").map(Dockerfile.execForm)
                == [["sh", "/usr/local/libexec/refuse-placeholders.sh", "health-warehouse"]])
        lines += try runtime.arguments(of: "CMD").map(Dockerfile.execForm)
        let documented = try Self.documentedRunLines()
        #expect(documented.contains(["token", "create", "--person", "me"]), "docs/docker.md mints the first token")
        lines += documented
        #expect(lines.count >= 5)
        for line in lines {
            let out = try CLIProcess.run(["--parse-only"] + line)
            #expect(out.status == 0, "\(line): \(out.stderr)")
            #expect(out.stdout == "ok: \(line[0])\n", "\(line)")
        }
        // --parse-only is not a rubber stamp.
        let wrong = try CLIProcess.run(["--parse-only", "serve", "--listen", "0.0.0.0:8080", "--no-such-option"])
        #expect(wrong.status == 64)
    }

    /// `docker compose run [options] warehouse ARGS` lines in docs/*.md, as argument lists.
    static func documentedRunLines() throws -> [[String]] {
        var lines: [[String]] = []
        for file in try Repository.files(in: "docs", withExtension: "md") {
            for line in try Repository.text("docs/" + file).split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                guard let run = text.range(of: "docker compose run "),
                      let range = text[run.upperBound...].range(of: " warehouse ") else { continue }
                var words = text[range.upperBound...].split(separator: " ").map(String.init)
                // In prose, the command ends with its code span.
                if let end = words.firstIndex(where: { $0.hasSuffix("`") }) { words = Array(words[...end]) }
                if let comment = words.firstIndex(where: { $0.hasPrefix("#") }) { words = Array(words[..<comment]) }
                if let pipe = words.firstIndex(where: { ["|", ">", "&&", "2>&1"].contains($0) }) { words = Array(words[..<pipe]) }
                words = words.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "`")) }.filter { !$0.isEmpty }
                if !words.isEmpty, !words.joined().contains("<"), !words.joined().contains("…") { lines.append(words) }
            }
        }
        return lines
    }

    @Test("the warehouse healthcheck succeeds against a running serve, and fails when the database is gone or nothing listens")
    func healthcheck() throws {
        let compose = try ComposeFile.load()
        let script = try #require(compose.service("warehouse")?["healthcheck"]?["test"]?.strings.last)
        #expect(script.contains("127.0.0.1/8080"))
        try TestPostgres.withDatabase { db in
            let (serve, port) = try CLIProcess.startServe([], environment: ["DATABASE_URL": db.connectionString])
            defer {
                serve.signal(SIGTERM)
                _ = serve.wait()
            }
            let probe = script.replacingOccurrences(of: "127.0.0.1/8080", with: "127.0.0.1/\(port)")
            let healthy = try Run.program("/bin/bash", ["-c", probe])
            #expect(healthy.status == 0, "\(healthy.output)")
            // The database goes away: /healthz answers 503 and the check fails.
            let admin = try PostgresConnection(connectionString: Libpq.database(db.connectionString, "postgres"))
            try admin.query("DROP DATABASE \(db.name) WITH (FORCE)")
            admin.close()
            let sick = try Run.program("/bin/bash", ["-c", probe])
            #expect(sick.status != 0)
            serve.signal(SIGTERM)
            _ = serve.wait()
            let gone = try Run.program("/bin/bash", ["-c", probe])
            #expect(gone.status != 0)
        }
    }

    @Test("the reader-login script is safe to run again and changes the password it is given")
    func readerLoginScriptIsIdempotent() throws {
        try TestPostgres.withDatabase { db in
            let login = "reader_again_\(getpid())"
            let first = try FilledDatabase.runReaderLoginScript(on: db, login: login, password: "first-password")
            #expect(first.contains("\(login) can log in"))
            let before = try db.scalar("SELECT rolpassword FROM pg_authid WHERE rolname = $1", [login], as: String.self)
            try FilledDatabase.runReaderLoginScript(on: db, login: login, password: "second-password")
            let after = try db.scalar("SELECT rolpassword FROM pg_authid WHERE rolname = $1", [login], as: String.self)
            #expect(before != nil && after != nil && before != after)
            let roles = try db.query("""
                SELECT r.rolcanlogin, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
                       array(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid)::text
                FROM pg_roles r WHERE r.rolname = $1
                """, [login])
            #expect(roles.first?[0] == "t" && roles.first?[1] == "f" && roles.first?[2] == "f" && roles.first?[3] == "f")
            #expect(roles.first?[4] == "{health_reader}", "granted health_reader and nothing else")
            // A password with quotes and a semicolon is a value, not SQL.
            try FilledDatabase.runReaderLoginScript(on: db, login: login, password: "it's; DROP ROLE x; --")
            #expect(try db.scalar("SELECT count(*) FROM pg_roles WHERE rolname = $1", [login], as: Int.self) == 1)
            try db.query("DROP OWNED BY \(login)")
            try db.query("DROP ROLE \(login)")
        }
    }

    @Test("the read-only login reads health.* and nothing else, and cannot write")
    func readerIsReadOnly() throws {
        let db = try FilledDatabase.get()
        let connection = try db.connectAsReader()
        defer { connection.close() }
        #expect(try connection.query("SELECT count(*) FROM health.samples").first?[0].flatMap(Int.init) ?? 0 > 1000)
        #expect(try connection.query("SHOW default_transaction_read_only").first?[0] == "on")
        // The tokens' hashes: on Citus the reader may read who holds a token (the person column,
        // which health.settings lists: docs/scaling.md, "Reading"), never the hashes.
        for statement in ["SELECT count(*) FROM health_store.samples", "SELECT token_sha256 FROM health_store.tokens",
                          "SELECT health.set_time_zone('me', 'UTC')", "CREATE TABLE health.x (a int)"] {
            do {
                _ = try connection.query(statement)
                Issue.record("the read-only login could run: \(statement)")
            } catch let error as PostgresError {
                #expect(["42501", "25006"].contains(error.sqlState ?? ""), "\(statement): \(error)")
            }
        }
    }

    // MARK: - Hardening

    @Test("warehouse and ingest connect as the owner role the owner-role job makes from the same .env names, never as the superuser")
    func ownerRoleInCompose() throws {
        let compose = try ComposeFile.load()
        let job = try #require(compose.service("owner-role"))
        #expect(job["command"]?.strings == ["sh", "/deploy/postgres/owner-role.sh"])
        #expect(job["volumes"]?.strings == ["./deploy:/deploy:ro"])
        #expect(Repository.exists("deploy/postgres/owner-role.sh"))
        let owner = try compose.interpolate(try #require(job["environment"]?["OWNER_LOGIN"]?.string))
        let superuser = try compose.interpolate(try #require(job["environment"]?["PGUSER"]?.string))
        #expect(owner == "health_owner")
        #expect(superuser == "health" && superuser != owner, "the job runs as the superuser; the warehouse does not")
        #expect(try compose.interpolate(try #require(job["environment"]?["PGPASSWORD"]?.string)) == compose.exampleEnvironment["POSTGRES_PASSWORD"])
        for name in Self.warehouseServices {
            let environment = try #require(compose.service(name)?["environment"])
            let url = try compose.interpolate(try #require(environment["DATABASE_URL"]?.string))
            #expect(url.hasSuffix(" user=\(owner)"), "\(name): \(url)")
            #expect(environment["PGPASSWORD"] == job["environment"]?["OWNER_PASSWORD"], "\(name) logs in with the owner's password")
            #expect(!environment.scalars().contains { $0.value.contains("POSTGRES_USER") || $0.value.contains("POSTGRES_PASSWORD") },
                    "\(name) knows nothing of the superuser")
        }
    }

    @Test("owner-role.sh makes a login without superuser, role or database rights that migrates a fresh database, owns both schemas, and stores a batch")
    func ownerRoleOnFreshDatabase() throws {
        try TestPostgres.withDatabase(migrated: false) { db in
            let owner = "owner_fresh_\(getpid())"
            let output = try Self.runOwnerRoleScript(on: db, owner: owner, password: "owner-password-1")
            #expect(output.contains("\(owner) owns schemas health and health_store"))
            defer { Self.dropRole(owner, in: db) }
            let role = try db.query("""
                SELECT r.rolcanlogin, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls,
                       array(SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid
                             ORDER BY g.rolname COLLATE "C")::text
                FROM pg_roles r WHERE r.rolname = $1
                """, [owner])
            #expect(role.first.map { row in (0..<7).map { row[$0] ?? "" } } == ["t", "f", "f", "f", "f", "f", "{health_reader,health_sql_reader}"],
                    "a member of health_reader, for the page's reader connections, and of health_sql_reader, to hand it the assistant's query")
            #expect(try db.scalar("SELECT count(*) FROM pg_roles WHERE rolname IN ('health_reader', 'health_sql_reader') AND NOT rolcanlogin",
                                  as: Int.self) == 2,
                    "health_reader and health_sql_reader exist before the first migration, which the owner could not create them in")
            #expect(try db.scalar("SELECT pg_has_role('health_sql_reader', 'health_reader', 'USAGE')", as: Bool.self) == true)

            let ownerURL = Libpq.with(db.connectionString, user: owner, password: "owner-password-1")
            let migrate = try CLIProcess.run(["migrate", "--database-url", ownerURL])
            #expect(migrate.status == 0, "\(migrate.stderr)")
            #expect(try Self.schemaObjectsNotOwned(by: owner, in: db) == [])
            #expect(try db.scalar("SELECT string_agg(nspowner::regrole::text, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname IN ('health', 'health_store')",
                                  as: String.self) == "\(owner),\(owner)")
            try Self.storeOneBatch(as: ownerURL)
            #expect(try db.scalar("SELECT steps FROM health.daily_summary WHERE person = 'default'", as: Int.self) == 42)
            try Self.expectPage(as: ownerURL)
        }
    }

    /// Starts `serve` on `url` and expects the page (open on loopback with no token) to read as health_reader.
    static func expectPage(as url: String) throws {
        let (serve, port) = try CLIProcess.startServe(["--database-url", url])
        let page = try HTTPTestClient.request(port: port, path: "/ui/days/365")
        serve.signal(SIGTERM)
        let log = serve.wait().stderr
        #expect(page.status == 200 && page.bodyText.contains("Signed in as <strong>default</strong>"), "\(page.status) \(log)")
        #expect(!log.contains("ui.unavailable") && !log.contains("ui.failed"), "\(log)")
    }

    @Test("on a database migrated as the superuser, owner-role.sh hands every object of both schemas to the owner, keeps the reader's grants, and a second run changes nothing")
    func ownerRoleTakesOverAnUpgradedDatabase() throws {
        try TestPostgres.withDatabase { db in
            let owner = "owner_upgrade_\(getpid())"
            let reader = "reader_upgrade_\(getpid())"
            try FilledDatabase.runReaderLoginScript(on: db, login: reader, password: "reader-password")
            defer {
                _ = try? db.query("DROP OWNED BY \(reader)")
                _ = try? db.query("DROP ROLE \(reader)")
            }
            #expect(try Self.schemaObjectsNotOwned(by: owner, in: db).count > 50, "everything belongs to the superuser before")
            try Self.runOwnerRoleScript(on: db, owner: owner, password: "owner-password-2")
            defer { Self.dropRole(owner, in: db) }
            #expect(try Self.schemaObjectsNotOwned(by: owner, in: db) == [])

            // A second run finds nothing to hand over: no catalog row of the two schemas changes.
            let catalog = """
                SELECT string_agg(c.oid::text || ':' || c.xmin::text, ',' ORDER BY c.oid) FROM pg_class c
                WHERE c.relnamespace IN ('health'::regnamespace, 'health_store'::regnamespace)
                """
            let before = try db.scalar(catalog, as: String.self)
            try Self.runOwnerRoleScript(on: db, owner: owner, password: "owner-password-2")
            #expect(try db.scalar(catalog, as: String.self) == before)

            let ownerURL = Libpq.with(db.connectionString, user: owner, password: "owner-password-2")
            let migrate = try CLIProcess.run(["migrate", "--database-url", ownerURL])
            #expect(migrate.status == 0 && migrate.stdout.isEmpty, "\(migrate.stdout)\(migrate.stderr)")
            try Self.storeOneBatch(as: ownerURL)
            let connection = try PostgresConnection(connectionString: Libpq.with(db.connectionString, user: reader, password: "reader-password"))
            defer { connection.close() }
            #expect(try connection.query("SELECT steps FROM health.daily_summary WHERE person = 'default'").first?[0] == "42")
        }
    }

    @Test("every service: no-new-privileges, every capability dropped (db adds back only what its entrypoint needs), a read-only root but Grafana's")
    func hardening() throws {
        let compose = try ComposeFile.load()
        for name in compose.serviceNames {
            let service = try #require(compose.service(name))
            #expect(service["security_opt"]?.strings == ["no-new-privileges:true"], "\(name)")
            #expect(service["cap_drop"]?.strings == ["ALL"], "\(name)")
            #expect(service["privileged"] == nil && service["network_mode"] == nil && service["pid"] == nil, "\(name)")
            if name == "db" {
                #expect(service["cap_add"]?.strings.sorted() == ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"])
                #expect(service["tmpfs"]?.strings.contains("/var/run/postgresql") == true, "the server's socket folder")
            } else {
                #expect(service["cap_add"] == nil, "\(name)")
            }
            #expect(service["read_only"]?.string == (name == "grafana" ? nil : "true"), "\(name)")
        }
        for name in Self.warehouseServices {
            #expect(compose.service(name)?["tmpfs"]?.strings == ["/tmp"], "\(name): the image's working directory")
            #expect(compose.service(name)?["user"] == nil, "\(name) runs as the image's unprivileged user")
        }
        for job in ["owner-role", "reader-login"] {
            #expect(compose.service(job)?["user"]?.string == "postgres", "\(job) runs psql as an unprivileged user")
        }
    }

    @Test("the receiver, the database and Grafana are published on loopback unless .env names another address; the docs show the TLS proxy way out")
    func loopback() throws {
        let compose = try ComposeFile.load()
        let warehouse = try #require(compose.service("warehouse"))
        let published = try #require(reportedPorts(warehouse).first)
        #expect(try compose.interpolate(published, defaultsOnly: true) == "127.0.0.1:8080:8080")
        #expect(try compose.interpolate(published) == "127.0.0.1:8080:8080", ".env.example keeps the default")
        for name in compose.serviceNames {
            let service = try #require(compose.service(name))
            for port in reportedPorts(service) {
                #expect(try compose.interpolate(port).hasPrefix("127.0.0.1:"), "\(name): \(port)")
                #expect(try compose.interpolate(port, defaultsOnly: true).hasPrefix("127.0.0.1:"), "\(name): \(port)")
            }
        }
        let exposing = try Repository.text("docs/exposing.md")
        #expect(exposing.contains("reverse_proxy 127.0.0.1:8080"))
        #expect(exposing.contains("proxy_pass http://127.0.0.1:8080;"))
        // A Stridee workout may be 30 MiB; the proxies' own 413 would never be retried by the app.
        #expect(exposing.contains("@stridee path /v1/device/apple/* /v1/accounts/*") && exposing.contains("max_size 32MiB"))
        #expect(exposing.contains("location ~ ^/v1/(device/apple|accounts)/ {\n        client_max_body_size 32m;"))
        let docker = try Repository.text("docs/docker.md")
        #expect(docker.contains("(exposing.md)"))
        #expect(docker.contains("`127.0.0.1`") && docker.contains("WAREHOUSE_BIND"))
    }

    @Test("a change-me password from .env.example stops every service before it starts, naming the variable and never its value")
    func placeholders() throws {
        let compose = try ComposeFile.load()
        let script = "deploy/refuse-placeholders.sh"
        // Every service starts through the script: by its own entrypoint, or the image's.
        let dockerfile = try Dockerfile.load()
        let imageEntrypoint = try #require(try dockerfile.stages.last?.arguments(of: "ENTRYPOINT").first.map(Dockerfile.execForm))
        #expect(dockerfile.stages.last?.arguments(of: "COPY").contains("\(script) /usr/local/libexec/refuse-placeholders.sh") == true)
        // Prometheus is given no password and holds no secret: nothing for the script to check.
        for name in compose.serviceNames where name != "prometheus" {
            let service = try #require(compose.service(name))
            if Self.warehouseServices.contains(name) {
                #expect(service["entrypoint"] == nil, "\(name) keeps the image's entrypoint \(imageEntrypoint)")
            } else {
                #expect(Array((service["entrypoint"]?.strings ?? []).prefix(2)) == ["sh", "/deploy/refuse-placeholders.sh"], "\(name)")
                let mounts = service["volumes"]?.strings ?? []
                #expect(mounts.contains("./\(script):/deploy/refuse-placeholders.sh:ro") || mounts.contains("./deploy:/deploy:ro"), "\(name)")
            }
            // With .env.example as it is, each service's own passwords stop it.
            var passwords: [String: String] = [:]
            for (key, value) in service["environment"]?.pairs ?? [] where key.contains("PASSWORD") {
                #expect(key.hasSuffix("PASSWORD"), "\(name).\(key): the script checks names ending in PASSWORD")
                passwords[key] = try compose.interpolate(value.string ?? "")
            }
            #expect(!passwords.isEmpty, "\(name) is given a password")
            let refused = try Self.runRefusePlaceholders(passwords)
            #expect(refused.status == 78, "\(name): \(refused.output)")
            for (key, value) in passwords {
                #expect(refused.output.contains(key), "\(name): names \(key)")
                #expect(!refused.output.contains(value), "\(name): never prints a password")
            }
            #expect(!refused.output.contains("started"))
        }
        // Real passwords pass, and the command runs with its arguments.
        let accepted = try Self.runRefusePlaceholders(["PGPASSWORD": "x7Gq2vLr9", "GRAFANA_ADMIN_PASSWORD": "chance-me-not 4Hq"])
        #expect(accepted.status == 0)
        #expect(accepted.output == "started now\n")
    }

    @Test("the placeholder check refuses every case and spelling of changeme, wherever it stands in the value", arguments: [
        "changeme", "CHANGEME", "change-me", "change_me", "Change Me", "ChangeMe123", "change.me", "please-change-me", "it's change-me later",
        "CHANGE-ME-database-superuser",
    ])
    func placeholderSpellings(password: String) throws {
        let refused = try Self.runRefusePlaceholders(["OWNER_PASSWORD": password])
        #expect(refused.status == 78, "\(password)")
        #expect(refused.output.contains("OWNER_PASSWORD") && !refused.output.contains(password))
    }

    /// Runs deploy/postgres/owner-role.sh against a test database as its superuser.
    @discardableResult
    static func runOwnerRoleScript(on database: TestDatabase, owner: String, password: String) throws -> String {
        var environment = try Libpq.environment(of: database.connectionString)
        environment["OWNER_LOGIN"] = owner
        environment["OWNER_PASSWORD"] = password
        environment["PATH"] = try Psql.binary().deletingLastPathComponent().path + ":/usr/bin:/bin"
        let result = try Run.program("/usr/bin/env", ["-i"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                                     + ["/bin/sh", Repository.url("deploy/postgres/owner-role.sh").path])
        guard result.status == 0 else { throw DeploymentTestError("owner-role.sh exited \(result.status): \(result.output)") }
        return result.output
    }

    /// deploy/refuse-placeholders.sh with only `passwords` in its environment, running `echo started now`.
    static func runRefusePlaceholders(_ passwords: [String: String]) throws -> ProcessRunner.Result {
        try Run.program("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin"] + passwords.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                        + ["/bin/sh", Repository.url("deploy/refuse-placeholders.sh").path, "echo", "started", "now"])
    }

    /// Objects of schemas health and health_store (and the schemas) owned by anyone but `owner`
    /// (health.query_as_reader belongs to health_sql_reader on purpose: it runs as that role).
    static func schemaObjectsNotOwned(by owner: String, in database: TestDatabase) throws -> [String] {
        try database.query("""
            SELECT 'schema ' || nspname FROM pg_namespace
            WHERE nspname IN ('health', 'health_store') AND nspowner::regrole::text <> $1
            UNION ALL
            SELECT 'relation ' || c.oid::regclass::text FROM pg_class c
            WHERE c.relnamespace IN ('health'::regnamespace, 'health_store'::regnamespace) AND c.relowner::regrole::text <> $1
            UNION ALL
            SELECT 'function ' || p.oid::regprocedure::text FROM pg_proc p
            WHERE p.pronamespace IN ('health'::regnamespace, 'health_store'::regnamespace) AND p.proowner::regrole::text <> $1
              AND NOT (p.oid = 'health.query_as_reader(text, integer)'::regprocedure AND p.proowner = 'health_sql_reader'::regrole)
            UNION ALL
            SELECT 'type ' || t.oid::regtype::text FROM pg_type t
            WHERE t.typnamespace IN ('health'::regnamespace, 'health_store'::regnamespace) AND t.typowner::regrole::text <> $1
            ORDER BY 1
            """, [owner]).compactMap { $0[0] }
    }

    /// Starts `serve` on `url`, posts the README's one-sample batch and expects `200`.
    static func storeOneBatch(as url: String) throws {
        let (serve, port) = try CLIProcess.startServe(["--database-url", url])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait()
        }
        let body = Bodies.json(samples: [Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-000000000001", start: "2026-08-21T10:25:30.000+02:00",
                                                         value: "42")])
        let response = try HTTPTestClient.request(port: port, method: "POST", headers: [("Content-Type", "application/json")], body: body)
        #expect(response.status == 200, "\(response.bodyText)")
    }

    /// Drops a role the test made, with what it owns in the test's database.
    static func dropRole(_ role: String, in database: TestDatabase) {
        _ = try? database.query("REASSIGN OWNED BY \(role) TO CURRENT_USER")
        _ = try? database.query("DROP OWNED BY \(role)")
        _ = try? database.query("DROP ROLE \(role)")
    }

    func reportedPorts(_ service: YAMLNode) -> [String] { service["ports"]?.strings ?? [] }
}

extension Libpq {
    /// The same server with another database.
    static func database(_ connectionString: String, _ name: String) -> String {
        guard let info = try? PostgresConnectionInfo(parsing: connectionString) else { return connectionString }
        return info.setting("dbname", to: name).connectionString
    }
}
