import Foundation
import Harness
import Postgres
import Warehouse

/// `health-warehouse-bench people [--samples N]`: `person export` (samples/s, peak RSS) and
/// `person delete` (seconds) of one person of ~N samples (the views section's realistic user,
/// loaded in SQL), each beside `pg_dump` of the samples table in the same run.
func runPeopleBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = ViewsBenchmark.Options()
    options.durability = durability
    options.samples = 1_000_000
    var reader = OptionReader(arguments, usage: PeopleBenchmark.usage)
    while let option = reader.next() {
        switch option {
        case "--samples": options.samples = try reader.number(atLeast: 10_000)
        case "--database-url": options.databaseURL = try reader.value()
        default: throw reader.failure("unknown option \(option)")
        }
    }
    try PeopleBenchmark(options: options).run()
}

/// The people section's steps.
struct PeopleBenchmark {
    static let usage = """
        usage: health-warehouse-bench people [--samples N] [--database-url URL] [--durability default|fast]
          --samples N        samples of the exported and deleted person (default 1000000; the goals are
                             stated for 10000000, which takes ~25 minutes to load here)
        """
    let options: ViewsBenchmark.Options

    func run() throws {
        let binary = CLIProcess.binaryPath
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchmarkError.usage("build the release binary first: swift build -c release --product health-warehouse")
        }
        let databases = try ViewsBenchmark.Databases(url: options.databaseURL, durability: options.durability)
        defer { databases.cleanup() }
        let url = try databases.fresh("people")
        let connection = try PostgresConnection(connectionString: url)
        defer { connection.close() }
        ViewsBenchmark.say("people benchmark (\(databases.label)): load average at the start \(loadAverage())")
        let load = try ViewsBenchmark(options: options).loadSamples(url, connection: connection)
        let person = ViewsBenchmark.person
        let held: Int = try connection.query("SELECT count(*) FROM health_store.samples WHERE person = $1", [person]).first!.decode(0)
        ViewsBenchmark.say("loaded \(ViewsBenchmark.grouped(held)) samples for \(person) (+ \(ViewsBenchmark.grouped(load.otherSamples)) of another person) in \(Int(load.loadSeconds)) s")

        let folder = NSTemporaryDirectory() + "hw-bench-people-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let dump = try timedRun(try ServerBinaries.locate().directory.appendingPathComponent("pg_dump").path,
                                ["--data-only", "--table=health_store.sample_rows", "--file=\(folder)-dump.sql", "--dbname=\(url)"])
        defer { try? FileManager.default.removeItem(atPath: folder + "-dump.sql") }
        let dumpBytes = (try? FileManager.default.attributesOfItem(atPath: folder + "-dump.sql")[.size] as? Int) ?? 0
        ViewsBenchmark.say(String(format: "baseline pg_dump --data-only of health_store.sample_rows (both persons): %.1f s, %.0f rows/s, %@ MB",
                                  dump.seconds, Double(held + load.otherSamples) / dump.seconds, ViewsBenchmark.grouped(dumpBytes / 1_000_000)))

        let export = try timedRun(binary, ["person", "export", person, "--to", folder, "--database-url", url])
        guard export.status == 0 else { throw BenchmarkError.usage("person export failed: \(export.stderr.suffix(2000))") }
        let exportBytes = try FileManager.default.subpathsOfDirectory(atPath: folder).reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + path)[.size] as? Int) ?? 0)
        }
        ViewsBenchmark.say(String(format: "person export: %.1f s, %.0f samples/s (goal >= 50000), peak RSS %.0f MiB, %@ MB in files; %.2fx pg_dump's time",
                                  export.seconds, Double(held) / export.seconds, export.rssMiB,
                                  ViewsBenchmark.grouped(exportBytes / 1_000_000), export.seconds / dump.seconds))

        let delete = try timedRun(binary, ["person", "delete", person, "--yes", "--database-url", url])
        guard delete.status == 0 else { throw BenchmarkError.usage("person delete failed: \(delete.stderr.suffix(2000))") }
        ViewsBenchmark.say(String(format: "person delete: %.1f s for %@ samples (%.0f samples/s; goal <= 60 s at 10M, i.e. >= 166667/s); %.2fx pg_dump's time",
                                  delete.seconds, ViewsBenchmark.grouped(held), Double(held) / delete.seconds, delete.seconds / dump.seconds))
        ViewsBenchmark.say("load average at the end \(loadAverage())")
    }
}
