import Foundation
import Postgres
import Testing
import TestSupport

/// Every file in sql/ runs as a user runs it (`psql -X -v person=me -f sql/FILE`), logged in
/// as the read-only login granted only health_reader, over realistic data; each answers with
/// rows, its declared columns, and the values the data implies.
@Suite("Ready queries in sql/")
struct ReadyQueryTests {
    /// The columns each file promises, in order. A new file must be listed here.
    static let expectedColumns: [String: [String]] = [
        "activity_weekly_averages.sql": ["week", "full_days", "steps_avg", "active_energy_kcal_avg", "exercise_min_avg", "sleep_h_avg",
                                         "resting_heart_rate_avg", "hrv_sdnn_ms_avg", "workouts"],
        "deliveries_duplicates.sql": ["received_at", "origin", "format", "export_id", "batch_sequence", "is_final", "basis", "samples",
                                      "inserted", "duplicates", "replaced", "quarantined", "duplicate_pct", "file"],
        "export_runs_incomplete.sql": ["export_id", "basis", "generated_at", "first_received_at", "last_received_at", "batches_received",
                                       "last_batch_sequence", "final_batch_sequence", "missing_batches", "final_batch_missing", "samples",
                                       "days_since_last_batch"],
        "freshness_status.sql": ["person", "last_received_at", "hours_since_last_batch", "newest_sample_end_at", "last_basis",
                                 "stale_after", "is_stale", "hint"],
        "heart_rate_daily_range.sql": ["day", "min_bpm", "mean_bpm", "max_bpm", "samples", "is_partial"],
        "heart_rate_time_above.sql": ["day", "start_at", "activity_name", "uuid", "samples", "stream_min", "minutes_above", "pct_above",
                                      "max_bpm"],
        "healthkit_check_differences.sql": ["day", "metric", "warehouse_value", "healthkit_value", "difference", "difference_pct"],
        "hrv_rolling_mean.sql": ["day", "hrv_ms", "samples", "mean_7d", "days_in_mean", "is_partial"],
        "quarantine_reasons.sql": ["reason", "samples", "first_received_at", "last_received_at", "export_runs", "example_raw"],
        "resting_heart_rate_rolling_mean.sql": ["day", "resting_bpm", "mean_7d", "days_in_mean", "is_partial"],
        "routes_weekly_running_distance.sql": ["week", "runs", "runs_with_route", "route_km", "recorded_km", "elevation_gain_m", "minutes"],
        "sleep_stages_per_night.sql": ["night_ending", "source", "asleep_h", "core_min", "deep_min", "rem_min", "unspecified_min",
                                       "awake_min", "in_bed_min", "unknown_min", "alternatives", "is_partial"],
        "steps_by_source_per_day.sql": ["day", "rank", "source", "steps", "samples", "is_winner", "pct_of_winner", "naive_sum",
                                        "is_partial"],
        "steps_last_30_days.sql": ["day", "steps", "winning_source", "alternatives", "is_partial"],
        "summary_last_7_days.sql": ["day", "is_partial", "steps", "active_energy_kcal", "exercise_min", "sleep_h", "resting_heart_rate",
                                    "hrv_sdnn_ms", "body_mass_kg", "workouts", "unknown_samples"],
        "unknown_types_seen.sql": ["type", "kind", "samples", "first_start_at", "last_start_at"],
        "weight_trend.sql": ["day", "kg", "mean_7d", "change_kg", "measured_at", "source", "is_partial"],
        "workouts_overlapping.sql": ["day", "start_at", "end_at", "activity_name", "source", "minutes", "distance_km", "uuid", "overlapping"],
        "workouts_per_week_by_activity.sql": ["week", "activity_name", "workouts", "minutes", "distance_km", "energy_kcal"],
    ]

    static var files: [String] { (try? Repository.files(in: "sql", withExtension: "sql")) ?? [] }

    /// Runs a file as the read-only login for person `me`.
    static func run(_ file: String, _ variables: [String: String] = [:]) throws -> CSVTable {
        let db = try FilledDatabase.get()
        return try Psql.runFile(Repository.url("sql/" + file).path, connectionString: db.readerConnectionString,
                                variables: ["person": db.demo.person].merging(variables) { $1 })
    }

