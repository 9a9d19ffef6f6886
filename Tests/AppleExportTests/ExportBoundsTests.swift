import Foundation
import Testing
import TestSupport

/// Issue 21.1 and 21.7 for the Health app's export (CONTRACT.md §5): a record with a text over
/// 1,024 bytes, an implausible value or an implausible date is skipped and named with its
/// line, the rest imported, exit 1 — where it used to abort the whole import on every re-run.
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

    @Test("too-long texts, implausible values and dates are skipped and named with their line; the 1,024-byte source and the good records are stored; exit 1")
    func skippedAndNamed() throws {
        let longest = RandomText.bytes(1024, seed: 11)
        let xml = Self.export([
            Self.record(source: longest),                                                               // line 4: stored
            Self.record(source: RandomText.bytes(1025, seed: 12), value: "1"),                          // 5
            Self.record(type: RandomText.bytes(1025, seed: 13)),                                        // 6
            Self.record(type: "HKQuantityTypeIdentifierBloodGlucose", unit: RandomText.bytes(1025, seed: 14)), // 7
            Self.record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "-5"),     // 8
            Self.record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "450"),    // 9
            Self.record(date: "2030-01-06 10:00:00 +0100", value: "44"),                                // 10
            Self.record(date: "1969-12-31 23:00:00 +0000", value: "2"),                                 // 11
            #"<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" totalDistance="-5" totalDistanceUnit="km" sourceName="Watch" startDate="2024-03-10 18:00:00 +0100" endDate="2024-03-10 18:30:00 +0100"/>"#, // 12
            Self.record(type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "72"),     // 13: stored
        ])
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("export.xml")
        try Data(xml.utf8).write(to: file)
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1, "\(out.stderr)")
            for expected in [
                "line 5: Record skipped: sourceName is 1025 bytes, at most 1024",
                "line 6: Record skipped: type is 1025 bytes, at most 1024",
                "line 7: Record skipped: unit is 1025 bytes, at most 1024",
                "line 8: Record skipped: value -5 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400",
                "line 9: Record skipped: value 450 is outside the plausible range of HKQuantityTypeIdentifierHeartRate: > 0 and < 400",
                "line 10: Record skipped: startDate \"2030-01-06 10:00:00 +0100\" is after the day after tomorrow",
                "line 11: Record skipped: startDate \"1969-12-31 23:00:00 +0000\" is before 1970-01-01",
                "line 12: Workout skipped: distance -5000 is outside its plausible range: ≥ 0",
            ] {
                #expect(out.stderr.contains(expected), "\(expected)\n\(out.stderr)")
            }
            #expect(try ImportCommandTests.json(out.stdout)["skipped"] as? Int == 8)
            #expect(try db.rows("SELECT type, source, value FROM health.samples ORDER BY type").map { [$0[0], $0[2]] }
                    == [["HKQuantityTypeIdentifierHeartRate", "72"], ["HKQuantityTypeIdentifierStepCount", "812"]])
            #expect(try db.scalar("SELECT source FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: String.self) == longest)
        }
    }
}
