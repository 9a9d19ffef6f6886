import Backlog
import Civil
import DemoData
import Foundation
import Postgres
import Testing
import TestSupport

@Suite("Demo data: coalesced history")
struct CoalescedHistoryTests {
    /// Seven weeks, so days of the first five weeks can be coalesced and resent 14 days later.
    static let plain = DemoGenerator.Options(start: CivilDate("2026-03-02")!, days: 49, format: .json, seed: 42)

    static var coalesced: DemoGenerator.Options {
        var options = plain
        options.coalescedShare = 0.3
        return options
    }

    @Test("coalescing adds combined samples and changes nothing else: every other sample is the same, byte for byte")
    func onlyCombinedSamplesAdded() throws {
        let plain = DemoGenerator(Self.plain).samples()
        let coalesced = DemoGenerator(Self.coalesced).samples()
        let plainUUIDs = Set(plain.map(\.uuid))
        let added = coalesced.filter { !plainUUIDs.contains($0.uuid) }
        #expect(coalesced.count == plain.count + added.count)
        #expect(added.count > 20)
        #expect(Set(added.map(\.type.identifier)) == ["HKQuantityTypeIdentifierStepCount", "HKQuantityTypeIdentifierDistanceWalkingRunning"])
        let byUUID = Dictionary(uniqueKeysWithValues: plain.map { ($0.uuid, $0) })
        for sample in coalesced where plainUUIDs.contains(sample.uuid) {
            #expect(sample.id == byUUID[sample.uuid]!.id)
        }
        // Each combined sample is written 14 days after its own day, and lies within that day.
        for sample in added {
            let day = CentralEuropeanTime.localDate(atMilliseconds: sample.start)
            #expect(CentralEuropeanTime.localDate(atMilliseconds: sample.end - 1) == day)
            #expect(CentralEuropeanTime.localDate(atMilliseconds: sample.written) == day.adding(days: 14))
        }
    }

    @Test("ingested, a coalesced history gives the daily totals of the plain one, and lists each combined sample as not counted")
    func totalsUnchanged() throws {
        let plainBodies = DemoGenerator(Self.plain).bodies()
        let generator = DemoGenerator(Self.coalesced)
        var coalescedBodies: [DemoGenerator.Body] = []
        let summary = generator.generate { coalescedBodies.append($0) }
        #expect(summary.combined > 20)

        try TestPostgres.withDatabase(label: "coalesced_plain") { plainDB in
            try TestPostgres.withDatabase(label: "coalesced_history") { coalescedDB in
                for (db, bodies, label) in [(plainDB, plainBodies, "plain"), (coalescedDB, coalescedBodies, "coalesced")] {
                    let folder = try TempFolder(label)
                    defer { folder.remove() }
                    for body in bodies { _ = try folder.write(body.fileName, body.bytes) }
                    let result = ingest(db, [folder.path])
                    #expect(result.failures == [])
                }
                let totals = """
                    SELECT day, type, value, source, alternatives::text FROM health.daily_totals
                    WHERE person = 'default' ORDER BY day, type
                    """
                let plainTotals = try plainDB.query(totals).texts
                #expect(plainTotals.count > 200)
                #expect(try coalescedDB.query(totals).texts == plainTotals)
                let combined = try coalescedDB.query("""
                    SELECT count(*), min(parts) FROM health.coalesced_samples WHERE person = 'default' AND NOT counted
                    """).texts[0]
                #expect(combined == [String(summary.combined), "2"])
                #expect(try plainDB.scalar("SELECT count(*) FROM health.coalesced_samples WHERE NOT counted", as: Int.self) == 0)
                // What covers other samples without adding up (a long phone count over a short
                // one) is there with or without coalescing, and still counted.
                let counted = "SELECT uuid, parts, value FROM health.coalesced_samples WHERE counted ORDER BY uuid"
                #expect(try coalescedDB.query(counted).texts == plainDB.query(counted).texts)
                #expect(try coalescedDB.scalar("SELECT count(*) FROM health_store.verify_rollups('default')", as: Int.self) == 0)
            }
        }
    }
}