    @Test("sql/ holds at least ten ready queries, each listed with its columns here")
    func inventory() throws {
        let files = try Repository.files(in: "sql", withExtension: "sql")
        #expect(files.count >= 10)
        #expect(Set(files) == Set(Self.expectedColumns.keys))
        for file in files {
            #expect(file.range(of: #"^[a-z0-9]+(_[a-z0-9]+)+\.sql$"#, options: .regularExpression) != nil, "\(file): sql/<subject>_<question>.sql")
        }
    }

    @Test("each file starts with a header comment naming the question, the views, the parameters and how to run it", arguments: files)
    func header(file: String) throws {
        let text = try Repository.text("sql/" + file)
        let header = text.split(separator: "\n").prefix { $0.hasPrefix("--") }.joined(separator: "\n")
        for label in ["Question:", "Views:", "Parameters:", "Run:"] {
            #expect(header.contains(label), "\(file) header lacks \(label)")
        }
        #expect(header.contains("psql -X") && header.contains("-f sql/\(file)"), "\(file): the Run line runs this file")
        // The views named in the header are the views the query reads, and only health.* ones.
        let named = Set(matches(of: #"health\.[a-z_]+"#, in: header.components(separatedBy: "Views:").last?.components(separatedBy: "\n").first ?? ""))
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("--") }.joined(separator: "\n")
        let used = Set(matches(of: #"health\.[a-z_]+"#, in: body))
        #expect(!used.isEmpty)
        #expect(named == used, "\(file): header names \(named.sorted()), query reads \(used.sorted())")
        #expect(!text.contains("health_store"), "\(file) reads only health.*")
        // Every psql variable used has a documented default set by \if :{?name}.
        for variable in Set(matches(of: #":'([a-z_]+)'"#, in: body).map { String($0.dropFirst(2).dropLast()) }) {
            #expect(body.contains("\\if :{?\(variable)}"), "\(file): :'\(variable)' needs a default")
            #expect(header.contains(variable), "\(file): parameter \(variable) is documented")
        }
        #expect(!Self.saysLive(text), "\(file) must not call the data live or real-time")
        if body.lowercased().contains("avg(") {
            #expect(body.contains("is_partial"), "\(file): averages leave partial days out")
        }
    }

    @Test("each file runs as the read-only login and answers rows with its declared columns", arguments: files)
    func runsAsReader(file: String) throws {
        let table = try Self.run(file)
        #expect(table.columns == Self.expectedColumns[file], "\(file) columns")
        #expect(!table.rows.isEmpty, "\(file) returned no rows")
    }

    @Test("a file runs with no variables at all, for person `default`")
    func defaults() throws {
        let db = try FilledDatabase.get()
        let table = try Psql.runFile(Repository.url("sql/steps_last_30_days.sql").path, connectionString: db.readerConnectionString,
                                     variables: [:])
        #expect(table.columns == Self.expectedColumns["steps_last_30_days.sql"])
        #expect(table.rows.isEmpty, "nobody is `default` in this data")
    }

    // MARK: - Values

    @Test("steps: each day is one source's total, the largest, never phone + watch added up")
    func stepsWinner() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("steps_last_30_days.sql")
        let daysWithSteps = db.demo.days.suffix(30).filter { db.demo.steps[$0] != nil }
        #expect(table.column("day") == Array(daysWithSteps), "every day with steps, and only those")
        var watchDays = 0, phoneDays = 0
        for row in table.records {
            let day = try #require(row["day"])
            let bySource = try #require(db.demo.steps[day], "no steps generated for \(day)")
            let winner = bySource.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!
            #expect(row["winning_source"] == winner.key, "\(day)")
            #expect(Double(row["steps"] ?? "") == winner.value.rounded(), "\(day)")
            #expect(Double(row["steps"] ?? "")! < bySource.values.reduce(0, +) || bySource.count == 1, "\(day): never the sum")
            if winner.key == HealthHistory.watch { watchDays += 1 } else { phoneDays += 1 }
        }
        #expect(watchDays > 0 && phoneDays > 0, "the data has days for each device")
        for row in table.records {
            #expect(row["is_partial"] == (row["day"] == db.demo.days.last ? "t" : "f"), "only today is partial")
        }
    }

    @Test("phone vs watch: both sources per day, winner ranked first, and the sum a naive query would show")
    func stepsBySource() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("steps_by_source_per_day.sql", ["days": "7"])
        let days = Set(table.column("day"))
        #expect(days == Set(db.demo.days.suffix(7).filter { db.demo.steps[$0] != nil }))
        for day in days {
            let rows = table.records.filter { $0["day"] == day }
            let expected = try #require(db.demo.steps[day])
            #expect(Set(rows.compactMap { $0["source"] }) == Set(expected.keys), "\(day)")
            #expect(rows.first?["rank"] == "1" && rows.first?["is_winner"] == "t" && rows.first?["pct_of_winner"] == "100.0")
            #expect(Double(rows.first?["naive_sum"] ?? "") == expected.values.reduce(0, +).rounded(), "\(day)")
        }
    }

    @Test("weekly averages leave today out, and never count more than seven days a week")
    func weeklyAverages() throws {
        let table = try Self.run("activity_weekly_averages.sql", ["weeks": "4"])
        #expect((3...4).contains(table.rows.count), "four weeks, or three on a Monday, whose only day is still partial")
        let fullDays = table.column("full_days").compactMap(Int.init)
        #expect(fullDays.allSatisfy { (1...7).contains($0) })
        // The current week holds today, which is partial: at most the days before it count.
        let weekday = Calendar(identifier: .iso8601).dateComponents(in: TimeZone(identifier: "Europe/Berlin")!, from: Date()).weekday!
        let daysBeforeTodayThisWeek = (weekday + 5) % 7  // Monday 0 … Sunday 6
        if daysBeforeTodayThisWeek > 0 {
            #expect(fullDays.last == daysBeforeTodayThisWeek)
        } else {
            #expect(fullDays.last == 7, "on a Monday the current week has no complete day yet, so the last row is last week")
        }
        #expect(table.column("steps_avg").allSatisfy { Int($0) ?? 0 > 1000 })
    }

    @Test("sleep: minutes asleep per night are the watch's stages, in bed and awake left out")
    func sleep() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("sleep_stages_per_night.sql")
        #expect(table.rows.count >= 29)
        var checked = 0
        for row in table.records where row["is_partial"] == "f" {
            let night = try #require(row["night_ending"])
            guard let minutes = db.demo.asleepMinutes[night] else { continue }
            #expect(row["source"] == HealthHistory.watch, "\(night)")
            #expect(abs(Double(row["asleep_h"] ?? "")! - minutes / 60) < 0.006, "\(night)")
            checked += 1
        }
        #expect(checked >= 25)
        #expect(table.column("unknown_min").contains { Double($0) ?? 0 > 0 }, "the night with an unnamed stage shows it as unknown")
        #expect(table.column("in_bed_min").allSatisfy { Double($0) == 0 }, "the phone's in-bed-only nights never win")
    }

    @Test("rolling means use only complete days and leave today's partial reading out")
    func rollingMeans() throws {
        let db = try FilledDatabase.get()
        for file in ["resting_heart_rate_rolling_mean.sql", "hrv_rolling_mean.sql"] {
            let table = try Self.run(file, ["days": "20"])
            var records = table.records
            // Today has its reading only once the night's or morning's sample is in.
            if records.last?["day"] == db.demo.days.last {
                let today = records.removeLast()
                #expect(today["is_partial"] == "t")
                #expect(today["days_in_mean"] == "6", "\(file): today is left out of its own mean")
            }
            #expect(records.count == 19, "\(file)")
            #expect(records.allSatisfy { $0["days_in_mean"] == "7" && $0["is_partial"] == "f" }, "\(file): a reading every day, seven a week")
        }
    }

    @Test("weight: the scale's morning weighings, with a change against the first one")
    func weight() throws {
        let table = try Self.run("weight_trend.sql", ["days": "30"])
        #expect(table.rows.count >= 14 && table.rows.count <= 16, "every other day")
        #expect(table.column("source").allSatisfy { $0 == HealthHistory.scale })
        #expect(table.records.first?["change_kg"] == "0.00")
        #expect(table.column("kg").allSatisfy { (75.0...83.0).contains(Double($0) ?? 0) })
    }

    @Test("workouts: per week by activity, the unnamed type named for its number, and the doubly recorded run listed both ways")
    func workouts() throws {
        let db = try FilledDatabase.get()
        let weekly = try Self.run("workouts_per_week_by_activity.sql", ["weeks": "12"])
        #expect(weekly.column("workouts").compactMap(Int.init).reduce(0, +) == db.demo.workoutCount)
        #expect(Set(weekly.column("activity_name")).isSuperset(of: ["running", "cycling", "traditionalStrengthTraining", "activity type 14"]))
        let overlapping = try Self.run("workouts_overlapping.sql")
        #expect(Set(overlapping.column("uuid").map { $0.uppercased() }) == [db.demo.overlappingRun.watch, db.demo.overlappingRun.app])
        #expect(Set(overlapping.column("source")) == [HealthHistory.watch, HealthHistory.runningApp])
        #expect(overlapping.column("day").allSatisfy { $0 == db.demo.overlappingRunDay })
    }

    @Test("freshness: the person sending today is not stale; the one silent for two days is, with the usual causes")
    func freshness() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("freshness_status.sql")
        let byPerson = Dictionary(uniqueKeysWithValues: table.records.map { ($0["person"]!, $0) })
        #expect(Set(byPerson.keys) == [db.demo.person, db.otherPerson, db.stalePerson])
        #expect(byPerson[db.demo.person]?["is_stale"] == "f")
        #expect(byPerson[db.demo.person]?["hint"] == "")
        let stale = try #require(byPerson[db.stalePerson])
        #expect(stale["is_stale"] == "t")
        #expect((Double(stale["hours_since_last_batch"] ?? "") ?? 0) >= 47.9)
        for cause in ["Low Power Mode", "swiped away", "locked", "unreachable", "credential"] {
            #expect(stale["hint"]?.contains(cause) == true, "hint names \(cause)")
        }
    }

