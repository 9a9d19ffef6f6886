import Foundation
import Postgres
import Testing
import TestSupport

/// The Stridee queries and panels over data with Stridee bodies (the same person's healthd
/// bodies and their Stridee twins): what they answer, against what the bodies imply.
@Suite("Stridee queries and panels")
struct StrideeDataTests {
    /// A Stridee body's JSON object.
    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw DeploymentTestError("a Stridee body is not a JSON object")
        }
        return object
    }

    /// The workout bodies of the filled database's person, by uuid.
    static func workoutBodies() throws -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for body in try FilledDatabase.get().demo.strideeBodies where body.endpoint == .workouts {
            let object = try Self.object(body.bytes)
            out[(object["uuid"] as? String ?? "").lowercased()] = object
        }
        return out
    }

    /// Seconds since the epoch of a timestamp as the bodies write them.
    static func seconds(_ text: String) -> Double {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)?.timeIntervalSince1970 ?? .nan
    }

    @Test("every watch workout is one workout with its Stridee twin: origin both, counted once, the rollups right")
    func oneWorkoutEach() throws {
        let db = try FilledDatabase.get()
        let bodies = try Self.workoutBodies()
        #expect(bodies.count >= 10)
        let rows = try db.database.query("SELECT uuid::text, origin, server_type FROM health.workouts WHERE person = $1", [db.demo.person])
        let twins = rows.filter { bodies[$0[0] ?? ""] != nil }
        #expect(twins.count == bodies.count, "each body's workout is held once")
        #expect(twins.allSatisfy { $0[1] == "both" })
        #expect(rows.count == db.demo.workoutCount, "the bodies add no workout of their own")
        #expect(try db.database.scalar("SELECT sum(workouts)::int FROM health.daily_workouts WHERE person = $1", [db.demo.person],
                                       as: Int.self) == db.demo.workoutCount)
        #expect(try db.database.scalar("SELECT count(*) FROM health_store.verify_rollups($1)", [db.demo.person], as: Int.self) == 0)
    }

    @Test("weekly running distance: every run with a Stridee body has its route, and the routes measure what those runs recorded")
    func weeklyRunningDistance() throws {
        let db = try FilledDatabase.get()
        let table = try ReadyQueryTests.run("routes_weekly_running_distance.sql", ["weeks": "12"])
        let runs = try Self.workoutBodies().values.filter { $0["serverType"] as? String == "RUNNING" }
        let allRuns = try db.database.scalar("SELECT count(*) FROM health.workouts WHERE person = $1 AND activity_name = 'running'",
                                             [db.demo.person], as: Int.self)
        #expect(table.column("runs").compactMap(Int.init).reduce(0, +) == allRuns, "the running app's copy of a run counts, without a route")
        #expect(table.column("runs_with_route").compactMap(Int.init).reduce(0, +) == runs.count)
        let routeKm = table.column("route_km").compactMap(Double.init).reduce(0, +)
        let recordedKm = runs.compactMap { $0["totalDistanceMeters"] as? Double }.reduce(0, +) / 1000
        #expect(abs(routeKm - recordedKm) <= 0.01 * recordedKm, "route \(routeKm) km, recorded \(recordedKm) km")
        #expect(table.column("elevation_gain_m").allSatisfy { (Double($0) ?? 0) > 0 })
    }

    @Test("time above a heart rate: the spans of the stream's samples at or above bpm, worked out from each body")
    func timeAbove() throws {
        let table = try ReadyQueryTests.run("heart_rate_time_above.sql", ["bpm": "150", "days": "60"])
        let bodies = try Self.workoutBodies()
        #expect(table.rows.count == bodies.values.filter { !($0["heartRate"] as? [[String: Any]] ?? []).isEmpty }.count)
        #expect(table.column("minutes_above").contains { (Double($0) ?? 0) > 0 }, "the runs go above 150")
        for row in table.records {
            let body = try #require(bodies[row["uuid"] ?? ""], "\(row)")
            let samples = (body["heartRate"] as? [[String: Any]] ?? []).map { (Self.seconds($0["t"] as? String ?? ""), $0["v"] as? Double ?? 0) }
            var above = 0.0, span = 0.0
            for (sample, next) in zip(samples, samples.dropFirst()) {
                span += next.0 - sample.0
                if sample.1 >= 150 { above += next.0 - sample.0 }
            }
            #expect(abs((Double(row["minutes_above"] ?? "") ?? -1) - above / 60) <= 0.05, "\(row)")
            #expect(abs((Double(row["stream_min"] ?? "") ?? -1) - span / 60) <= 0.05, "\(row)")
            #expect(Double(row["max_bpm"] ?? "") == samples.map(\.1).max())
        }
    }

    @Test("HealthKit check: the days the per-source winner and HealthKit's merge differ by more than 5 % are the watch's charging days' steps")
    func checkDifferences() throws {
        let db = try FilledDatabase.get()
        let table = try ReadyQueryTests.run("healthkit_check_differences.sql")
        var expected: [String] = []
        for body in db.demo.strideeBodies where body.endpoint == .wellness {
            for item in try Self.object(body.bytes)["items"] as? [[String: Any]] ?? [] where item["kind"] as? String == "daily" {
                let day = item["calendarDate"] as? String ?? ""
                guard let healthkit = item["steps"] as? Double, let winner = db.demo.steps[day]?.values.max() else { continue }
                if abs(winner.rounded() - healthkit) > 0.05 * healthkit { expected.append(day) }
            }
        }
        #expect(!expected.isEmpty, "the data has days one device missed")
        #expect(table.column("metric").allSatisfy { $0 == "steps" }, "the other totals come from one source each: no difference")
        #expect(table.column("day") == expected.sorted())
        for row in table.records {
            let difference = try #require(Double(row["difference"] ?? "")), healthkit = try #require(Double(row["healthkit_value"] ?? ""))
            #expect(difference < 0, "HealthKit fills the charging morning with the phone's steps: \(row)")
            #expect(abs(Double(row["difference_pct"] ?? "")! - (100 * difference / healthkit)) < 0.06)
        }
    }

    @Test("the workout variable offers workouts with a route or heart rate, newest first; the map and heart-rate panels show the one chosen")
    func chosenWorkoutPanels() throws {
        let db = try FilledDatabase.get()
        let connection = try db.connectAsReader()
        defer { connection.close() }
        let now = Date(), from = now.addingTimeInterval(-30 * 86_400)
        let options = try connection.query(try GrafanaTests.expand(GrafanaTests.variable("workout")["query"] as? String ?? "",
                                                                   person: db.demo.person, from: from, to: now))
        #expect(options.columns == ["__text", "__value"])
        let bodies = try Self.workoutBodies()
        #expect(options.count >= 4 && options.allSatisfy { bodies[$0[1] ?? ""] != nil })
        let chosen = try #require(options.first?[1])
        let newest = try #require(try connection.query("""
            SELECT uuid::text FROM health.workouts WHERE person = $1 AND (route_points > 0 OR heart_rate_max IS NOT NULL)
            ORDER BY start_at DESC LIMIT 1
            """, [db.demo.person]).first?[0])
        #expect(chosen == newest)
        // A run or ride with a route, to draw.
        let routed = try #require(options.first { ($0[0] ?? "").hasSuffix(" km") }?[1])
        func panel(_ title: String) throws -> String {
            try #require(GrafanaTests.queries.first { $0.panel == title }?.sql)
        }
        let map = try connection.query(try GrafanaTests.expand(try panel("Route of the chosen workout"), person: db.demo.person,
                                                               from: from, to: now, workout: routed))
        let route = try #require(bodies[routed]?["route"] as? [[String: Any]])
        #expect(map.count == route.count)
        #expect(map.compactMap { $0["latitude"].flatMap(Double.init) } == route.compactMap { $0["lat"] as? Double })
        #expect(map.compactMap { $0["longitude"].flatMap(Double.init) } == route.compactMap { $0["lon"] as? Double })
        let heart = try connection.query(try GrafanaTests.expand(try panel("Heart rate during the chosen workout"), person: db.demo.person,
                                                                 from: from, to: now, workout: routed))
        // PQfnumber folds unquoted names to lower case.
        let minutes = heart.compactMap { $0["\"Minutes\""].flatMap(Double.init) }
        #expect(minutes.count == (bodies[routed]?["heartRate"] as? [Any])?.count)
        #expect(minutes == minutes.sorted() && (minutes.first ?? -1) >= 0)
        // No workout chosen (none in the range): the panels answer nothing rather than fail.
        #expect(try connection.query(try GrafanaTests.expand(try panel("Route of the chosen workout"), person: db.demo.person,
                                                             from: from, to: now, workout: "")).isEmpty)
    }

    @Test("generated data: every Stridee workout merges into its healthd twin, and each route is as long as its workout")
    func generatedTwins() throws {
        let generated = try GeneratedDataTests.Generated.get()
        var routed = 0
        for (name, bytes) in generated.strideeBodies where name.contains("-workout-") {
            let body = try Self.object(bytes)
            let uuid = (body["uuid"] as? String ?? "").lowercased()
            let row = try #require(try generated.database.query("""
                SELECT origin, route_distance_m, (SELECT count(*) FROM health.workouts WHERE person = 'me' AND uuid = $1::uuid)
                FROM health.workouts WHERE person = 'me' AND uuid = $1::uuid
                """, [uuid]).first, "\(name)")
            #expect(row[0] == "both" && row[2] == "1", "\(name)")
            if let distance = body["totalDistanceMeters"] as? Double, !(body["route"] as? [Any] ?? []).isEmpty {
                routed += 1
                let measured = try #require(row[1].flatMap(Double.init))
                #expect(abs(measured - distance) <= 0.01 * distance, "\(name): route \(measured) m, workout \(distance) m")
            }
        }
        #expect(routed >= 4)
        #expect(try generated.database.scalar("SELECT count(*) FROM health.workouts WHERE person = 'me' AND origin = 'stridee'",
                                              as: Int.self) == 0)
        #expect(try generated.database.scalar("SELECT count(*) FROM health_store.verify_rollups('me')", as: Int.self) == 0)
        #expect(try generated.database.scalar("SELECT count(DISTINCT kind) FROM health.wellness WHERE person = 'me'", as: Int.self) == 9,
                "every kind of wellness item")
    }
}
