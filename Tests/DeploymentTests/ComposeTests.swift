import Foundation
import Postgres
import Testing
import TestSupport

/// compose.yaml, .env.example, .dockerignore and the documented docker lines: the services and
/// their order of start, no secret in the file, and every command line they run accepted by
/// the binary's own parser (`health-warehouse --parse-only …`).
@Suite("Docker Compose")
struct ComposeTests {
    static let warehouseServices = ["warehouse", "ingest"]

    @Test("the services: db, warehouse, the reader login, grafana, and ingest behind the backlog profile")
    func services() throws {
        let compose = try ComposeFile.load()
        #expect(compose.serviceNames == ["db", "warehouse", "reader-login", "grafana", "ingest"])
        #expect(compose.root["version"] == nil, "the obsolete version key makes Compose warn")
        #expect(compose.root["volumes"]?.keys == ["db-data", "grafana-data"])
        for name in compose.serviceNames where name != "ingest" {
            #expect(compose.service(name)?["profiles"] == nil, "\(name) starts with a plain `up`")
        }
        #expect(compose.service("ingest")?["profiles"]?.strings == ["backlog"])
        for name in ["db", "warehouse", "grafana", "ingest"] {
            #expect(compose.service(name)?["restart"]?.string == "unless-stopped", "\(name)")
        }
        #expect(compose.service("reader-login")?["restart"]?.string == "no", "a one-shot job")
    }

    @Test("db: the official postgres image, 16 or newer, on a named volume, with a pg_isready healthcheck")
    func database() throws {
        let compose = try ComposeFile.load()
        let db = try #require(compose.service("db"))
        let image = try #require(db["image"]?.string)
        #expect(image.hasPrefix("postgres:"))
        let major = Int(image.dropFirst("postgres:".count).prefix { $0.isNumber }) ?? 0
        #expect(major >= 16, "\(image)")
        #expect(db["volumes"]?.strings == ["db-data:/var/lib/postgresql/data"])
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
            "warehouse": ["db": "service_healthy"],
            "reader-login": ["db": "service_healthy"],
            "grafana": ["db": "service_healthy", "reader-login": "service_completed_successfully"],
            "ingest": ["db": "service_healthy"],
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

    @Test("warehouse: built from the Dockerfile, serves on 0.0.0.0:8080 after migrating, DATABASE_URL without the password")
    func warehouse() throws {
        let compose = try ComposeFile.load()
        let warehouse = try #require(compose.service("warehouse"))
        #expect(warehouse["build"]?.string == ".")
        #expect(warehouse["image"]?.string == compose.service("ingest")?["image"]?.string, "ingest runs the same image")
        #expect(Array((warehouse["command"]?.strings ?? []).prefix(3)) == ["serve", "--listen", "0.0.0.0:8080"])
        let url = try compose.interpolate(try #require(warehouse["environment"]?["DATABASE_URL"]?.string))
        #expect(url == "host=db port=5432 dbname=health user=health")
        #expect(!url.contains("password") && !url.contains("@"), "the password travels in PGPASSWORD")
        #expect(warehouse["environment"]?["PGPASSWORD"]?.string?.hasPrefix("${POSTGRES_PASSWORD") == true)
        #expect(reportedPorts(warehouse) == ["${WAREHOUSE_BIND:-0.0.0.0}:${WAREHOUSE_PORT:-8080}:8080"])
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
        #expect(try runtime.arguments(of: "ENTRYPOINT").map(Dockerfile.execForm) == [["health-warehouse"]])
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
        for statement in ["SELECT count(*) FROM health_store.samples", "SELECT count(*) FROM health_store.tokens",
                          "SELECT health.set_time_zone('me', 'UTC')", "CREATE TABLE health.x (a int)"] {
            do {
                _ = try connection.query(statement)
                Issue.record("the read-only login could run: \(statement)")
            } catch let error as PostgresError {
                #expect(["42501", "25006"].contains(error.sqlState ?? ""), "\(statement): \(error)")
            }
        }
    }

    @Test("the YAML reader handles the constructs the deploy files use, and refuses the rest")
    func miniYAML() throws {
        let yaml = try MiniYAML.parse("""
            # comment
            a: plain value # trailing comment
            b: "double \\"quoted\\" # not a comment"
            c: 'single ''quoted'''
            d: ["x", 'y', z]
            e:
              - one
              - key: value
                other: 2
            f:
            - same-indent item
            g:
            """)
        #expect(yaml["a"]?.string == "plain value")
        #expect(yaml["b"]?.string == #"double "quoted" # not a comment"#)
        #expect(yaml["c"]?.string == "single 'quoted'")
        #expect(yaml["d"]?.strings == ["x", "y", "z"])
        #expect(yaml["e"]?[0]?.string == "one")
        #expect(yaml["e"]?[1]?["other"]?.string == "2")
        #expect(yaml["f"]?.strings == ["same-indent item"])
        #expect(yaml["g"] == .null)
        #expect(throws: YAMLError.self) { try MiniYAML.parse("a: &anchor 1") }
        #expect(throws: YAMLError.self) { try MiniYAML.parse("a: {b: 1}") }
        #expect(throws: YAMLError.self) { try MiniYAML.parse("a: |\n  text") }
        #expect(throws: YAMLError.self) { try MiniYAML.parse("a: 1\na: 2") }
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
