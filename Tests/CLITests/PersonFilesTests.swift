import DemoData
import Foundation
import Hashing
import HealthPayload
import Postgres
import Testing
import TestSupport
import Warehouse

/// The files of `person export` and what `person import` reads of them (docs/people.md): large
/// bodies, a person with no healthd sample, the bound, the manifest as the only list, modes.
@Suite("person: the export's files")
struct PersonFilesTests {
    /// A fresh folder path (not created).
    static func folder(_ label: String) -> String {
        NSTemporaryDirectory() + "hw-person-\(label)-\(UUID().uuidString)"
    }

    /// A person with one healthd sample, exported to `folder`; the database's URL flags.
    static func exported(_ db: TestDatabase, person: String, to folder: String) throws -> [String] {
        let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
        defer { pool.close() }
        let body = PersonSafetyTests.batch(7)
        guard case .batches(let batches) = try PayloadDecoder.decode(json: body) else { throw PersonFilesError("no batch") }
        try BatchStore(pool: pool).store(batches, person: person, origin: .http, bodySHA256: SHA256.hash(body))
        let url = ["--database-url", db.connectionString]
        let out = try CLIProcess.run(["person", "export", person, "--to", folder] + url)
        try #require(out.status == 0, "\(out.stderr)")
        return url
    }

    /// `person import lee --from folder` must be refused: exit 1, `message` on stderr, nothing of lee stored.
    static func expectRefused(_ db: TestDatabase, _ folder: String, _ url: [String], _ message: String) throws {
        let out = try CLIProcess.run(["person", "import", "lee", "--from", folder] + url)
        #expect(out.status == 1)
        #expect(out.stderr.contains(message), "\(out.stderr)")
        #expect(try PersonTests.storedRows(db, person: "lee") == 0)
    }

