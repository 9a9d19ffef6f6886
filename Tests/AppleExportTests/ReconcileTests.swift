import AppleExport
import Civil
import DemoData
import Foundation
import Postgres
import Testing
import TestSupport

/// Deletions reconciled from the Health app's export (docs/apple-export.md, "Deletions"): a generated person whose
/// phone pushed every sample through healthd, and whose export (made afterwards) lacks some
/// records — deleted in Health. `import-apple-health --reconcile` marks exactly the pushed
/// samples those records were, and nothing else.
@Suite("Deletions reconciled from the Health app's export")
struct ReconcileTests {
    static let options = DemoGenerator.Options(start: CivilDate("2024-03-01")!, days: 4, seed: 3)

    /// An unpacked generated export with every `every`-th one-line Record of a type healthd sends
    /// removed (deleted in Health before the export was made), and the person's pushed samples.
    struct Person {
        let folder: URL
        /// (type, start as written) of each removed record.
        let removed: [(type: String, start: String)]
        let pushed: [DemoSample]

        /// The export's folder (what `import-apple-health` reads).
        var export: String { folder.appendingPathComponent("apple_health_export").path }
        var xml: URL { folder.appendingPathComponent("apple_health_export/export.xml") }

        /// The ExportDate as written (`2024-03-05 08:00:00 +0100`).
        func exportDate() throws -> String {
            let text = try String(contentsOf: xml, encoding: .utf8)
            return try #require(text.split(separator: "\n").lazy.filter { $0.hasPrefix(" <ExportDate ") }
                .compactMap { ReconcileTests.attribute($0, "value") }.first)
        }

