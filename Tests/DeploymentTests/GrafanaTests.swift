import Foundation
import Postgres
import Testing
import TestSupport

/// The Grafana provisioning: the datasource and dashboard provider have the shapes Grafana
/// reads, and every query of the dashboard runs, with Grafana's macros expanded as Grafana
/// expands them, as the read-only login over realistic data.
@Suite("Grafana provisioning and dashboard")
struct GrafanaTests {
    static let dashboardPath = "deploy/grafana/dashboards/health-warehouse.json"
    static let datasourceUID = "health-warehouse"

    // MARK: - Provisioning files

    @Test("the datasource is PostgreSQL, logs in as the read-only login, and takes every secret from the environment")
    func datasource() throws {
        let yaml = try YAML.parse(try Repository.text("deploy/grafana/provisioning/datasources/health-warehouse.yaml"))
        #expect(yaml["apiVersion"]?.string == "1")
        let sources = yaml["datasources"]?.items ?? []
        #expect(sources.count == 1)
        let source = try #require(sources.first)
        #expect(["grafana-postgresql-datasource", "postgres"].contains(source["type"]?.string ?? ""))
        #expect(source["uid"]?.string == Self.datasourceUID)
        #expect(source["access"]?.string == "proxy")
        #expect(source["url"]?.string == "${HW_DB_HOST}")
        #expect(source["user"]?.string == "${HW_DB_USER}")
        #expect(source["jsonData"]?["database"]?.string == "${HW_DB_NAME}")
        #expect(["disable", "require", "verify-ca", "verify-full"].contains(source["jsonData"]?["sslmode"]?.string ?? ""))
        #expect(source["secureJsonData"]?["password"]?.string == "${HW_DB_PASSWORD}")
        #expect(source["password"] == nil, "a password belongs in secureJsonData")
        // Every variable it reads is set on the grafana service, from .env.
        let compose = try ComposeFile.load()
        let environment = compose.service("grafana")?["environment"]
        for reference in ComposeFile.references(in: yaml.scalars().map(\.value).joined(separator: "\n")) {
            #expect(environment?[reference.name] != nil, "grafana's environment sets \(reference.name)")
        }
        #expect(environment?["HW_DB_USER"]?.string == "${GRAFANA_DB_USER:-grafana_reader}")
        #expect(environment?["HW_DB_PASSWORD"]?.string?.hasPrefix("${GRAFANA_DB_PASSWORD") == true)
    }

    @Test("the dashboard provider loads a folder that compose mounts from deploy/grafana/dashboards")
    func dashboardProvider() throws {
        let yaml = try YAML.parse(try Repository.text("deploy/grafana/provisioning/dashboards/health-warehouse.yaml"))
        #expect(yaml["apiVersion"]?.string == "1")
        let provider = try #require(yaml["providers"]?[0])
        #expect(provider["type"]?.string == "file")
        #expect(provider["name"]?.string?.isEmpty == false)
        let path = try #require(provider["options"]?["path"]?.string)
        let compose = try ComposeFile.load()
        let grafana = try #require(compose.service("grafana"))
        let mounts = grafana["volumes"]?.strings ?? []
        #expect(mounts.contains("./deploy/grafana/dashboards:\(path):ro"), "\(mounts)")
        #expect(mounts.contains("./deploy/grafana/provisioning/dashboards:/etc/grafana/provisioning/dashboards:ro"))
        #expect(mounts.contains("./deploy/grafana/provisioning/datasources:/etc/grafana/provisioning/datasources:ro"))
        #expect(try Repository.files(in: "deploy/grafana/dashboards", withExtension: "json") == ["health-warehouse.json"])
        #expect(grafana["environment"]?["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]?.string == path + "/health-warehouse.json")
    }

    // MARK: - Dashboard shape