    @Test("the manual export that stopped after batch 2 shows as incomplete, its final batch missing")
    func incompleteRuns() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("export_runs_incomplete.sql")
        #expect(table.rows.count == 1)
        let run = try #require(table.records.first)
        #expect(run["export_id"]?.uppercased() == db.demo.truncatedExportId)
        #expect(run["basis"] == "window")
        #expect(run["batches_received"] == "2" && run["last_batch_sequence"] == "2" && run["final_batch_sequence"] == "")
        #expect(run["final_batch_missing"] == "t")
        #expect(run["missing_batches"] == "{}", "no gap below batch 2: only the final one is missing")
    }

    @Test("duplicates per delivery: the resent batch is all duplicates, and so is the overlapping manual export")
    func duplicates() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("deliveries_duplicates.sql")
        let resent = table.records.filter { $0["export_id"]?.uppercased() == db.demo.resentExportId }
        #expect(resent.count == 1)
        #expect(resent.first?["duplicates"] == "\(db.demo.resentSamples)")
        #expect(resent.first?["inserted"] == "0" && resent.first?["duplicate_pct"] == "100.0")
        let manual = table.records.filter { $0["export_id"]?.uppercased() == db.demo.truncatedExportId }
        #expect(manual.count == 2)
        #expect(manual.allSatisfy { $0["inserted"] == "0" && $0["duplicates"] == $0["samples"] })
    }

    @Test("quarantine and unknown types: the broken sample with its reason, the unknown type with its count")
    func quarantineAndUnknown() throws {
        let db = try FilledDatabase.get()
        let quarantine = try Self.run("quarantine_reasons.sql")
        #expect(quarantine.rows.count == 1)
        #expect(quarantine.records.first?["samples"] == "1")
        #expect(quarantine.records.first?["reason"]?.contains("uuid") == true)
        #expect(quarantine.records.first?["example_raw"]?.contains(HealthHistory.quarantinedUUID) == true)
        let unknown = try Self.run("unknown_types_seen.sql")
        #expect(unknown.records.map { $0["type"] } == [HealthHistory.unknownType])
        #expect(unknown.records.first?["samples"] == "\(db.demo.unknownSamples)")
    }

    @Test("the week at a glance: seven days, today partial, no other person's data")
    func summary() throws {
        let db = try FilledDatabase.get()
        let table = try Self.run("summary_last_7_days.sql")
        #expect(table.column("day") == Array(db.demo.days.suffix(7)))
        #expect(table.column("is_partial") == ["f", "f", "f", "f", "f", "f", "t"])
        let alex = try Self.run("summary_last_7_days.sql", ["person": db.otherPerson])
        #expect(alex.column("body_mass_kg").allSatisfy { $0.isEmpty }, "alex has steps only: no data is NULL, not 0")
        #expect(alex.column("steps").allSatisfy { !$0.isEmpty })
    }

    // MARK: - Helpers

    static func saysLive(_ text: String) -> Bool {
        text.range(of: #"\blive\b|real[- ]?time"#, options: [.regularExpression, .caseInsensitive]) != nil
    }

    func matches(of pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
    }
}
