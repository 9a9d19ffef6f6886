import Foundation
import Testing
import TestSupport

/// Every file in ../shared/external/apple-health (real exports and excerpts from public
/// projects, SOURCES.md says which), read in place: imported by the built binary, it exits 0,
/// or 1 with what it could not read named (the files that are not exports, the 2015 German one
/// that is not well-formed, the excerpts whose route files stayed behind); its implausible
/// records and those without a value are quarantined, each listed here, named on stderr and
/// kept with its line; and the samples of each type are exactly the file's other well-formed
/// records, counted apart by Python's own XML parser.
@Suite("The real exports in ../shared/external")
struct ExternalExportTests {
    /// Counts, per type, the distinct well-formed records of an export (type, source, start,
    /// end, value, unit: what identifies a record), and `HKWorkoutTypeIdentifier` for the
    /// distinct workouts. A file that is not well-formed is counted line by line, each record
    /// that parses on its own counting. A file that is not an export counts nothing.
    static let counter = #"""
        import json, re, sys, zipfile
        import xml.etree.ElementTree as ET
        path = sys.argv[1]
        if path.endswith('.zip'):
            z = zipfile.ZipFile(path)
            names = [n for n in z.namelist() if n.lower().endswith('.xml') and not n.lower().endswith('_cda.xml') and n.count('/') <= 1]
            names.sort(key=lambda n: n.split('/')[-1].lower() != 'export.xml')
            data = z.read(names[0]).decode('utf-8') if names else ''
        else:
            data = open(path, 'rb').read().decode('utf-8', 'replace')
        data = re.sub(r'<!DOCTYPE.*?\]>', '', data, count=1, flags=re.S)
        seen = {}
        def record(e):
            a = e.attrib
            key = (a.get('type'), a.get('sourceName', a.get('source')), a.get('startDate'), a.get('endDate'), a.get('value'), a.get('unit'))
            seen.setdefault(a.get('type'), set()).add(key)
        def workout(e):
            a = e.attrib
            seen.setdefault('HKWorkoutTypeIdentifier', set()).add((a.get('workoutActivityType'), a.get('sourceName'), a.get('startDate'), a.get('endDate'), a.get('duration'), a.get('durationUnit')))
        try:
            root = ET.fromstring(data)
            if root.tag == 'HealthData':
                for e in root.iter('Record'): record(e)
                for e in root.iter('Workout'): workout(e)
        except ET.ParseError:
            if '<HealthData' in data:
                for line in data.split('\n'):
                    s = line.strip()
                    if s.startswith('<Record') and s.endswith('/>'):
                        try: record(ET.fromstring(s))
                        except ET.ParseError: pass
        print(json.dumps({t: len(v) for t, v in seen.items()}))
        """#

    /// The records of these files the warehouse finds implausible, quarantined on import (so
    /// not among the samples the counter's well-formed records would give), by type, with the
    /// start of each one's reason: grll's excerpt writes a body fat of 18.5 and an oxygen
    /// saturation of 98 as `%` (the Health app writes fractions, 0.185 and 0.98: as written they
    /// would be 1850 % and 9800 %), and the iOS 12 archive holds steps and a distance dated 2030.
    static let implausible: [String: [(type: String, reason: String)]] = [
        "grll-apple-health-landing-zone__export.xml": [
            ("HKQuantityTypeIdentifierBodyFatPercentage",
             "line 315, Record: value 18.5 is outside the plausible range of HKQuantityTypeIdentifierBodyFatPercentage"),
            ("HKQuantityTypeIdentifierOxygenSaturation",
             "line 340, Record: value 98 is outside the plausible range of HKQuantityTypeIdentifierOxygenSaturation"),
        ],
        "rgosdin-docs__export.zip": [
            ("HKQuantityTypeIdentifierStepCount", "line 1392, Record: startDate \"2030-01-06 12:35:46 -0400\" is after the day after tomorrow"),
            ("HKQuantityTypeIdentifierDistanceWalkingRunning",
             "line 2980, Record: startDate \"2030-01-06 12:35:46 -0400\" is after the day after tomorrow"),
        ],
    ]

    /// The records of these files without a `value` attribute, by type (distinct well-formed
    /// records, as the counter counts them): a healthd sample of a quantity or category lacking
    /// its value is quarantined, in the catalog or not (`SampleRequirement`), and so are they,
    /// with `value is missing (kind quantity)` or `(kind category)`. A few NikeFuel, sleep and
    /// sexual activity records of the 2015 exports hold no value at all (their heart rates in
    /// count/s hold min, max and average over `recordCount` readings: the average is the value);
    /// the Apple Watch's heart-rate notifications and a mindful session
    /// (`HKCategoryValueNotApplicable`) are written without one.
    static let valueless: [String: [String: Int]] = [
        "ericwolter-apple-healthkit-csv__Exportieren.xml": ["HKQuantityTypeIdentifierNikeFuel": 6, "HKCategoryTypeIdentifierSleepAnalysis": 1],
    ]

    static var files: [URL] {
        guard let folder = Exports.external,
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        return names.filter { !$0.hasSuffix(".md") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test("each imports with per-type counts equal to its well-formed records, its implausible ones quarantined: exit 0, or 1 with the skipped elements named",
          .enabled(if: Exports.external != nil, "../shared/external/apple-health is not beside this checkout"))
    func everyFile() throws {
        let files = Self.files
        #expect(files.count >= 18, "the folder holds its 18 files")
        try TestPostgres.withDatabase { db in
            for (index, file) in files.enumerated() {
                let person = "p\(index)"
                let counted = try CLIProcess.runProgram("/usr/bin/env", ["python3", "-c", Self.counter, file.path])
                try #require(counted.status == 0, "python3 could not count \(file.lastPathComponent): \(counted.stderr)")
                var expected = try #require(try JSONSerialization.jsonObject(with: Data(counted.stdout.utf8)) as? [String: Int])
                let implausible = Self.implausible[file.lastPathComponent] ?? []
                for record in implausible { expected[record.type] = (expected[record.type] ?? 0) - 1 }
                let valueless = Self.valueless[file.lastPathComponent] ?? [:]
                for (type, count) in valueless { expected[type] = (expected[type] ?? 0) - count }
                expected = expected.filter { $0.value > 0 }
                let quarantined = implausible.count + valueless.values.reduce(0, +)

                let out = try CLIProcess.run(["import-apple-health", "--json", "--person", person, file.path],
                                             environment: ["DATABASE_URL": db.connectionString])
                let name = file.lastPathComponent
                let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], "\(name): \(out.stderr)")
                let skipped = json["skipped"] as? Int ?? -1
                if skipped == 0 {
                    #expect(out.status == 0, "\(name): \(out.stderr)")
                } else {
                    #expect(out.status == 1, "\(name)")
                    let named = out.stderr.split(separator: "\n").filter { $0.hasPrefix("error: \(file.path): ") && $0.contains(" skipped: ") }
                    #expect(named.count == skipped, "\(name): every skipped element is named on stderr")
                }
                let quarantinedNamed = out.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: \(file.path): ") && $0.contains(" quarantined: ") }
                #expect(quarantinedNamed.count == quarantined, "\(name): \(quarantinedNamed.prefix(5))")
                #expect(json["quarantined"] as? Int == quarantined, "\(name)")
                let kept = try db.rows("SELECT reason FROM health.quarantine WHERE person = $1 AND reason NOT LIKE '%: value is missing (kind %' ORDER BY batch_sequence, position",
                                       [person]).map { $0[0] ?? "" }
                #expect(kept.count == implausible.count && zip(kept, implausible).allSatisfy { $0.0.hasPrefix($0.1.reason) },
                        "\(name): quarantined \(kept)")
                var missing: [String: Int] = [:]
                for row in try db.rows("""
                    SELECT raw::jsonb->>'type', count(*), bool_and(reason LIKE '%, Record: value is missing (kind ' ||
                                                                   CASE WHEN raw::jsonb->>'type' LIKE 'HKCategory%' THEN 'category)' ELSE 'quantity)' END)
                    FROM health.quarantine WHERE person = $1 AND reason LIKE '%: value is missing (kind %' GROUP BY 1
                    """, [person]) {
                    missing[row[0]!] = Int(row[1]!)!
                    #expect(row[2] == "t", "\(name): \(row[0]!) is quarantined as a quantity or category by its type")
                }
                #expect(missing == valueless, "\(name): records without a value")
                var held: [String: Int] = [:]
                for row in try db.rows("SELECT type, count(*) FROM health.samples WHERE person = $1 GROUP BY type", [person]) {
                    held[row[0]!] = Int(row[1]!)!
                }
                #expect(held == expected, "\(name): samples per type")
                #expect(try db.rollupDifferences(person) == 0, "\(name)")
            }
        }
    }

    @Test("the quirks the real exports carry are read, not tripped over",
          .enabled(if: Exports.external != nil, "../shared/external/apple-health is not beside this checkout"))
    func quirks() throws {
        guard let folder = Exports.external else { return }
        try TestPostgres.withDatabase { db in
            func run(_ name: String, _ person: String) throws -> (status: Int32, stderr: String) {
                let out = try CLIProcess.run(["import-apple-health", "--person", person, folder.appendingPathComponent(name).path],
                                             environment: ["DATABASE_URL": db.connectionString])
                return (out.status, out.stderr)
            }
            // iOS 16's unclosed <!ATTLIST and a stray '>' in the DTD, 导出.xml and Export.xml: all the same 8038 records.
            for (i, name) in ["k0rventen-apple-health-grafana__test-export.zip", "k0rventen-apple-health-grafana__test-export2.zip",
                              "k0rventen-apple-health-grafana__test-export3.zip", "k0rventen-apple-health-grafana__test-export4.zip",
                              "k0rventen-apple-health-grafana__test-export-cn.zip"].enumerated() {
                let result = try run(name, "k\(i)")
                #expect(result.status == 0, "\(name): \(result.stderr)")
            }
            let counts = try db.rows("SELECT person, count(*) FROM health.samples WHERE person LIKE 'k%' GROUP BY person ORDER BY person")
            #expect(Set(counts.map { $0[1] }).count == 1, "\(counts)")
            // HRV beats with a decimal comma.
            #expect(try db.scalar("""
                SELECT count(*) FROM health.samples s, jsonb_array_elements(s.payload->'healthExport'->'beats') b
                WHERE s.person = 'k0' AND b->>'time' LIKE '%,%' AND b ? 'secondsOfDay'
                """, as: Int.self) == 13_081)
            // The 2015 German export: attribute names with spaces are skipped and named, the rest read.
            let german = try run("ericwolter-apple-healthkit-csv__Exportieren.xml", "de")
            #expect(german.status == 1)
            #expect(german.stderr.contains("line 5: Record skipped: Specification mandates value for attribute Health"))
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'de'", as: Int.self) == 1492,
                    "1499 records, 7 of them without the value their kind needs (the sexual activity, a category outside the catalog, needs none)")
            // Its heart rates, written before iOS 9 as min, max and average (count/s) over recordCount readings: the average, per minute.
            #expect(try db.scalar("""
                SELECT round(value::numeric, 6) FROM health.samples WHERE person = 'de' AND type = 'HKQuantityTypeIdentifierHeartRate'
                  AND payload->'healthExport'->>'average' = '0.883333' AND payload->'healthExport'->>'recordCount' = '1' LIMIT 1
                """, as: Double.self) == 52.99998)
            #expect(try db.scalar("SELECT min(start_at)::text FROM health.samples WHERE person = 'de' AND source = 'Withings'", as: String.self) != nil)
            // The iOS 12 archive with two readings dated 2030 (its steps and distance): implausible, so
            // quarantined and named, the rest imported, exit 0; its export_cda.xml left alone. Its
            // mindful session, written without a value (none applies), is kept.
            let ios12 = try run("rgosdin-docs__export.zip", "ios12")
            #expect(ios12.status == 0, "\(ios12.stderr)")
            #expect(ios12.stderr.components(separatedBy: "quarantined: startDate \"2030-01-06 12:35:46 -0400\" is after the day after tomorrow")
                        .count - 1 == 2, "\(ios12.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.quarantine WHERE person = 'ios12'", as: Int.self) == 2)
            #expect(!ios12.stderr.contains("value is missing"), "\(ios12.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'ios12' AND type = 'HKCategoryTypeIdentifierMindfulSession' AND value IS NULL",
                                  as: Int.self) == 1)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'ios12' AND start_at >= '2030-01-01'", as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'ios12'", as: Int.self)! > 0)
            // Glucose in mmol<180.1558800000541>/L and energy in Cal; an HRV beat at 7:47:41.86 PM.
            _ = try run("grll-apple-health-landing-zone__export.xml", "grll")
            #expect(try db.scalar("SELECT payload->>'unit' FROM health.samples WHERE person = 'grll' AND type = 'HKQuantityTypeIdentifierBloodGlucose' LIMIT 1",
                                  as: String.self) == "mmol<180.1558800000541>/L")
            #expect(try db.scalar("SELECT value FROM health.samples WHERE person = 'grll' AND type = 'HKQuantityTypeIdentifierActiveEnergyBurned'",
                                  as: Double.self) == 45.3)
            #expect(try db.scalar("""
                SELECT (b->>'secondsOfDay')::float8 FROM health.samples s, jsonb_array_elements(s.payload->'healthExport'->'beats') b
                WHERE s.person = 'grll' AND b->>'time' = '7:47:41.86 PM'
                """, as: Double.self) == 71_261.86)
            // Inline Location routes (before iOS 13) and U+2019 in names.
            _ = try run("dogsheep-healthkit-to-sqlite__tests_export.xml", "dog")
            #expect(try db.scalar("SELECT route_points FROM health.workouts WHERE person = 'dog'", as: Int.self) == 2)
        }
    }
}
