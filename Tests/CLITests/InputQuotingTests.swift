import Foundation
import Testing
import TestSupport

/// What the command line says about its input cannot be forged by that input, and a folder
/// given to it is never left.
@Suite("Messages that quote input; folders never left")
struct InputQuotingTests {
    /// A fresh folder with `files` (name → text) in it.
    static func folder(_ files: [String: String]) throws -> String {
        let folder = NSTemporaryDirectory() + "hw-quoting-\(UUID().uuidString)"
        for (name, text) in files {
            let url = URL(fileURLWithPath: folder + "/" + name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return folder
    }

    /// An export.xml of one step Record whose `value` is written as given.
    static func export(value: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_US">
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" unit="count" startDate="2024-03-10 08:00:00 +0100" endDate="2024-03-10 08:01:00 +0100" value="\(value)"/>
        </HealthData>

        """
    }

    @Test("value=\"12&#10;error: forged line\" does not print a line of its own: the line break is shown as \\n")
    func forgedExportLine() throws {
        let folder = try Self.folder(["apple_health_export/export.xml": Self.export(value: "12&#10;error: forged line")])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "the record is quarantined: \(out.stderr)")
            let lines = out.stderr.split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("error: forged line") }, "\(out.stderr)")
            #expect(lines.contains { $0.hasPrefix("warning: ") && $0.contains("Record quarantined: value \"12\\nerror: forged line\" is not a number") },
                    "\(out.stderr)")
        }
    }

    @Test("a file name with a line break in it is named on one line by ingest")
    func forgedFileName() throws {
        let folder = try Self.folder(["a\nerror: forged line.json": "{not json"])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1)
            let lines = out.stderr.split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("error: forged line") }, "\(out.stderr)")
            #expect(lines.contains { $0.hasPrefix("error: ") && $0.contains("/a\\nerror: forged line.json: ") }, "\(out.stderr)")
        }
    }

    @Test("ingest of a folder skips and names a link in it to /etc/passwd, and reads the file beside it")
    func ingestLinkOut() throws {
        let body = String(decoding: Bodies.json(samples: [Bodies.quantity(uuid: "A1B2C3D4-0000-4000-8000-000000000001",
                                                                           start: "2026-08-21T10:25:30.000+02:00", value: "10")]), as: UTF8.self)
        let folder = try Self.folder(["inside/good.json": body])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: folder + "/inside/passwd.json", withDestinationPath: "/etc/passwd")
        try FileManager.default.createSymbolicLink(atPath: folder + "/inside/again.json", withDestinationPath: folder + "/inside/good.json")
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["ingest", folder + "/inside"], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1, "\(out.stderr)")
            #expect(out.stderr.contains("error: \(folder)/inside/passwd.json: a symbolic link out of the folder given (to /etc/passwd): skipped"), "\(out.stderr)")
            #expect(!out.stderr.contains("root:"), "nothing of /etc/passwd is shown")
            #expect(try db.scalar("SELECT count(*) FROM health.samples", as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health_store.ingested_files WHERE path = '/etc/passwd'", as: Int.self) == 0)
        }
    }

    @Test("import-apple-health of a folder skips and names a route file that is a link to /etc/passwd; the workout is kept")
    func importLinkOut() throws {
        let document = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="60" durationUnit="min" sourceName="Watch" startDate="2024-03-10 09:00:00 +0100" endDate="2024-03-10 10:00:00 +0100">
              <WorkoutRoute sourceName="Watch" startDate="2024-03-10 09:00:00 +0100" endDate="2024-03-10 10:00:00 +0100">
               <FileReference path="/workout-routes/route_1.gpx"/>
              </WorkoutRoute>
             </Workout>
            </HealthData>

            """
        let folder = try Self.folder(["apple_health_export/export.xml": document])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/apple_health_export/workout-routes", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/apple_health_export/workout-routes/route_1.gpx", withDestinationPath: "/etc/passwd")
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", folder], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1, "\(out.stderr)")
            #expect(out.stderr.contains("route /workout-routes/route_1.gpx skipped: the path leads out of the export's folder; the workout is kept without it"),
                    "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.workouts", as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self) == 0)
        }
    }
}
