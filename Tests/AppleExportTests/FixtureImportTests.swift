import AppleExport
import Foundation
import Postgres
import Testing
import TestSupport

/// The hand-written export (Fixtures/small-export: every element kind the mapping names, km
/// and mi, lb, °F, kJ and Cal, old and new sleep stages, a correlation whose records also
/// stand at top level, a workout with a GPX route, one with WorkoutStatistics only, one with
/// an inline route, activity summaries) gives exactly the rows docs/apple-export.md says.
@Suite("Importing the hand-written export")
struct FixtureImportTests {
    /// The sample of a type and start (local text), as the view shows it.
    static func sample(_ db: TestDatabase, _ type: String, _ start: String, source: String? = nil) throws -> [String: String?] {
        let result = try db.query("""
            SELECT source, value, unit, category_name, activity_type, activity_name, duration_s, distance_m, energy_kcal, day,
                   payload->>'kind' AS kind, payload->>'group' AS grp, payload::text AS payload
            FROM health.samples WHERE type = $1 AND start_at = $2::timestamptz AND ($3::text IS NULL OR source = $3)
            """, ["HK" + type, start, source])
        try #require(result.count == 1, "one \(type) at \(start), found \(result.count)")
        return Dictionary(uniqueKeysWithValues: result.columns.enumerated().map { ($1, result[0][$0]) })
    }

    static func double(_ cell: String??) -> Double? { (cell ?? nil).flatMap(Double.init) }

