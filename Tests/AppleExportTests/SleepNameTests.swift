import Foundation
import Testing
import TestSupport

/// A sleep stage the export names in a way this version does not know (a later iOS's) keeps its
/// name in the payload and no value, and counts in `daily_sleep.unknown_min` alone, as a stage
/// healthd sends with a number and no name does (CONTRACT.md §2, §5; migration 0102).
@Suite("Export sleep names")
struct SleepNameTests {
    @Test("an unknown sleep stage name counts only in unknown_min; the known stages of the night as before")
    func unknownStage() throws {
        let night = [
            #"<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-03-10 01:00:00 +0100" endDate="2024-03-10 02:00:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore"/>"#,
            #"<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-03-10 02:00:00 +0100" endDate="2024-03-10 02:25:00 +0100" value="HKCategoryValueSleepAnalysisAsleepLucid"/>"#,
            #"<Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Watch" startDate="2024-03-10 02:25:00 +0100" endDate="2024-03-10 03:00:00 +0100" value="HKCategoryValueSleepAnalysisAsleepDeep"/>"#,
        ]
        let folder = try Exports.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("export.xml")
        try Data(ExportBoundsTests.export(night).utf8).write(to: file)
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", file.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            let sleep = try db.rows("SELECT source, asleep_min, core_min, deep_min, unknown_min FROM health.daily_sleep WHERE day = '2024-03-10'")
            #expect(sleep.map { $0.map { $0 ?? "∅" } } == [["Watch", "95", "60", "35", "25"]], "\(sleep)")
            #expect(try db.rows("""
                SELECT value, category_name, strpos(payload::text, '"HKCategoryValueSleepAnalysisAsleepLucid"') > 0
                FROM health.samples WHERE start_at = '2024-03-10 02:00:00+01'
                """).map { $0.map { $0 ?? "∅" } } == [["∅", "∅", "t"]], "the name as written, no value")
            #expect(try db.rollupDifferences() == 0)
        }
    }
}
