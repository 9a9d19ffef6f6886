import Foundation
import Postgres
import Testing
import TestSupport

/// PageBrowserTests' comparisons: the DOM's numbers against the views, as SQL.
extension PageBrowserTests {
    /// The day-by-day table's columns: header, the `daily_summary` expression, how the cell reads, tolerance.
    static let dayColumns: [(title: String, sql: String, read: @Sendable (String) -> Double?, tolerance: Double)] = [
        ("Steps (steps)", "steps", PageSeen.number, 0.5),
        ("Distance (km)", "distance_m / 1000", PageSeen.number, 0.0051),
        ("Active energy (kcal)", "active_energy_kcal", PageSeen.number, 0.5),
        ("Exercise (min)", "exercise_min", PageSeen.number, 0.5),
        ("Sleep (hours asleep)", "sleep_min", PageSeen.minutes, 0.5),
        ("Resting heart rate (bpm)", "resting_heart_rate", PageSeen.number, 0.5),
        ("Heart rate variability (SDNN) (ms)", "hrv_sdnn_ms", PageSeen.number, 0.5),
        ("Weight (kg)", "body_mass_kg", PageSeen.number, 0.051),
    ]

    /// The day before the person's last 30 (`health.today` less 30), read in a statement of its
    /// own: `health.today` reads a table, which on Citus cannot run inside a query on a shard
    /// (docs/scaling.md), so the checks' queries take the day as a parameter, as the page's do.
    static func monthAgo(_ db: TestDatabase, _ person: String) throws -> String {
        try #require(try db.scalar("SELECT (health.today($1) - 30)::text", [person], as: String.self))
    }

    /// `daily_summary` of the person's last 30 days, by day: one value per `dayColumns` entry.
    func summary(_ db: TestDatabase, person: String) throws -> [String: [Double?]] {
        let expressions = Self.dayColumns.map(\.sql).joined(separator: ", ")
        var out: [String: [Double?]] = [:]
        for row in try db.query("SELECT day::text, \(expressions) FROM health.daily_summary WHERE person = $1 AND day > $2::date",
                                [person, try Self.monthAgo(db, person)]) {
            out[try row.decode(0)] = try (1...Self.dayColumns.count).map { try row.decodeIfPresent($0, as: Double.self) }
        }
        return out
    }

    func checkDays(_ page: PageSeen.Page, db: TestDatabase, person: String) throws {
        let table = try #require(page.tables["days"])
        #expect(Array(table.head.dropFirst().prefix(Self.dayColumns.count)) == Self.dayColumns.map(\.title))
        #expect(table.rows.count == 30)
        let today = try db.scalar("SELECT health.today($1)::text", [person], as: String.self)
        #expect(table.rows.first?.day == today && table.rows.first?.partial == true && table.rows.first?.header?.hasSuffix("so far") == true)
        #expect(table.rows.dropFirst().allSatisfy { !$0.partial }, "only today is partial")
        let expected = try summary(db, person: person)
        var compared = 0, gaps = 0
        for row in table.rows {
            let day = try #require(row.day)
            for (index, column) in Self.dayColumns.enumerated() {
                let cell = row.cells[index]
                if let value = expected[day]?[index] {
                    let shown = try #require(column.read(cell.text), "\(day) \(column.title): \(cell.text)")
                    #expect(abs(shown - value) <= column.tolerance, "\(day) \(column.title): page \(cell.text), view \(value)")
                    #expect(!cell.gap)
                    compared += 1
                } else {
                    #expect(cell.gap && cell.text == "no data", "\(day) \(column.title) has no data in the view: \(cell.text)")
                    gaps += 1
                }
            }
        }
        #expect(compared > 200 && gaps > 10, "compared \(compared) values and \(gaps) gaps")
    }

    func checkSources(_ page: PageSeen.Page, db: TestDatabase, person: String) throws {
        let table = try #require(page.tables["sources"])
        var winners = 0
        for row in try db.query("""
            SELECT day::text, metric, source, alternatives::text FROM health.daily_totals
            WHERE person = $1 AND metric IN ('steps', 'sleep_min') AND day > $2::date
            """, [person, try Self.monthAgo(db, person)]) {
            let day: String = try row.decode(0), metric: String = try row.decode(1)
            let shown = try #require(table.rows.first { $0.day == day }, "no sources row for \(day)")
            let cell = shown.cells[metric == "steps" ? 0 : 4]
            let winner = try row.decode(2, as: String.self)
            #expect(cell.bold.flatMap { page.legend[$0] } == winner, "\(day) \(metric): \(cell.text)")
            let others = try JSONSerialization.jsonObject(with: Data(try row.decode(3, as: String.self).utf8)) as? [String: Any] ?? [:]
            for other in others.keys {
                let key = try #require(page.legend.first { $0.value == other }?.key, "\(other) not in the legend")
                #expect(cell.text.contains(" · \(key) "), "\(day) \(metric): alternative \(other) missing in \(cell.text)")
            }
            winners += 1
        }
        #expect(winners >= 50)
    }

