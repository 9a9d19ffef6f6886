import Civil
import DemoData
import Foundation
import HealthPayload

/// `health-warehouse generate --days N [--start DATE] [--format json|csv|apple-export] [--out DIR] [--seed S] [--malformed]`
struct GenerateCommand: Command {
    static let name = "generate"
    static let summary = "write realistic demo bodies (JSON or CSV), or the Health app's export.zip"
    static let help = """
        usage: health-warehouse generate --days N [--start YYYY-MM-DD] [--format json|csv|apple-export]
                                         [--out DIR] [--seed S] [--malformed] [--coalesce PERCENT]
                                         [--stridee-out DIR]

        Writes realistic healthd v1 bodies, one file per body, for trying the views, Grafana
        and `ingest`: an iPhone and an Apple Watch writing overlapping steps, distance and
        energy; heart rate every few minutes and dense during workouts; daily resting and
        walking heart rate and HRV; nightly sleep stages (now and then a stage with no name);
        a weekly weigh-in; about four workouts a week; some vitals. The phone exports a few
        times a day (basis anchor, batches of at most 1000 samples) and on Sundays once by
        hand (basis window, resending the last 3 hours). Timestamps carry Europe/Berlin's
        offset at export time.

        The same seed and start date give the same bytes. Files are named
        DATE-NNNN.json (or .csv) so a folder ingests in delivery order:
        `health-warehouse ingest DIR`.

          --days N          days to simulate, 1 to 3650 (about 1000 samples a day)
          --start DATE      first day, YYYY-MM-DD (default: today minus N days, UTC)
          --format F        json (default) or csv; apple-export writes DIR/export.zip instead:
                            the same person as the Health app exports them (export.xml and a
                            GPX route per outdoor workout), for `import-apple-health`
          --malformed       with apple-export: one Record the app could not have written
          --out DIR         folder to write into, created if missing (default ./backlog);
                            files of the same names are replaced, others left alone
          --seed S          a whole number from 0 to 18446744073709551615 (default 1)
          --coalesce P      coalesce P percent of the days (0 to 100, default 0) as Apple
                            Health does with older history: 14 days later the phone's step
                            and distance samples of such a day arrive again as a few
                            combined samples with new uuids (docs/views.md, "Coalescing")
          --stridee-out DIR also write the same person's Stridee bodies there (docs/stridee.md):
                            DATE-workout-UUID.json (healthkit.v1: each watch workout, its
                            heart rate and, outdoors, a GPS route; the same uuid as its healthd
                            sample, so the two are one workout) and DATE-wellness.json
                            (healthkit.wellness.v1: HealthKit's daily totals, sleep, HRV…).
                            POST them to /v1/accounts/PERSON/apple/workouts or …/wellness;
                            `ingest` does not read them

        Prints what it wrote on stderr.
        """

    var days: Int
    var start: CivilDate
    var format: PayloadFormat
    var out: String
    var seed: UInt64
    var coalescePercent: Int
    var strideeOut: String?
    var appleExport: Bool
    var malformed: Bool

    init(arguments: [String]) throws {
        let parsed = try ParsedArguments(arguments, command: Self.name, flags: ["malformed"],
                                         options: ["days", "start", "format", "out", "seed", "coalesce", "stridee-out"])
        guard parsed.positionals.isEmpty else {
            throw UsageError(message: "generate takes no arguments, got \"\(parsed.positionals[0])\"", command: Self.name)
        }
        guard parsed.value("days") != nil else {
            throw UsageError(message: "generate needs --days N, e.g. --days 30", command: Self.name)
        }
        days = try parsed.integer("days", default: 30, range: 1...3650, command: Self.name)
        if let text = parsed.value("start") {
            guard let date = CivilDate(text) else {
                throw UsageError(message: "--start must be a date like 2026-08-01, got \"\(text)\"", command: Self.name)
            }
            start = date
        } else {
            let today = CivilDate(daysSinceEpoch: Int(floor(Date().timeIntervalSince1970 / 86_400)))
            start = today.adding(days: -days)
        }
        let formatText = parsed.value("format") ?? "json"
        appleExport = formatText == "apple-export"
        malformed = parsed.has("malformed")
        guard let format = appleExport ? .json : PayloadFormat(rawValue: formatText) else {
            throw UsageError(message: "--format must be json, csv or apple-export, got \"\(formatText)\"", command: Self.name)
        }
        if malformed && !appleExport { throw UsageError(message: "--malformed goes with --format apple-export", command: Self.name) }
        self.format = format
        out = parsed.value("out") ?? "./backlog"
        guard !out.isEmpty else { throw UsageError(message: "--out must name a folder", command: Self.name) }
        let seedText = parsed.value("seed") ?? "1"
        guard let seed = UInt64(seedText) else {
            throw UsageError(message: "--seed must be a whole number from 0 to \(UInt64.max), got \"\(seedText)\"", command: Self.name)
        }
        self.seed = seed
        coalescePercent = try parsed.integer("coalesce", default: 0, range: 0...100, command: Self.name)
        strideeOut = parsed.value("stridee-out")
        guard strideeOut?.isEmpty != true else { throw UsageError(message: "--stridee-out must name a folder", command: Self.name) }
    }

    func run() throws -> Int32 {
        let folder = URL(fileURLWithPath: out)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure(message: "cannot create \(out): \(error.localizedDescription)", hint: "choose another folder with --out DIR")
        }
        if appleExport { return try writeAppleExport(into: folder) }
        let stridee = try strideeOut.map { try StrideeFiles(folder: $0, seed: seed) }
        let generator = DemoGenerator(DemoGenerator.Options(start: start, days: days, format: format, seed: seed,
                                                            coalescedShare: Double(coalescePercent) / 100))
        let summary = try generator.generate({ body in
            try Self.write(body.bytes, to: folder.appendingPathComponent(body.fileName).path)
        }, day: { date, samples in try stridee?.write(date, samples) })
        let last = start.adding(days: days - 1)
        printError("wrote \(summary.bodies) \(format.rawValue) files, \(summary.samples) samples (\(summary.runs) export runs, "
            + "\(summary.resent) samples resent by manual exports, \(summary.combined) combined samples of coalesced days), days \(start) to \(last), seed \(seed), into \(out)")
        if let stridee, let strideeOut {
            printError("wrote \(stridee.workouts.count) Stridee workout and \(stridee.wellness.count) wellness bodies into \(strideeOut)")
        }
        return 0
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw CommandFailure(message: "cannot write \(path): \(String(cString: strerror(errno)))",
                                 hint: "check that the folder is writable and the disk has room")
        }
    }

    /// The Stridee bodies of `--stridee-out`, written day by day as the simulation goes.
    final class StrideeFiles {
        let folder: URL
        let demo: StrideeDemo
        private(set) var workouts: [String] = []
        private(set) var wellness: [String] = []

        init(folder path: String, seed: UInt64) throws {
            folder = URL(fileURLWithPath: path)
            demo = StrideeDemo(seed: seed)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw CommandFailure(message: "cannot create \(path): \(error.localizedDescription)",
                                     hint: "choose another folder with --stridee-out DIR")
            }
        }

        func write(_ date: CivilDate, _ samples: [DemoSample]) throws {
            for body in demo.bodies(for: date, samples: samples) {
                try GenerateCommand.write(body.bytes, to: folder.appendingPathComponent(body.fileName).path)
                if body.endpoint == .workouts { workouts.append(body.fileName) } else { wellness.append(body.fileName) }
            }
        }
    }
}
