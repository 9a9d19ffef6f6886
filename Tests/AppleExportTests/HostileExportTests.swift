import AppleExport
import DemoData
import Foundation
import Testing
import TestSupport

/// The second audit's files (`HostileExport`), small versions, through the release path a user
/// runs: what is over the reader's bounds is skipped and named, the rest imported; a route file
/// named a hundred ways is read once. Figures for the large versions are the benchmark's
/// (`health-warehouse-bench export-limits`); here the peak RSS is checked only as a wide bound.
@Suite("Hostile exports")
struct HostileExportTests {
    /// export.zip of `kind` with `mib` MiB in its huge part, in a fresh folder.
    static func archive(_ kind: HostileExport.Kind, mib: Int) throws -> URL {
        try archive(HostileExport.entries(kind, hugeBytes: mib << 20))
    }

    /// export.zip of `entries`, in a fresh folder.
    static func archive(_ entries: [(name: String, next: () -> [UInt8]?)]) throws -> URL {
        let folder = try Exports.temporaryFolder()
        let archive = folder.appendingPathComponent("export.zip")
        let zip = try ZipWriter(path: archive.path, modified: 1_710_230_400)
        for entry in entries { try zip.add(entry.name, entry.next) }
        try zip.close()
        return archive
    }

    /// `import-apple-health archive` by the built binary under GNU time: its exit status and peak RSS in KiB.
    static func importMeasured(_ archive: URL, _ db: TestDatabase) throws -> (status: Int32, kib: Int) {
        let out = try CLIProcess.runProgram("/usr/bin/time", ["-f", "peak-kib=%M", CLIProcess.binaryPath, "import-apple-health", archive.path],
                                            environment: ["DATABASE_URL": db.connectionString])
        let line = try #require(out.stderr.split(separator: "\n").last { $0.hasPrefix("peak-kib=") }, "\(out.stderr.suffix(2000))")
        return (out.status, try #require(Int(line.dropFirst("peak-kib=".count))))
    }

    @Test("a 3 MiB attribute, comment or GPX <ele> is skipped and named with its line; both records around it are imported",
          arguments: [
            (HostileExport.Kind.attribute, "line 5: Record skipped: <Record> has a start tag of 3145902 bytes; at most 1048576 are read"),
            (.comment, "line 5: content skipped: a comment of 3145735 bytes; at most 1048576 are read"),
            (.elevation, "route /workout-routes/route_1.gpx skipped: line 4: a field of more than 256 bytes; the workout is kept without it"),
          ])
    func skippedAndNamed(kind: HostileExport.Kind, named: String) throws {
        let archive = try Self.archive(kind, mib: 3)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", archive.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 1, "\(out.stderr)")
            #expect(out.stderr.contains(named), "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: Int.self) == 2)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
            #expect(json["skipped"] as? Int == 1)
        }
    }

    @Test("a route file a workout names a hundred ways (/./, //, .., letter case) is read once: one route of its own points")
    func routeNamedManyWays() throws {
        let archive = try Self.archive(.routeSpellings, mib: 0)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            let out = try CLIProcess.run(["import-apple-health", "--json", archive.path], environment: ["DATABASE_URL": db.connectionString])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self) == HostileExport.routePoints)
            #expect(try db.scalar("SELECT points FROM health.workout_routes", as: Int.self) == HostileExport.routePoints)
        }
    }

    @Test("a 64 MiB attribute, comment or GPX <ele> imports with a peak RSS far under 256 MB (the reader before took 300 MB and more)",
          arguments: [HostileExport.Kind.attribute, .comment, .elevation])
    func memoryBound(kind: HostileExport.Kind) throws {
        let archive = try Self.archive(kind, mib: 64)
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            let (status, kib) = try Self.importMeasured(archive, db)
            #expect(status == 1)
            #expect(kib < 200 * 1024, "peak RSS \(kib / 1024) MiB")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE type = 'HKQuantityTypeIdentifierStepCount'", as: Int.self) == 2)
        }
    }

    @Test("120 records each with a 1 MB attribute import in a peak RSS far under 256 MB: memory follows what is held at once, not what was read (before: 100 took 213 MB)")
    func manyLargeAttributes() throws {
        let archive = try Self.archive(HostileExport.largeAttributes(records: 120, bytes: 1_000_000))
        defer { try? FileManager.default.removeItem(at: archive.deletingLastPathComponent()) }
        try TestPostgres.withDatabase { db in
            let (status, kib) = try Self.importMeasured(archive, db)
            #expect(status == 0)
            #expect(kib < 160 * 1024, "peak RSS \(kib / 1024) MiB")
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE length(payload->'healthExport'->>'note') = 1000000", as: Int.self) == 120)
        }
    }
}