    func checkChartsAndWorkouts(_ seen: PageSeen, db: TestDatabase, person: String) throws {
        let page = seen.me
        let expected = try summary(db, person: person)
        let today = try db.scalar("SELECT health.today($1)::text", [person], as: String.self) ?? "?"
        for (index, chart) in page.charts.enumerated() {
            #expect(chart.marks == expected.values.filter { $0[index] != nil }.count, "\(chart.caption)")
            #expect(chart.partial.allSatisfy { $0.hasPrefix(today + ": ") && $0.hasSuffix("(today, so far)") }, "\(chart.partial)")
        }
        // Today's steps drawn as partial once the day has any (the demo's steps start at 07:00
        // in Berlin, so a run before then sees none).
        #expect(page.charts.first?.partial.count == (expected[today]?[0] == nil ? 0 : 1), "today's steps drawn as partial")
        #expect(page.charts[7].marks < 30, "weight has gaps")
        let uuids = try db.query("""
            SELECT uuid::text FROM health.workouts WHERE person = $1 AND day > $2::date ORDER BY start_at DESC, uuid
            """, [person, try Self.monthAgo(db, person)]).map { try $0.decode(0, as: String.self) }
        #expect(page.tables["workout-list"]?.rows.map(\.uuid) == uuids.map(Optional.some))
        #expect(page.workoutTotals?.hasPrefix("\(uuids.count) workouts") == true, "\(page.workoutTotals ?? "")")
        let workout = try #require(seen.workout, "no workout with a route on the page")
        let uuid = try #require(seen.workoutURL?.split(separator: "/").last.map(String.init))
        let points = try db.scalar("SELECT route_points FROM health.workouts WHERE person = $1 AND uuid = $2::uuid", [person, uuid], as: Int.self)
        #expect(workout.routePoints == points && workout.routePoints > 1 && workout.heartRate)
        let last = try db.scalar("""
            SELECT to_char(last_received_at AT TIME ZONE 'Europe/Berlin', 'YYYY-MM-DD HH24:MI') FROM health.freshness WHERE person = $1
            """, [person], as: String.self)
        #expect(page.lastBatch?.hasPrefix((last ?? "?") + " (Europe/Berlin)") == true, "\(page.lastBatch ?? "")")
        let reason = try db.scalar("SELECT reason FROM health.quarantine WHERE person = $1", [person], as: String.self)
        #expect(page.leftOut?.contains("Quarantined: samples that broke the contract, kept aside with the reason: 1") == true)
        #expect(page.leftOut?.contains(reason ?? "?") == true)
        try checkHealthKit(page, db: db, person: person)
    }

    func checkHealthKit(_ page: PageSeen.Page, db: TestDatabase, person: String) throws {
        let table = try #require(page.tables["healthkit"])
        var checked = 0
        for row in try db.query("""
            SELECT day::text, warehouse_value, healthkit_value FROM health.daily_healthkit_check
            WHERE person = $1 AND metric = 'steps' AND day > $2::date
            """, [person, try Self.monthAgo(db, person)]) {
            let day: String = try row.decode(0)
            let cell = try #require(table.rows.first { $0.day == day }?.cells.first, "no HealthKit row for \(day)")
            let parts = cell.text.components(separatedBy: " · HealthKit ")
            let ours = try row.decode(1, as: Double.self).rounded(), theirs = try row.decode(2, as: Double.self).rounded()
            #expect(parts.count == 2 && PageSeen.number(parts[0]) == ours && PageSeen.number(parts.last ?? "") == theirs, "\(day): \(cell.text)")
            checked += 1
        }
        #expect(checked > 20)
    }

    func checkPersonsApart(_ seen: PageSeen, db: TestDatabase) throws {
        let alex = seen.alex
        #expect(alex.person == "alex")
        #expect(alex.legend.values.contains(Self.hostileSource), "the hostile source is named as text: \(alex.legend)")
        #expect(alex.bodyText.contains(Self.hostileWorkout))
        #expect(alex.scripts == 0 && !seen.alexAlert)
        #expect(!alex.bodyText.contains(HealthHistory.watch) && !alex.bodyText.contains(HealthHistory.phone))
        let days = try db.scalar("SELECT count(*) FROM health.daily_summary WHERE person = 'alex' AND day > $1::date",
                                 [try Self.monthAgo(db, "alex")], as: Int.self)
        let empty = alex.tables["days"]?.rows.filter { $0.cells.allSatisfy(\.gap) }.count
        #expect(empty == 30 - (days ?? 0) && (empty ?? 0) > 10, "days without data are gaps")
        #expect(seen.meAgain.person == "me")
        #expect(!seen.meAgain.bodyText.contains("ALEX-PHONE") && !seen.meAgain.bodyText.contains(Self.hostileSource))
    }
}