    @Test("a 31 MB Stridee workout of a person with no healthd sample: exported to a body over 32 MiB, deleted, imported whole")
    func largeWorkoutRoundTrip() throws {
        let folder = Self.folder("large")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            // The audit's body: 31.3 MB of bare route points, under the receiver's 30 MiB.
            let body = StrideeBodies.denseRoute(bytes: 31_300_000)
            _ = try StrideeStore(pool: pool).storeWorkout(try StrideeDecoder.decodeWorkout(body), person: "rider", connect: true,
                                                          bodySHA256: SHA256.hash(body))
            let routes = "SELECT points || ' ' || distance_m || ' ' || elevation_gain_m FROM health.workout_routes"
            let before = try db.scalar(routes, as: String.self)
            let points = try #require(try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self))
            #expect(points > 600_000)
            let url = ["--database-url", db.connectionString]
            let exported = try CLIProcess.run(["person", "export", "rider", "--to", folder] + url)
            #expect(exported.status == 0, "\(exported.stderr)")
            let workout = "\(folder)/workouts/\(StrideeBodies.rideUUID.lowercased()).json"
            let size = try #require(try FileManager.default.attributesOfItem(atPath: workout)[.size] as? Int)
            #expect(size > 32 << 20, "the body that crashed person import at 32 MiB and more: \(size) bytes")
            #expect(!FileManager.default.fileExists(atPath: "\(folder)/healthd"))
            #expect(try CLIProcess.run(["person", "delete", "rider", "--yes"] + url).status == 0)

            // Before: exit 139 (SIGSEGV copying the file), and "healthd: cannot read" for a person without healthd bodies.
            let imported = try CLIProcess.run(["person", "import", "rider", "--from", folder] + url)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try db.scalar("SELECT count(*) FROM health.workout_route_points", as: Int.self) == points)
            #expect(try db.scalar(routes, as: String.self) == before)
            #expect(try db.scalar("SELECT count(*) FROM health.workouts WHERE origin = 'stridee'", as: Int.self) == 1)
        }
    }

    @Test("a listed file over 256 MiB is refused, named, exit 1, nothing stored")
    func overTheBound() throws {
        let folder = Self.folder("bound")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let url = try Self.exported(db, person: "kim", to: folder)
            // A sparse file: 256 MiB and one byte, no disk.
            let body = "\(folder)/healthd/000001.json"
            #expect(truncate(body, off_t(PersonExporter.maxFileBytes + 1)) == 0)
            try Self.expectRefused(db, folder, url, "healthd/000001.json is 268435457 bytes; a file of a person's export is at most 256 MiB")
        }
    }

    @Test("only what the manifest lists is read: a body added to healthd/ is left alone")
    func unlistedFileIgnored() throws {
        let folder = Self.folder("unlisted")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let url = try Self.exported(db, person: "kim", to: folder)
            try Data(PersonSafetyTests.batch(8)).write(to: URL(fileURLWithPath: "\(folder)/healthd/000002.json"))
            let out = try CLIProcess.run(["person", "import", "lee", "--from", folder] + url)
            #expect(out.status == 0, "\(out.stderr)")
            // Before: 2, the unlisted body stored too.
            #expect(try db.scalar("SELECT count(*) FROM health.samples WHERE person = 'lee'", as: Int.self) == 1)
        }
    }

    @Test("a listed file that is a symbolic link, or lies behind one, is refused even when its bytes match: exit 1, nothing stored",
          arguments: ["file", "folder"])
    func linksRefused(what: String) throws {
        let folder = Self.folder("link")
        let outside = Self.folder("outside")
        defer {
            try? FileManager.default.removeItem(atPath: folder)
            try? FileManager.default.removeItem(atPath: outside)
        }
        try TestPostgres.withDatabase { db in
            let url = try Self.exported(db, person: "kim", to: folder)
            // The same bytes outside the folder, the listed path a link to them.
            try FileManager.default.moveItem(atPath: "\(folder)/healthd", toPath: outside)
            if what == "file" {
                try FileManager.default.createDirectory(atPath: "\(folder)/healthd", withIntermediateDirectories: false)
                try FileManager.default.createSymbolicLink(atPath: "\(folder)/healthd/000001.json", withDestinationPath: "\(outside)/000001.json")
            } else {
                try FileManager.default.createSymbolicLink(atPath: "\(folder)/healthd", withDestinationPath: outside)
            }
            try Self.expectRefused(db, folder, url, "healthd/000001.json is a symbolic link, lies behind one, or is not a regular file")
        }
    }

    @Test("person export writes its folders 0700 and its files 0600, from the start")
    func privateModes() throws {
        let folder = Self.folder("modes")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            _ = try Self.exported(db, person: "kim", to: folder)
            var modes: [String: Int] = [:]
            let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
            for case let path as String in enumerator {
                modes[path] = try #require(try FileManager.default.attributesOfItem(atPath: "\(folder)/\(path)")[.posixPermissions] as? Int)
            }
            modes["."] = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
            #expect(modes["manifest.json"] == 0o600 && modes["healthd/000001.json"] == 0o600 && modes["healthd"] == 0o700 && modes["."] == 0o700,
                    "\(modes)")
            // Before: 0755 and 0644.
            #expect(modes.allSatisfy { $0.value == 0o600 || $0.value == 0o700 }, "\(modes)")
        }
    }

    @Test("samples whose payloads are large are cut into bodies by their stored size too, and come back whole")
    func bodiesCutBySize() throws {
        let folder = Self.folder("cut")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try TestPostgres.withDatabase { db in
            let pool = PostgresPool(connectionString: db.connectionString, maxConnections: 1)
            defer { pool.close() }
            // 40 samples of one export, each carrying 1 MB that does not compress: 40 MB, one body by count.
            var random = SeededRandom(seed: 11)
            for part in 0..<10 {
                let samples = (0..<4).map { i in
                    let n = part * 4 + i
                    let filler = Data((0..<750_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }).base64EncodedString()
                    let sample = Bodies.quantity(uuid: String(format: "E0000000-0000-4000-8000-%012d", n),
                                                 start: "2026-08-21T10:\(String(format: "%02d", n)):00.000+02:00", value: "\(n)")
                    return String(sample.dropLast()) + ",\"note\":\"\(filler)\"}"
                }
                let body = Bodies.json(samples: samples, sequence: part + 1, isFinal: part == 9)
                guard case .batches(let batches) = try PayloadDecoder.decode(json: body) else { throw PersonFilesError("no batch") }
                try BatchStore(pool: pool).store(batches, person: "big", origin: .http, bodySHA256: SHA256.hash(body))
            }
            let before = try PersonTests.snapshot(db, person: "big")
            let url = ["--database-url", db.connectionString]
            #expect(try CLIProcess.run(["person", "export", "big", "--to", folder] + url).status == 0)
            let bodies = try FileManager.default.contentsOfDirectory(atPath: "\(folder)/healthd")
            #expect(bodies.count == 3, "\(bodies)")
            #expect(try CLIProcess.run(["person", "delete", "big", "--yes"] + url).status == 0)
            let imported = try CLIProcess.run(["person", "import", "big", "--from", folder] + url)
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try PersonTests.snapshot(db, person: "big") == before)
        }
    }
}

struct PersonFilesError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
