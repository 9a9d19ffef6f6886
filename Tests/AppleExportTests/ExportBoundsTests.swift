import Foundation
import Testing
import TestSupport

/// A record or workout of the Health app's export that breaks a bound every way in applies (a
/// text over 1,024 bytes, an implausible value or date), or that was read but holds what cannot
/// be a sample (a value or date that is not one, a unit with no conversion), is quarantined as
/// a healthd sample would be: kept in health.quarantine with its reason and line (`raw` its
/// attributes), counted nowhere, named on stderr, `quarantined` in the summary, exit 0; the rest
/// is imported, and reading the records again quarantines nothing twice (docs/apple-export.md).
/// Only what cannot be read at all (malformed XML) is skipped.
@Suite("Export bounds")
struct ExportBoundsTests {
    /// An export.xml of `records` (whole elements), one a line from line 4.
    static func export(_ records: [String]) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_DE">
         <ExportDate value="2024-03-12 09:00:00 +0100"/>

        """ + records.map { " " + $0 }.joined(separator: "\n") + "\n</HealthData>\n"
    }

    static func record(type: String = "HKQuantityTypeIdentifierStepCount", source: String = "Phone", unit: String = "count",
                       date: String = "2024-03-10 08:00:00 +0100", value: String = "812") -> String {
        #"<Record type="\#(type)" sourceName="\#(source)" unit="\#(unit)" startDate="\#(date)" endDate="\#(date)" value="\#(value)"/>"#
    }

    /// One bound each: the element that breaks it, and the reason it is quarantined with.
    static let bounds: [(bound: String, element: String, reason: String)] = [
        ("sourceName length", record(source: RandomText.bytes(1025, seed: 12), value: "1"), "Record: sourceName is 1025 bytes, at most 1024"),
        ("type length", record(type: RandomText.bytes(1025, seed: 13)), "Record: type is 1025 bytes, at most 1024"),
        ("unit length", record(type: "HKQuantityTypeIdentifierBloodGlucose", unit: RandomText.bytes(1025, seed: 14)),
         "Record: unit is 1025 bytes, at most 1024"),
        ("value below the plausible range", record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "-5"),
         "Record: value -5 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"),
        ("value above the plausible range", record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "450"),
         "Record: value 450 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400"),
        ("body fat written as a percentage", record(type: "HKQuantityTypeIdentifierBodyFatPercentage", unit: "%", value: "18.5"),
         "Record: value 18.5 is outside the plausible range of HKQuantityTypeIdentifierBodyFatPercentage"),
        ("a date after the day after tomorrow", record(date: "2030-01-06 10:00:00 +0100", value: "44"),
         "Record: startDate \"2030-01-06 10:00:00 +0100\" is after the day after tomorrow"),
        ("a date before 1970", record(date: "1969-12-31 23:00:00 +0000", value: "2"),
         "Record: startDate \"1969-12-31 23:00:00 +0000\" is before 1970-01-01"),
        ("an end before its start",
         #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-10 09:00:00 +0100" endDate="2024-03-10 08:00:00 +0100" value="7"/>"#,
         "Record: endDate is before startDate"),
        ("a workout total", #"<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" totalDistance="-5" totalDistanceUnit="km" sourceName="Watch" startDate="2024-03-10 18:00:00 +0100" endDate="2024-03-10 18:30:00 +0100"/>"#,
         "Workout: distance -5000 is outside its plausible range: ≥ 0"),
        ("an activity summary of an implausible day", #"<ActivitySummary dateComponents="2030-01-06" activeEnergyBurned="100" activeEnergyBurnedUnit="Cal"/>"#,
         "ActivitySummary: dateComponents \"2030-01-06\" is after the day after tomorrow"),
        // The bound is checked before the unit is read: over it, no conversion is tried.
        ("unit length of a catalog type", record(unit: RandomText.bytes(1025, seed: 15)), "Record: unit is 1025 bytes, at most 1024"),
        // Read, but not a sample: what a healthd sample is quarantined for too (a key mistyped, a
        // timestamp not in the reference's shape), and a unit a catalog type has no conversion from.
        ("a value that is not a number", record(value: "abc"), "Record: value \"abc\" is not a number"),
        ("a date that is not one", record(date: "yesterday", value: "3"),
         "Record: startDate \"yesterday\" is not a date like 2019-06-11 15:00:00 +0100"),
        ("a unit a catalog type has no conversion from", record(unit: "furlong", value: "4"),
         "Record: unit \"furlong\" of HKQuantityTypeIdentifierStepCount cannot be converted to count"),
        ("a workout's duration that is not a number", #"<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="long" durationUnit="min" sourceName="Watch" startDate="2024-03-10 18:00:00 +0100" endDate="2024-03-10 18:30:00 +0100"/>"#,
         "Workout: duration \"long\" is not a number"),
        // A key a healthd sample of its kind always carries, missing (SampleRequirement: a quantity
        // its value and unit, in the catalog or not, a catalog category its value; a category
        // outside the catalog may have none: kept, below).
        // (Written as exports of 2015 wrote it with an average, its average is the value: ExternalExportTests.)
        ("a heart rate with no value (count/s, min and max only)",
         #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Sleep Cycle" unit="count/s" startDate="2024-03-10 08:00:00 +0100" endDate="2024-03-10 09:00:00 +0100" min="1.1" max="1.2" recordCount="1"/>"#,
         "Record: value is missing (kind quantity)"),
        ("a step count with no value", #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-10 09:00:00 +0100" endDate="2024-03-10 09:00:00 +0100"/>"#,
         "Record: value is missing (kind quantity)"),
        ("a sleep stage with no value", #"<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="UP" unit="" startDate="2024-03-10 01:45:00 +0100" endDate="2024-03-10 07:25:00 +0100"/>"#,
         "Record: value is missing (kind category)"),
        ("a quantity outside the catalog with no unit", record(type: "HKQuantityTypeIdentifierBloodGlucose", unit: "", value: "5.4"),
         "Record: unit is missing (kind quantity)"),
    ]

    @Test("a record or workout over a bound is quarantined with its line and attributes, the rest stored, exit 0",
          arguments: bounds.map(\.bound))
    func quarantined(bound: String) throws {
        let (_, element, reason) = try #require(Self.bounds.first { $0.bound == bound })
        let xml = Self.export([Self.record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "72"), element])
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("export.xml")
        try Data(xml.utf8).write(to: file)
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stderr.contains("warning: \(file.path): line 5: " + reason.replacingOccurrences(of: ": ", with: " quarantined: ", options: [], range: reason.range(of: ": "))),
                    "\(out.stderr)")
            let summary = try ImportCommandTests.json(out.stdout)
            #expect(summary["quarantined"] as? Int == 1 && summary["skipped"] as? Int == 0 && summary["new"] as? Int == 1, "\(summary)")
            #expect(try db.rows("SELECT type, value FROM health.samples").map { [$0[0], $0[1]] } == [["HKQuantityTypeIdentifierHeartRate", "72"]])
            let rows = try db.rows("SELECT reason, raw, position FROM health.quarantine")
            try #require(rows.count == 1)
            #expect(rows[0][0]?.hasPrefix("line 5, " + reason) == true, "\(rows[0][0] ?? "")")
            #expect(rows[0][2] == "2", "the second element of its batch")
            // raw: the element's attributes, as a JSON object, as written.
            let raw = try #require(try JSONSerialization.jsonObject(with: Data((rows[0][1] ?? "").utf8)) as? [String: String])
            let names = element.matches(of: /([A-Za-z]+)="/).map { String($0.1) }
            #expect(Set(raw.keys) == Set(names), "every attribute, and nothing else")
            #expect(names.allSatisfy { name in raw[name].map { element.contains("\(name)=\"\($0)\"") } == true }, "as written")
            #expect(try db.scalar("SELECT sum(quarantined)::int FROM health.deliveries", as: Int.self) == 1)
        }
    }

    @Test("every bound at once: exit 0, each named; the 1,024-byte source is stored; a changed export read again quarantines nothing twice")
    func allBoundsAndReadAgain() throws {
        let longest = RandomText.bytes(1024, seed: 11)
        let records = [Self.record(source: longest)] + Self.bounds.map(\.element)
            + [Self.record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "72")]
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("export.xml")
        try Data(Self.export(records).utf8).write(to: file)
        try TestPostgres.withDatabase { db in
            let url = ["DATABASE_URL": db.connectionString]
            let out = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: url)
            #expect(out.status == 0, "\(out.stderr)")
            for (index, bound) in Self.bounds.enumerated() {
                #expect(out.stderr.contains("line \(5 + index): " + bound.reason.prefix { $0 != ":" } + " quarantined: "), "\(bound.bound)\n\(out.stderr)")
            }
            #expect(try ImportCommandTests.json(out.stdout)["quarantined"] as? Int == Self.bounds.count)
            #expect(try db.rows("SELECT type, source, value FROM health.samples ORDER BY type COLLATE \"C\"").map { [$0[0], $0[2]] }
                    == [["HKQuantityTypeIdentifierHeartRate", "72"], ["HKQuantityTypeIdentifierStepCount", "812"]])
            #expect(try db.scalar("SELECT source FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: String.self) == longest)
            let held = try db.rows("SELECT reason, raw FROM health.quarantine ORDER BY reason COLLATE \"C\"")
            #expect(held.count == Self.bounds.count)

            // The same file: unchanged, nothing read. A newer export holding the same records
            // (one more, so it is read again): nothing quarantined twice, nothing stored twice.
            #expect(try CLIProcess.run(["import-apple-health", file.path], environment: url).status == 0)
            try Data(Self.export(records + [Self.record(date: "2024-03-11 08:00:00 +0100", value: "900")]).utf8).write(to: file)
            let again = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: url)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try ImportCommandTests.json(again.stdout)["new"] as? Int == 1)
            #expect(try db.rows("SELECT reason, raw FROM health.quarantine ORDER BY reason COLLATE \"C\"") == held)
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 3)
        }
    }
}