        /// The ExportDate as an instant.
        func exportInstant() throws -> Date { ReconcileTests.written(try exportDate()) }
    }

    /// An export's timestamp as written (`2024-03-05 08:00:00 +0100`).
    static func written(_ text: String) -> Date {
        let parse = DateFormatter()
        parse.locale = Locale(identifier: "en_US_POSIX")
        parse.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return parse.date(from: text)!
    }

    static func person(removingEvery every: Int) throws -> Person {
        let archive = try GeneratedExportTests.generate(days: options.days)
        let folder = archive.deletingLastPathComponent()
        let unzip = try CLIProcess.runProgram("/usr/bin/env", ["python3", "-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])",
                                                              archive.path, folder.path])
        try #require(unzip.status == 0, "\(unzip.stderr)")
        var pushed: [DemoSample] = []
        DemoAppleExport.forEachDay(options) { _, samples in pushed += samples.filter { $0.type.group != "other" } }
        let types = Set(pushed.map(\.type.identifier))
        let xml = folder.appendingPathComponent("apple_health_export/export.xml")
        var removed: [(String, String)] = []
        var seen = 0
        let kept = try String(contentsOf: xml, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            guard line.hasPrefix(" <Record "), line.hasSuffix("/>"), let type = attribute(line, "type"), types.contains(type) else { return true }
            seen += 1
            guard seen % every == 0 else { return true }
            removed.append((type, attribute(line, "startDate")!))
            return false
        }
        try kept.joined(separator: "\n").write(to: xml, atomically: true, encoding: .utf8)
        return Person(folder: folder, removed: removed, pushed: pushed)
    }

    static func attribute(_ line: Substring, _ name: String) -> String? {
        guard let start = line.range(of: " \(name)=\"") else { return nil }
        return String(line[start.upperBound...].prefix { $0 != "\"" })
    }

    /// healthd's batches of the person's samples, through the receiver's own store call.
    static func push(_ db: TestDatabase, _ samples: [DemoSample]) throws {
        for chunk in stride(from: 0, to: samples.count, by: 1000).map({ Array(samples[$0..<min($0 + 1000, samples.count)]) }) {
            _ = try TwinTests.push(db, samples: chunk, window: ("2024-02-28T00:00:00.000+01:00", "2024-03-06T00:00:00.000+01:00"))
        }
    }

    static func reconcile(_ db: TestDatabase, _ path: String, _ flags: [String] = []) throws -> CLIProcess.Output {
        try CLIProcess.run(["import-apple-health", path, "--reconcile", "--json"] + flags, environment: ["DATABASE_URL": db.connectionString])
    }

    static func json(_ out: CLIProcess.Output) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], "\(out.stdout)")
    }

    /// (type, start in UTC to the second) of a list of removed records, sorted.
    static func instants(_ removed: [(type: String, start: String)]) -> [String] {
        let print = ISO8601DateFormatter()
        return removed.map { "\($0.type) \(print.string(from: written($0.start)))" }.sorted()
    }

    @Test("the pushed samples whose records the export lacks are marked deleted, exactly those; they leave every view and rollup, and healthd sending one again brings it back")
    func marksExactlyTheDeleted() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        #expect(person.removed.count > 20)
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let before = try db.rows("SELECT day::text, steps::text FROM health.daily_summary ORDER BY day")
            let out = try Self.reconcile(db, person.export)
            #expect(out.status == 0, "\(out.stderr)")
            let summary = try Self.json(out)
            #expect(summary["deleted"] as? Int == person.removed.count)
            let byType = try #require(summary["deleted_by_type"] as? [String: Int])
            #expect(byType.values.reduce(0, +) == person.removed.count)
            #expect(byType["HKQuantityTypeIdentifierStepCount"] == person.removed.filter { $0.type == "HKQuantityTypeIdentifierStepCount" }.count)

            let marked = try db.rows("""
                SELECT type || ' ' || to_char(start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM health.deleted_samples ORDER BY 1
                """).compactMap { $0[0] }
            #expect(marked == Self.instants(person.removed), "exactly the removed records' samples are marked")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples WHERE export_date = $1::timestamptz",
                                  [try person.exportInstant()], as: Int.self) == person.removed.count)
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE deleted_at IS NOT NULL", as: Int.self) == person.removed.count)
            #expect(try db.rollupDifferences() == 0)

            // The marked steps count nowhere: each day's winner is its own samples but the marked ones.
            let steps = try db.rows("""
                SELECT t.day::text, t.value::text, (SELECT sum(s.value)::text FROM health.samples s
                  WHERE s.person = t.person AND s.day = t.day AND s.type = t.type AND s.source = t.source AND s.deleted_at IS NULL)
                FROM health.daily_totals t WHERE t.type = 'HKQuantityTypeIdentifierStepCount' ORDER BY 1
                """)
            #expect(!steps.isEmpty && steps.allSatisfy { $0[1] == $0[2] }, "\(steps)")
            #expect(try db.rows("SELECT day::text, steps::text FROM health.daily_summary ORDER BY day") != before)

            // healthd sends one of them again: it exists again.
            let uuid = try #require(try db.scalar("SELECT uuid::text FROM health.deleted_samples ORDER BY uuid LIMIT 1", as: String.self))
            let again = try #require(person.pushed.first { $0.uuid.lowercased() == uuid })
            try Self.push(db, [again])
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == person.removed.count - 1)
            #expect(try db.scalar("SELECT deleted_at IS NULL FROM health.samples WHERE uuid = $1::uuid", [uuid], as: Bool.self) == true)
            #expect(try db.rollupDifferences() == 0)
        }
    }

    @Test("a later export holding the twins of marked pushed samples brings them back, with their rollups")
    func laterExportRevives() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let before = try db.rows("SELECT day::text, steps::text FROM health.daily_summary ORDER BY day")
            #expect(try Self.reconcile(db, person.export).status == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == person.removed.count)
            // The whole export (the archive the removed records were taken from) imported.
            let full = person.folder.appendingPathComponent("export.zip").path
            let out = try CLIProcess.run(["import-apple-health", full], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == 0)
            #expect(try db.rows("SELECT day::text, steps::text FROM health.daily_summary ORDER BY day") == before)
            #expect(try db.rollupDifferences() == 0)
        }
    }

    @Test("--dry-run prints what would be marked, per type and month, and changes nothing, the import neither")
    func dryRun() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let held = try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(deleted_at) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries), (SELECT count(*) FROM health_store.export_records)")
            let out = try Self.reconcile(db, person.export, ["--dry-run"])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try Self.json(out)["deleted"] as? Int == person.removed.count)
            let records = try String(contentsOfFile: person.export + "/export.xml", encoding: .utf8).components(separatedBy: "<Record ").count - 1
            #expect(try records > 0 && Self.json(out)["records_read"] as? Int == records, "records_read counts Record elements, as the import does")
            #expect(out.stderr.contains("would be marked deleted") && out.stderr.contains("2024-03"), "\(out.stderr)")
            #expect(try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(deleted_at) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries), (SELECT count(*) FROM health_store.export_records)") == held)
            #expect(try db.scalar("SELECT count(*) FROM health_store.reconciliations", as: Int.self) == 0)
        }
    }

    @Test("the same export imported again after a reconciliation marked its records brings them back; unchanged and nothing marked since, it is not read")
    func sameFileRevives() throws {
        let whole = try Self.person(removingEvery: 1_000_000_000), lacking = try Self.person(removingEvery: 25)
        defer {
            try? FileManager.default.removeItem(at: whole.folder)
            try? FileManager.default.removeItem(at: lacking.folder)
        }
        try TestPostgres.withDatabase { db in
            let env = ["DATABASE_URL": db.connectionString]
            func importWhole() throws -> String {
                let out = try CLIProcess.run(["import-apple-health", whole.export], environment: env)
                #expect(out.status == 0, "\(out.stderr)")
                return out.stderr
            }
            _ = try importWhole()
            #expect(try Self.reconcile(db, lacking.export).status == 0)
            let marked = try #require(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self))
            #expect(marked == lacking.removed.count && marked > 0)
            let again = try importWhole()
            #expect(!again.contains("unchanged"), "\(again)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == 0, "every mark gone: the file holds them")
            #expect(try db.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)
            #expect(try importWhole().contains("unchanged since it was imported"), "read once after the reconciliation, then skipped again")
        }
    }

    @Test("refused, exit 1 and nothing changed: another phone's export (a type would lose everything), and an export older than the last one reconciled")
    func refusals() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        try TestPostgres.withDatabase { db in
            // Someone else's export: none of this person's readings is in it.
            let stranger = DemoGenerator.Options(start: CivilDate("2024-03-01")!, days: 4, seed: 99)
            var theirs: [DemoSample] = []
            DemoAppleExport.forEachDay(stranger) { _, samples in theirs += samples.filter { $0.type.group != "other" } }
            try Self.push(db, theirs)
            let held = try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries)")
            let out = try Self.reconcile(db, person.export)
            #expect(out.status == 1)
            #expect(out.stderr.contains("more than 20 %") && out.stderr.contains("TypeIdentifier"), "\(out.stderr)")
            #expect(try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries)") == held,
                    "nothing imported, nothing marked")
            #expect(try db.scalar("SELECT count(*) FROM health_store.export_records", as: Int.self) == 0)
            // The dry run the refusal's hint suggests shows what --force would mark, then refuses as the run does.
            let dry = try Self.reconcile(db, person.export, ["--dry-run"])
            #expect(dry.status == 1)
            let object = try Self.json(dry)
            let byType = try #require(object["deleted_by_type"] as? [String: Int])
            // All of theirs of every type the export carries (it has no record of some: those are never touched).
            let theirCounts = Dictionary(theirs.map { ($0.type.identifier, 1) }, uniquingKeysWith: +)
            #expect(byType.count > 10 && byType.allSatisfy { theirCounts[$0.key] == $0.value }, "\(byType)")
            let total = byType.values.reduce(0, +)
            #expect(object["deleted"] as? Int == total)
            #expect(dry.stderr.contains("\(total) samples would be, with --force, marked deleted") && dry.stderr.contains("more than 20 %"),
                    "\(dry.stderr)")
            #expect((object["refused"] as? String)?.contains("more than 20 %") == true)
            // Every type of theirs losing everything is named in the refusal, not the worst alone.
            #expect(byType.keys.allSatisfy { out.stderr.contains($0) }, "\(out.stderr)")
            #expect(try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries)") == held)
            #expect(try db.scalar("SELECT count(*) FROM health_store.samples WHERE deleted_at IS NOT NULL", as: Int.self) == 0)
        }
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            #expect(try Self.reconcile(db, person.export).status == 0)
            let marked = try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self)
            // The same export, dated a day earlier: older than the one reconciled.
            let date = try person.exportDate()
            let earlier = "2024-03-0" + String(Int(String(date[date.index(date.startIndex, offsetBy: 9)]))! - 1) + date.dropFirst(10)
            let text = try String(contentsOf: person.xml, encoding: .utf8)
            try text.replacingOccurrences(of: "<ExportDate value=\"\(date)\"/>", with: "<ExportDate value=\"\(earlier)\"/>")
                .write(to: person.xml, atomically: true, encoding: .utf8)
            let out = try Self.reconcile(db, person.export)
            #expect(out.status == 1)
            #expect(out.stderr.contains("older than the last one reconciled"), "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == marked)
        }
    }

    @Test("a record quarantined for what it holds (a unit with no conversion) refuses a reconciliation as an unreadable one does: the sample it stands for would look deleted")
    func unreadRecordRefuses() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        var lines = try String(contentsOf: person.xml, encoding: .utf8).components(separatedBy: "\n")
        let index = try #require(lines.firstIndex { $0.hasPrefix(" <Record type=\"HKQuantityTypeIdentifierStepCount\"") && $0.contains(" unit=\"count\"") })
        lines[index] = lines[index].replacingOccurrences(of: " unit=\"count\"", with: " unit=\"furlong\"")
        try lines.joined(separator: "\n").write(to: person.xml, atomically: true, encoding: .utf8)
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let out = try Self.reconcile(db, person.export)
            #expect(out.status == 1)
            #expect(out.stderr.contains("1 elements of \(person.export) could not be read"), "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == 0)
        }
    }

    @Test("never touched: samples starting at or after the ExportDate, and types the export carries no record of")
    func neverTouched() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            // At the ExportDate itself: not before it.
            let at = Int64((try person.exportInstant().timeIntervalSince1970 * 1000).rounded())
            let later = DemoSample(uuid: "0E5C1D2A-1111-4000-8000-000000000001", type: .steps, source: "com.example.phone",
                                   start: at, end: at + 300_000, value: "12")
            let unknown = DemoSample(uuid: "0E5C1D2A-1111-4000-8000-000000000002",
                                     type: DemoType(identifier: "HKQuantityTypeIdentifierNumberOfAlcoholicBeverages", group: "other", kind: "quantity"),
                                     source: "com.example.phone",
                                     start: Bodies.instant("2024-03-02T20:00:00.000+01:00").millisecondsSinceEpoch,
                                     end: Bodies.instant("2024-03-02T20:00:00.000+01:00").millisecondsSinceEpoch, value: "1")
            try Self.push(db, [later, unknown])
            let out = try Self.reconcile(db, person.export)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples WHERE uuid IN ($1::uuid, $2::uuid)",
                                  [later.uuid, unknown.uuid], as: Int.self) == 0)
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == person.removed.count)
        }
    }

    /// `original` (an export.xml's text) with `percent` % of its step-count Records left out
    /// (those whose index among them ends in 00 to `percent - 1`), and its ExportDate `date` if given.
    static func export(_ original: String, leavingOutSteps percent: Int, date: (from: String, to: String)? = nil) -> String {
        var index = 0
        var text = original.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            guard line.hasPrefix(" <Record type=\"HKQuantityTypeIdentifierStepCount\"") else { return true }
            index += 1
            return index % 100 >= percent
        }.joined(separator: "\n")
        if let date { text = text.replacingOccurrences(of: "<ExportDate value=\"\(date.from)\"/>", with: "<ExportDate value=\"\(date.to)\"/>") }
        return text
    }

    static func stepsMarked(_ db: TestDatabase) throws -> Int {
        try db.scalar("SELECT count(*) FROM health.deleted_samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: Int.self) ?? -1
    }

    @Test("exports each leaving out a further 18 % of the steps: the second is refused, counting what the first marked; --force marks it; after a reconciliation that marks nothing the count starts again")
    func lossesAddUp() throws {
        let person = try Self.person(removingEvery: 1_000_000)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        let original = try String(contentsOf: person.xml, encoding: .utf8)
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let steps = try #require(try db.scalar("SELECT count(*) FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: Int.self))
            try Self.export(original, leavingOutSteps: 18).write(to: person.xml, atomically: true, encoding: .utf8)
            let first = try Self.reconcile(db, person.export)
            #expect(first.status == 0, "\(first.stderr)")
            let afterFirst = try Self.stepsMarked(db)
            #expect(Double(afterFirst) > 0.15 * Double(steps) && Double(afterFirst) < 0.2 * Double(steps), "\(afterFirst) of \(steps)")

            // 18 % of what is left more (33 % in all): before, each run was judged alone and passed.
            try Self.export(original, leavingOutSteps: 33).write(to: person.xml, atomically: true, encoding: .utf8)
            let second = try Self.reconcile(db, person.export)
            #expect(second.status == 1, "\(second.stderr)")
            #expect(second.stderr.contains("more than 20 %") && second.stderr.contains("HKQuantityTypeIdentifierStepCount")
                    && second.stderr.contains("with the \(afterFirst) marked since the last reconciliation that marked nothing"), "\(second.stderr)")
            #expect(try Self.stepsMarked(db) == afterFirst, "nothing marked")
            #expect(try db.scalar("SELECT count(*) FROM health_store.reconciliations", as: Int.self) == 1)

            let forced = try Self.reconcile(db, person.export, ["--force"])
            #expect(forced.status == 0, "\(forced.stderr)")
            let afterForced = try Self.stepsMarked(db)
            #expect(afterForced > afterFirst)
            // A forced reconciliation is the person's word: the count starts after it.
            try Self.export(original, leavingOutSteps: 43).write(to: person.xml, atomically: true, encoding: .utf8)
            #expect(try Self.reconcile(db, person.export).status == 0)

            // The whole export brings every marked sample back and marks nothing: from there, one
            // more 18 % passes, a further 18 % does not.
            try original.write(to: person.xml, atomically: true, encoding: .utf8)
            let whole = try Self.reconcile(db, person.export)
            #expect(whole.status == 0, "\(whole.stderr)")
            #expect(try Self.json(whole)["deleted"] as? Int == 0)
            #expect(try Self.stepsMarked(db) == 0)
            try Self.export(original, leavingOutSteps: 18).write(to: person.xml, atomically: true, encoding: .utf8)
            #expect(try Self.reconcile(db, person.export).status == 0)
            try Self.export(original, leavingOutSteps: 33).write(to: person.xml, atomically: true, encoding: .utf8)
            #expect(try Self.reconcile(db, person.export).status == 1)
            #expect(try db.rollupDifferences() == 0)
        }
    }

    @Test("an ExportDate after the day after tomorrow (UTC) is refused, nothing imported; --force takes an export older than the last one reconciled, which undoes a wrong date")
    func wrongExportDates() throws {
        let person = try Self.person(removingEvery: 25)
        defer { try? FileManager.default.removeItem(at: person.folder) }
        let original = try String(contentsOf: person.xml, encoding: .utf8)
        let date = try person.exportDate()
        try TestPostgres.withDatabase { db in
            try Self.push(db, person.pushed)
            let held = try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries)")
            try Self.export(original, leavingOutSteps: 0, date: (date, "2099-01-01 00:00:00 +0000")).write(to: person.xml, atomically: true, encoding: .utf8)
            let future = try Self.reconcile(db, person.export)
            #expect(future.status == 1)
            #expect(future.stderr.contains("its ExportDate 2099-01-01T00:00:00.000+00:00 is after the day after tomorrow"), "\(future.stderr)")
            #expect(try db.rows("SELECT (SELECT count(*) FROM health_store.samples), (SELECT count(*) FROM health_store.deliveries)") == held)
            #expect(try db.scalar("SELECT count(*) FROM health_store.reconciliations", as: Int.self) == 0)

            // A reconciliation dated 2099, as an older version accepted: every real export is older.
            try db.query("INSERT INTO health_store.reconciliations (person, export_date, reconciled_at, path, deleted) VALUES ('default', '2099-01-01Z', now() - interval '1 day', 'x', 0)")
            try original.write(to: person.xml, atomically: true, encoding: .utf8)
            let older = try Self.reconcile(db, person.export)
            #expect(older.status == 1)
            #expect(older.stderr.contains("older than the last one reconciled") && older.stderr.contains("pass --force"), "\(older.stderr)")
            let forced = try Self.reconcile(db, person.export, ["--force"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.deleted_samples", as: Int.self) == person.removed.count)
            // The last one reconciled is now the real one: the same export again needs no --force.
            #expect(try Self.reconcile(db, person.export).status == 0)
        }
    }
}