    @Test("every record, workout, route and summary lands as a row with the catalog's units, sleep by name, the rest in payload")
    func exactRows() throws {
        try TestPostgres.withDatabase { db in
            let (summary, skipped) = try Importing(database: db).run(Exports.fixtureFolder.path)
            #expect(skipped.isEmpty, "\(skipped)")
            #expect(summary.recordsRead == 27)
            #expect(summary.new == 28, "25 distinct records and 3 workouts")
            #expect(summary.duplicates == 2, "the correlation's two records stand at top level too")
            #expect(summary.matched == 0)
            #expect(summary.workouts == 3)
            #expect(summary.routes == 2)
            #expect(summary.activitySummaries == 2)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 28)
            #expect(try db.scalar("SELECT count(DISTINCT origin) FROM health_store.samples WHERE origin = 'export'", as: Int.self) == 1)

            let iPhone = "Anna’s\u{00A0}iPhone", watch = "Anna’s Apple Watch"
            let steps = try Self.sample(db, "QuantityTypeIdentifierStepCount", "2024-03-10T08:00:00+01:00", source: iPhone)
            #expect(Self.double(steps["value"]) == 812)
            #expect(steps["unit"] == "count")
            #expect(steps["day"] == "2024-03-10")
            #expect(steps["grp"] == "activity")
            let km = try Self.sample(db, "QuantityTypeIdentifierDistanceWalkingRunning", "2024-03-10T08:00:00+01:00")
            #expect(abs(Self.double(km["value"])! - 612.3) < 1e-9)
            #expect(km["unit"] == "m")
            #expect(km["payload"]??.contains("\"unit\": \"km\"") == true, "the unit as written is kept")
            let mi = try Self.sample(db, "QuantityTypeIdentifierDistanceWalkingRunning", "2024-03-11T18:00:00+01:00")
            #expect(abs(Self.double(mi["value"])! - 4023.36) < 1e-9)
            #expect(mi["source"] == "Treadmill & Co", "&amp; in an attribute is &")
            #expect(Self.double(try Self.sample(db, "QuantityTypeIdentifierActiveEnergyBurned", "2024-03-10T08:00:00+01:00")["value"]) == 35.5, "Cal is kcal")
            #expect(abs(Self.double(try Self.sample(db, "QuantityTypeIdentifierBasalEnergyBurned", "2024-03-10T08:00:00+01:00")["value"])! - 100) < 1e-9, "kJ to kcal")
            let weight = try Self.sample(db, "QuantityTypeIdentifierBodyMass", "2024-03-10T07:30:00+01:00")
            #expect(abs(Self.double(weight["value"])! - 68.0388555) < 1e-9)
            #expect(weight["unit"] == "kg")
            #expect(abs(Self.double(try Self.sample(db, "QuantityTypeIdentifierHeight", "2024-01-02T10:00:00+01:00")["value"])! - 1.7) < 1e-12)
            let oxygen = try Self.sample(db, "QuantityTypeIdentifierOxygenSaturation", "2024-03-10T03:00:00+01:00")
            #expect(Self.double(oxygen["value"]) == 0.97, "% as the Health app writes it is a fraction and stays")
            #expect(oxygen["unit"] == "fraction")
            #expect(abs(Self.double(try Self.sample(db, "QuantityTypeIdentifierBodyTemperature", "2024-03-10T08:00:00+01:00")["value"])! - 37) < 1e-9)
            let hrv = try Self.sample(db, "QuantityTypeIdentifierHeartRateVariabilitySDNN", "2024-03-10T07:45:00+01:00")
            let hrvPayload = try #require(try JSONSerialization.jsonObject(with: Data(hrv["payload"]!!.utf8)) as? [String: Any])
            let beats = try #require((hrvPayload["healthExport"] as? [String: Any])?["beats"] as? [[String: Any]])
            #expect(beats.count == 2)
            #expect(beats.map { $0["time"] as? String } == ["7:45:01.86 AM", "07:45:02,74"])
            #expect(abs((beats[0]["secondsOfDay"] as? Double ?? 0) - 27_901.86) < 1e-6, "AM/PM read")
            #expect(abs((beats[1]["secondsOfDay"] as? Double ?? 0) - 27_902.74) < 1e-6, "a decimal comma read")
            let heart = try Self.sample(db, "QuantityTypeIdentifierHeartRate", "2024-03-10T08:04:00+01:00")
            #expect(heart["payload"]??.contains("\"metadata\": {\"HKMetadataKeyHeartRateMotionContext\": \"1\"}") == true)

            // Sleep by name, old and new stages.
            let stages = try db.rows("""
                SELECT source, value, category_name FROM health.samples WHERE type = 'HKCategoryTypeIdentifierSleepAnalysis' ORDER BY start_at
                """)
            #expect(stages.map { [$0[0], $0[1], $0[2]] } == [
                [iPhone.replacingOccurrences(of: "\u{00A0}", with: " "), "0", "inBed"], [watch, "3", "asleepCore"], [watch, "4", "asleepDeep"],
                [watch, "2", "awake"], [watch, "5", "asleepREM"], ["AutoSleep", "1", "asleepUnspecified"], ["AutoSleep", "1", "asleepUnspecified"],
            ])
            let sleep = try db.rows("SELECT day, source, asleep_min, core_min, deep_min, rem_min, unspecified_min, awake_min, in_bed_min FROM health.daily_sleep ORDER BY day")
            #expect(sleep.map { $0.map { $0 ?? "∅" } } == [
                ["2024-03-10", watch, "210", "60", "90", "60", "0", "10", "0"],
                ["2024-03-11", "AutoSleep", "435", "0", "0", "0", "435", "0", "0"],
            ])

            // Outside the catalog: kept like healthd's unknown types.
            let glucose = try Self.sample(db, "QuantityTypeIdentifierBloodGlucose", "2024-03-10T12:30:00+01:00")
            #expect(glucose["value"] == .some(nil), "no typed value for a type outside the catalog")
            #expect(glucose["payload"]??.contains("\"unit\": \"mmol<180.1558800000541>/L\"") == true)
            #expect(glucose["payload"]??.contains("\"value\": 5.2") == true)
            #expect(glucose["grp"] == "other")
            let stand = try Self.sample(db, "CategoryTypeIdentifierAppleStandHour", "2024-03-10T08:00:00+01:00")
            #expect(stand["kind"] == "category")
            #expect(stand["payload"]??.contains("\"value\": \"HKCategoryValueAppleStandHourStood\"") == true)
            #expect(try db.rows("SELECT type, samples FROM health.unknown_types ORDER BY type").map { [$0[0], $0[1]] } == [
                ["HKCategoryTypeIdentifierAppleStandHour", "1"], ["HKQuantityTypeIdentifierBloodGlucose", "1"],
            ])
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE start_at = '2024-01-06 10:00+01'", as: Int.self) == 1,
                    "a day with one lone record (a record dated after the day after tomorrow is skipped: ExportBoundsTests)")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE type = 'HKQuantityTypeIdentifierBloodPressureSystolic'", as: Int.self) == 1,
                    "a correlation's record and its top-level copy are one sample")

            // Workouts: attributes, WorkoutStatistics only, inline route.
            let workouts = try db.rows("""
                SELECT activity_type, activity_name, duration_s, distance_m, energy_kcal, origin, route_points FROM health.workouts ORDER BY start_at
                """)
            #expect(workouts.count == 3)
            #expect(workouts[0].map { $0 ?? "∅" } == ["37", "running", "1800", "5200", "310", "export", "3"])
            #expect(workouts[1][0] == "13" && workouts[1][1] == "cycling" && workouts[1][2] == "2700" && workouts[1][3] == "15500")
            #expect(abs(Double(workouts[1][4]!)! - 1674 / 4.184) < 1e-9, "energy from WorkoutStatistics, kJ to kcal")
            #expect(workouts[1][6] == nil, "no route")
            #expect(workouts[2][0] == "52" && workouts[2][2] == "1800" && abs(Double(workouts[2][3]!)! - 3218.688) < 1e-9)
            #expect(workouts[2][6] == "2")

            // Routes: the GPX with its extensions; the inline points with -1 (not available) as NULL.
            let gpx = try db.rows("""
                SELECT p.seq, to_char(p.t AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS"+00"'), p.lat, p.lon, p.altitude_m, p.speed_mps, p.course_deg, p.horizontal_accuracy_m, p.vertical_accuracy_m
                FROM health.workout_route_points p JOIN health.workouts w USING (person, uuid)
                WHERE w.activity_type = 37 ORDER BY p.seq
                """)
            #expect(gpx.map { $0.map { $0 ?? "∅" } } == [
                ["1", "2024-03-10 17:00:00+00", "52.5145", "13.3501", "35", "3.1", "90", "4.5", "3.2"],
                ["2", "2024-03-10 17:00:20+00", "52.5145", "13.3511", "37.5", "3.4", "90.5", "4.1", "3"],
                ["3", "2024-03-10 17:00:40+00", "52.5146", "13.3521", "36", "3.3", "85", "4", "2.9"],
            ])
            let inline = try db.rows("""
                SELECT p.seq, p.altitude_m, p.speed_mps, p.course_deg FROM health.workout_route_points p
                JOIN health.workouts w USING (person, uuid) WHERE w.activity_type = 52 ORDER BY p.seq
                """)
            #expect(inline.map { $0.map { $0 ?? "∅" } } == [["1", "34", "1.4", "∅"], ["2", "36.5", "1.5", "0"]])
            #expect(try db.scalar("SELECT round(r.elevation_gain_m::numeric, 3) FROM health.workout_routes r JOIN health.workouts w USING (person, uuid) WHERE w.activity_type = 37",
                                  as: Double.self) == 2.5)

            // Activity summaries, energy in kcal whatever the unit.
            let rings = try db.rows("SELECT person, day, round(active_energy_kcal::numeric, 6), round(active_energy_goal_kcal::numeric, 6), exercise_min, exercise_goal_min, stand_hours, stand_goal_hours FROM health.activity_summaries ORDER BY day")
            #expect(rings.map { $0.map { $0 ?? "∅" } } == [
                ["default", "2024-03-10", "547.500000", "500.000000", "44", "30", "11", "12"],
                ["default", "2024-03-11", "500.000000", "500.000000", "75", "30", "13", "12"],
            ])

            // Days of the views, rollups equal to a recompute.
            #expect(try db.rows("SELECT value, source, alternatives::text FROM health.daily_totals WHERE day = '2024-03-10' AND metric = 'steps'")
                .first.map { [$0[0], $0[1], $0[2]] } == ["812", iPhone, "{\"Anna’s Apple Watch\": 790}"])
            #expect(try db.rows("SELECT min, mean, max, samples FROM health.daily_readings WHERE day = '2024-03-10' AND metric = 'heart_rate_bpm'")
                .first == ["72", "81", "90", "2"])
            #expect(try db.rollupDifferences() == 0)
            // The batch went through store_batch: a delivery of origin export, format xml, naming the export.
            #expect(try db.rows("SELECT origin, format, basis, samples, inserted, duplicates, is_final, file FROM health.deliveries")
                .map { $0.map { $0 ?? "∅" } } == [["export", "xml", "export", "30", "28", "2", "t", Exports.fixtureFolder.path]])
        }
    }

    @Test("the same export twice adds nothing: the second run is a no-op, and with the file touched it reads nothing new")
    func twice() throws {
        try TestPostgres.withDatabase { db in
            let importing = Importing(database: db)
            try importing.run(Exports.fixtureFolder.path)
            let before = try db.importedRows()
            let (again, _) = try importing.run(Exports.fixtureFolder.path)
            #expect(again.unchanged)
            #expect(again.new == 0 && again.recordsRead == 0)
            #expect(try db.importedRows() == before)

            // The same bytes under a new modification time: recognised by its hash.
            let copy = try Exports.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.copyItem(at: Exports.fixtureFolder, to: copy.appendingPathComponent("export"))
            let first = try importing.run(copy.appendingPathComponent("export").path).0
            #expect(first.new == 0, "a copy elsewhere is the same records")
            #expect(first.duplicates == 30)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)],
                                                  ofItemAtPath: copy.appendingPathComponent("export/apple_health_export/export.xml").path)
            let touched = try importing.run(copy.appendingPathComponent("export").path).0
            #expect(touched.unchanged)
            #expect(try db.importedRows() == before)
            #expect(try db.scalar("SELECT count(*) FROM health_store.deliveries", as: Int.self) == 2)
        }
    }

    @Test("the archive, its unpacked folder and the export.xml alone give identical rows")
    func archiveAndFolder() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("export.zip")
        try Exports.zip(Exports.fixtureFolder, to: archive)
        var results: [[String: [String]]] = []
        for path in [archive.path, Exports.fixtureFolder.path, Exports.fixtureXML.path] {
            try TestPostgres.withDatabase { db in
                let (summary, skipped) = try Importing(database: db).run(path)
                #expect(skipped.isEmpty, "\(path): \(skipped)")
                #expect(summary.routes == 2)
                results.append(try db.importedRows())
            }
        }
        for table in results[0].keys.sorted() {
            #expect(results[0][table] == results[1][table], "\(table): archive and folder")
            #expect(results[1][table] == results[2][table], "\(table): folder and export.xml")
        }
        #expect(results[0]["samples"]?.count == 28)
    }

    @Test("a malformed element is skipped and named with its line; the rest is imported, and the command exits 1")
    func malformedElement() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var xml = try String(contentsOf: Exports.fixtureXML, encoding: .utf8)
        // A 2015-style attribute name with spaces in the third record (line 12), and a vertical tab in a device name.
        var lines = xml.components(separatedBy: "\n")
        let broken = try #require(lines.firstIndex { $0.contains("value=\"0.6123\"") })
        lines[broken] = lines[broken].replacingOccurrences(of: "sourceVersion=\"17.3\"", with: "Withings User Identifier=\"1\" sourceVersion=\"17.3\"")
        xml = lines.joined(separator: "\n").replacingOccurrences(of: "name:iPhone, manufacturer", with: "name:iPhone\u{0B}X, manufacturer")
        let file = folder.appendingPathComponent("Export.xml")
        try Data(xml.utf8).write(to: file)
        try TestPostgres.withDatabase { db in
            let (summary, skipped) = try Importing(database: db).run(file.path)
            #expect(skipped.map(\.name) == ["Record", "route /workout-routes/route_2024-03-10_6.00pm.gpx"])
            #expect(skipped.first?.line == broken + 1)
            #expect(summary.skipped == 2)
            #expect(summary.recordsRead == 27)
            #expect(summary.new == 27, "the 24 other distinct records and the 3 workouts")
            #expect(summary.controlCharacters == 1)
            #expect(summary.routes == 1, "the GPX file is not beside this export.xml; the inline route is")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE type = 'HKQuantityTypeIdentifierDistanceWalkingRunning'", as: Int.self) == 1)
            #expect(try db.scalar("SELECT payload->'healthExport'->>'device' FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount' AND start_at = '2024-03-10 08:00+01' AND source LIKE '%iPhone'", as: String.self)?
                .contains("name:iPhone X, manufacturer") == true, "the vertical tab read as a space")
        }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1)
            #expect(out.stderr.contains("error: \(file.path): line \(broken + 1): Record skipped: "), "\(out.stderr)")
            #expect(out.stderr.contains("route /workout-routes/route_2024-03-10_6.00pm.gpx skipped: the export holds no such file"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
            #expect(Set(json.keys) == ["records_read", "new", "duplicates", "matched", "skipped", "quarantined", "workouts", "routes",
                                       "activity_summaries", "seconds"])
            #expect(json["skipped"] as? Int == 2)
            #expect(json["records_read"] as? Int == 27)
            #expect(!out.stderr.contains("\r"), "no progress bar off a terminal")
        }
    }

    @Test("what records share (device, source version, unit, a motion context) is held once per person, and every payload is the record as exported")
    func sharedExportContexts() throws {
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try TestPostgres.withDatabase { db in
            try Importing(database: db).run(Exports.fixtureFolder.path)
            try Importing(database: db, person: "bo").run(Exports.fixtureFolder.path)
            // One context per distinct set, under the number of its text: the same for both persons.
            let counts = try db.rows("SELECT person, count(*), count(DISTINCT members) FROM health_store.export_contexts GROUP BY person ORDER BY person")
            #expect(counts.count == 2 && counts[0][1] == counts[1][1] && counts[0][1] == counts[0][2])
            #expect(try db.scalar("""
                SELECT count(*) FROM (SELECT context, members FROM health_store.export_contexts WHERE person = 'default'
                                      EXCEPT SELECT context, members FROM health_store.export_contexts WHERE person = 'bo') x
                """, as: Int.self) == 0)
            // Stored without them: no record's row keeps a device, source version, unit, shared metadata or creation date.
            #expect(try db.scalar("""
                SELECT count(*) FROM health_store.sample_rows
                WHERE kind <> 'workout' AND (context IS NULL OR created_s IS NULL
                                             OR payload->'healthExport' ?| ARRAY['device', 'sourceVersion', 'unit', 'metadata', 'creationDate'])
                """, as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health_store.sample_rows WHERE kind = 'workout' AND context IS NOT NULL", as: Int.self) == 0,
                    "a workout keeps its members")
            #expect(try db.scalar("""
                SELECT created_s FROM health_store.sample_rows r JOIN health_store.series k USING (person, series)
                WHERE r.person = 'bo' AND k.type = 'HKQuantityTypeIdentifierHeartRate' AND r.start_at = '2024-03-10 08:04+01'
                """, as: Int.self) == 60, "created a minute after its end")
            // …and given back exactly as the elements have them.
            func block(_ type: String, _ start: String, source: String = "%") throws -> String? {
                try db.scalar("""
                    SELECT payload->'healthExport' FROM health.samples
                    WHERE person = 'bo' AND type = $1 AND start_at = $2::timestamptz AND source LIKE $3
                    """, [type, start, source], as: String.self)
            }
            #expect(try block("HKQuantityTypeIdentifierStepCount", "2024-03-10 08:00+01", source: "%iPhone")
                    == #"{"unit": "count", "value": "812", "device": "<<HKDevice: 0x28a1>, name:iPhone, manufacturer:Apple Inc., model:iPhone>", "creationDate": "2024-03-10 08:10:00 +0100", "sourceVersion": "17.3"}"#)
            #expect(try block("HKQuantityTypeIdentifierHeartRate", "2024-03-10 08:04+01")
                    == #"{"unit": "count/min", "value": "72", "metadata": {"HKMetadataKeyHeartRateMotionContext": "1"}, "creationDate": "2024-03-10 08:05:00 +0100", "sourceVersion": "10.3"}"#)
            #expect(try block("HKQuantityTypeIdentifierDistanceWalkingRunning", "2024-03-11 18:00+01")
                    == #"{"unit": "mi", "value": "2.5", "creationDate": "2024-03-11 19:00:00 +0100", "sourceVersion": "2.1"}"#,
                    "a value converted (mi → m) keeps its text as written")

            // A record exported again with another device, or with metadata of its own, is that sample
            // replaced: read back as exported the second time.
            let before = try #require(try db.scalar("SELECT count(*) FROM health_store.export_contexts WHERE person = 'bo'", as: Int.self))
            var xml = try String(contentsOf: Exports.fixtureXML, encoding: .utf8)
            xml = xml.replacingOccurrences(of: "HKDevice: 0x28a1", with: "HKDevice: 0x99ff")
                .replacingOccurrences(of: #"<MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>"#,
                                      with: #"<MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/><MetadataEntry key="HKExternalUUID" value="A1"/>"#)
            let file = folder.appendingPathComponent("export.xml")
            try Data(xml.utf8).write(to: file)
            let (again, _) = try Importing(database: db, person: "bo").run(file.path)
            #expect(again.new == 0)
            #expect(again.duplicates == 30, "every record and workout held already, the changed ones refreshed")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'bo' AND payload::text LIKE '%0x28a1%'", as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'bo' AND payload::text LIKE '%0x99ff%'", as: Int.self)
                    == (try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'default' AND payload::text LIKE '%0x28a1%'", as: Int.self)))
            #expect(try block("HKQuantityTypeIdentifierHeartRate", "2024-03-10 08:04+01")
                    == #"{"unit": "count/min", "value": "72", "metadata": {"HKExternalUUID": "A1", "HKMetadataKeyHeartRateMotionContext": "1"}, "creationDate": "2024-03-10 08:05:00 +0100", "sourceVersion": "10.3"}"#)
            #expect(try db.scalar("""
                SELECT r.payload FROM health_store.sample_rows r JOIN health_store.series k USING (person, series)
                WHERE r.person = 'bo' AND k.type = 'HKQuantityTypeIdentifierHeartRate' AND r.start_at = '2024-03-10 08:04+01'
                """, as: String.self) == #"{"healthExport": {"metadata": {"HKExternalUUID": "A1", "HKMetadataKeyHeartRateMotionContext": "1"}}}"#,
                    "metadata of a key of its own stays in the row")
            let added = try #require(try db.scalar("SELECT count(*) FROM health_store.export_contexts WHERE person = 'bo' AND members::text LIKE '%0x99ff%'", as: Int.self))
            #expect(added >= 1)
            #expect(try db.scalar("SELECT count(*) FROM health_store.export_contexts WHERE person = 'bo'", as: Int.self) == before + added,
                    "the new contexts added, the old ones kept")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'default' AND payload::text LIKE '%0x99ff%'", as: Int.self) == 0,
                    "the other person's copy untouched")

            // Other members under a number the person holds are refused, never stored as those.
            let number = try #require(try db.scalar("SELECT min(context) FROM health_store.export_contexts WHERE person = 'bo'", as: Int.self))
            #expect(throws: (any Error).self) {
                try db.query("""
                    SELECT health_store.add_contexts('bo', ARRAY[jsonb_populate_record(NULL::health_store.incoming_sample,
                      jsonb_build_object('context', $1::bigint, 'context_members', '{"unit": "furlong"}'::jsonb, 'action', 'insert'))])
                    """, [number])
            }
            #expect(try db.scalar("SELECT count(*) FROM health_store.export_contexts WHERE members::text LIKE '%furlong%'", as: Int.self) == 0)
        }
    }
}