    static func dashboard() throws -> [String: Any] {
        let data = try Data(contentsOf: Repository.url(dashboardPath))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw DeploymentTestError("\(dashboardPath) is not a JSON object")
        }
        return object
    }

    /// Every panel, rows' nested panels included.
    static func panels() throws -> [[String: Any]] {
        let top = try dashboard()["panels"] as? [[String: Any]] ?? []
        return top + top.flatMap { $0["panels"] as? [[String: Any]] ?? [] }
    }

    struct Query: CustomStringConvertible, Sendable {
        var panel: String
        var panelType: String
        var format: String
        var sql: String
        var description: String { panel }
    }

    static var queries: [Query] {
        ((try? panels()) ?? []).flatMap { panel in
            (panel["targets"] as? [[String: Any]] ?? []).map {
                Query(panel: panel["title"] as? String ?? "?", panelType: panel["type"] as? String ?? "?",
                      format: $0["format"] as? String ?? "", sql: $0["rawSql"] as? String ?? "")
            }
        }
    }

    @Test("the dashboard has a uid, shows days in UTC (they are local dates already), and a person variable from health.settings")
    func dashboardShape() throws {
        let dashboard = try Self.dashboard()
        #expect(dashboard["uid"] as? String == "health-warehouse")
        #expect(dashboard["title"] as? String == "Health Warehouse")
        #expect(dashboard["timezone"] as? String == "utc")
        let variables = (dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let person = try #require(variables.first { $0["name"] as? String == "person" })
        #expect(person["type"] as? String == "query")
        #expect((person["datasource"] as? [String: Any])?["uid"] as? String == Self.datasourceUID)
        #expect((person["query"] as? String)?.contains("FROM health.settings") == true)
        #expect(person["multi"] as? Bool == false && person["includeAll"] as? Bool == false)
    }

    @Test("the panels a user wants on day one are there")
    func panelInventory() throws {
        let titles = try Self.panels().compactMap { $0["title"] as? String }
        for wanted in ["Steps per day, by winning source", "Active energy per day, by winning source", "Sleep stages per night",
                       "Resting heart rate, with 7-day mean", "HRV (SDNN), with 7-day mean", "Heart rate per day: lowest, mean, highest",
                       "Weight", "Workouts per week, by activity", "Every workout", "Last batch received", "Newest sample", "Batches",
                       "Delivery status", "Quarantined samples", "Unknown types", "Incomplete export runs"] {
            #expect(titles.contains(wanted), "panel \(wanted)")
        }
        let ids = try Self.panels().compactMap { $0["id"] as? Int }
        #expect(Set(ids).count == ids.count, "panel ids are unique")
        #expect(Set(titles).count == titles.count, "panel titles are unique")
        // Panels sit inside the 24-column grid without covering each other.
        var taken: [String: String] = [:]
        for panel in try Self.panels() {
            let grid = panel["gridPos"] as? [String: Int] ?? [:]
            let (x, y, w, h) = (grid["x"] ?? -1, grid["y"] ?? -1, grid["w"] ?? 0, grid["h"] ?? 0)
            let title = panel["title"] as? String ?? ""
            #expect(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24, "\(title): gridPos \(grid)")
            for cx in x..<max(x, x + w) {
                for cy in y..<max(y, y + h) {
                    if let other = taken.updateValue(title, forKey: "\(cx),\(cy)") { Issue.record("\(title) covers \(other)") }
                }
            }
        }
    }

    @Test("nothing on the dashboard calls the data live or real-time")
    func honestWording() throws {
        var texts: [String] = []
        let dashboard = try Self.dashboard()
        texts += [dashboard["title"], dashboard["description"]].compactMap { $0 as? String }
        for panel in try Self.panels() {
            texts += [panel["title"], panel["description"]].compactMap { $0 as? String }
            texts += [(panel["options"] as? [String: Any])?["content"] as? String].compactMap { $0 }
        }
        texts += Self.queries.map(\.sql)
        for text in texts {
            #expect(!ReadyQueryTests.saysLive(text), "\(text)")
        }
        #expect(dashboard["liveNow"] == nil || dashboard["liveNow"] as? Bool == false)
        #expect((dashboard["refresh"] as? String ?? "").isEmpty, "no auto-refresh suggesting a stream")
    }

    @Test("every query reads health.* only, through the provisioned datasource, filtered to $person", arguments: queries)
    func queryShape(query: Query) throws {
        #expect(!query.sql.isEmpty)
        #expect(!query.sql.contains("health_store"), "\(query.panel)")
        #expect(query.sql.contains("${person:sqlstring}"), "\(query.panel): filter by the person variable, quoted by Grafana")
        #expect(["time_series", "table"].contains(query.format))
        if query.sql.lowercased().contains("avg(") {
            #expect(query.sql.contains("is_partial"), "\(query.panel): averages leave partial days out")
        }
        if query.panelType == "timeseries" {
            #expect(query.format == "time_series")
            #expect(query.sql.contains(#"AS "time""#))
        }
        for panel in try Self.panels() where panel["title"] as? String == query.panel && panel["targets"] != nil {
            #expect((panel["datasource"] as? [String: Any])?["uid"] as? String == Self.datasourceUID)
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                #expect((target["datasource"] as? [String: Any])?["uid"] as? String == Self.datasourceUID)
                #expect(target["rawQuery"] as? Bool == true)
            }
        }
    }

    // MARK: - Running the queries

    /// Grafana's expansion (pkg/tsdb/grafana-postgresql-datasource/macros.go): UTC instants in
    /// RFC 3339 with nanoseconds trimmed; ${person:sqlstring} quotes and doubles quotes.
    /// `workout` is the value of the dashboard's workout variable (`defaultWorkout`).
    static func expand(_ sql: String, person: String, from: Date, to: Date, workout: String = "") throws -> String {
        func rfc3339(_ date: Date) -> String {
            let seconds = date.timeIntervalSince1970.rounded(.down)
            let millis = Int(((date.timeIntervalSince1970 - seconds) * 1000).rounded(.down))
            let base = FilledDatabase.utcStamp(Date(timeIntervalSince1970: seconds)).dropLast(5)  // …:SS
            return millis == 0 ? base + "Z" : base + String(format: ".%03d", millis).replacingOccurrences(of: #"0+$"#, with: "", options: .regularExpression) + "Z"
        }
        func quoted(_ value: String) -> String { "'" + value.replacingOccurrences(of: "'", with: "''") + "'" }
        var out = sql.replacingOccurrences(of: "${person:sqlstring}", with: quoted(person))
            .replacingOccurrences(of: "${workout:sqlstring}", with: quoted(workout))
        let filter = try NSRegularExpression(pattern: #"\$__timeFilter\(([^)]*)\)"#)
        out = filter.stringByReplacingMatches(in: out, range: NSRange(out.startIndex..., in: out),
                                              withTemplate: "$1 BETWEEN '\(rfc3339(from))' AND '\(rfc3339(to))'")
        out = out.replacingOccurrences(of: "$__timeFrom()", with: "'\(rfc3339(from))'")
        out = out.replacingOccurrences(of: "$__timeTo()", with: "'\(rfc3339(to))'")
        // Grafana fails a query on any other $__macro(…) or variable: so does this test.
        if let leftover = out.range(of: #"\$[A-Za-z_{]"#, options: .regularExpression) {
            throw DeploymentTestError("unexpanded macro or variable at \(out[leftover.lowerBound...].prefix(30))")
        }
        return out
    }

    @Test("every dashboard query runs as the read-only login over the last 30 days and answers rows", arguments: queries)
    func queryRuns(query: Query) throws {
        let db = try FilledDatabase.get()
        let now = Date()
        let from = now.addingTimeInterval(-30 * 86_400 + 0.123)
        let connection = try db.connectAsReader()
        defer { connection.close() }
        let workout = try Self.defaultWorkout(connection, person: db.demo.person, from: from, to: now)
        let sql = try Self.expand(query.sql, person: db.demo.person, from: from, to: now, workout: workout)
        let rows = try connection.query(sql)
        #expect(!rows.isEmpty, "\(query.panel) answered no rows")
        if query.format == "time_series" {
            #expect(rows.columns.first == "time", "\(query.panel): time first")
            let times = rows.compactMap { $0[0] }
            #expect(times == times.sorted(), "\(query.panel): sorted by time")
            #expect(times.allSatisfy { $0.count >= 10 && $0 >= "2000" }, "\(query.panel): a timestamp in the time column")
            #expect(rows.columns.count >= 2)
        }
    }

    /// The dashboard's variable named `name`.
    static func variable(_ name: String) throws -> [String: Any] {
        let list = (try dashboard()["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        guard let found = list.first(where: { $0["name"] as? String == name }) else { throw DeploymentTestError("no variable \(name)") }
        return found
    }

    /// What Grafana selects in the workout variable when the dashboard opens: its first option.
    static func defaultWorkout(_ connection: PostgresConnection, person: String, from: Date, to: Date) throws -> String {
        let sql = try expand(try variable("workout")["query"] as? String ?? "", person: person, from: from, to: to)
        return try connection.query(sql).first?["__value"] ?? ""
    }

    @Test("the person variable lists every person, and each query keeps to the one chosen")
    func personVariable() throws {
        let db = try FilledDatabase.get()
        let connection = try db.connectAsReader()
        defer { connection.close() }
        let variable = try #require(((try Self.dashboard()["templating"] as? [String: Any])?["list"] as? [[String: Any]])?.first)
        let persons = try connection.query(variable["query"] as! String).compactMap { $0[0] }
        #expect(persons == [db.otherPerson, db.demo.person, db.stalePerson])
        // alex has steps only: the steps panel shows alex's phone, and no sleep at all.
        let now = Date()
        let steps = try #require(Self.queries.first { $0.panel == "Steps per day, by winning source" })
        let alexSteps = try connection.query(try Self.expand(steps.sql, person: db.otherPerson, from: now.addingTimeInterval(-30 * 86_400), to: now))
        #expect(alexSteps.count == 10)
        #expect(alexSteps.allSatisfy { $0[1] == "com.apple.health.ALEX-PHONE" })
        let sleep = try #require(Self.queries.first { $0.panel == "Sleep stages per night" })
        #expect(try connection.query(try Self.expand(sleep.sql, person: db.otherPerson, from: now.addingTimeInterval(-30 * 86_400), to: now)).isEmpty)
        // A name with a quote stays a value.
        #expect(try connection.query(try Self.expand(steps.sql, person: "o'brien", from: now.addingTimeInterval(-86_400), to: now)).isEmpty)
    }

    @Test("the stale hint panel shows the usual causes for a person who went quiet")
    func staleHint() throws {
        let db = try FilledDatabase.get()
        let connection = try db.connectAsReader()
        defer { connection.close() }
        let status = try #require(Self.queries.first { $0.panel == "Delivery status" })
        let now = Date()
        let quiet = try connection.query(try Self.expand(status.sql, person: db.stalePerson, from: now.addingTimeInterval(-86_400), to: now))
        let note = try #require(quiet.first?["\"Note\""], "PQfnumber folds unquoted names to lower case")
        for cause in ["Low Power Mode", "swiped away", "locked", "unreachable", "credential"] {
            #expect(note.contains(cause), "\(cause)")
        }
        let batches = try #require(Self.queries.first { $0.panel == "Batches" })
        #expect(try connection.query(try Self.expand(batches.sql, person: db.stalePerson, from: now, to: now)).first?[0] == "stale")
        #expect(try connection.query(try Self.expand(batches.sql, person: db.demo.person, from: now, to: now)).first?[0] == "arriving")
    }

    @Test("averages on the dashboard leave today out: the steps average equals the mean of the complete days")
    func averagesLeavePartialDaysOut() throws {
        let db = try FilledDatabase.get()
        let connection = try db.connectAsReader()
        defer { connection.close() }
        let average = try #require(Self.queries.first { $0.panel == "Steps per day, average" })
        let now = Date()
        let from = now.addingTimeInterval(-6.5 * 86_400)
        let value = try #require(Double(try connection.query(try Self.expand(average.sql, person: db.demo.person, from: from, to: now)).first?[0] ?? ""))
        // The days the macro's range covers, minus today.
        let calendarDays = db.demo.days.filter { $0 >= FilledDatabase.utcStamp(from).prefix(10) && $0 != db.demo.days.last }
        let winners = calendarDays.compactMap { db.demo.steps[$0]?.values.max() }
        #expect(!winners.isEmpty)
        #expect(abs(value - winners.reduce(0, +) / Double(winners.count)) < 0.01)
    }
}
