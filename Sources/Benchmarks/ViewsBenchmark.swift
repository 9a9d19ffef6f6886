import Civil
import DemoData
import Dispatch
import Foundation
import Harness
import HealthPayload
import Postgres
import Synchronization
import Warehouse

/// The views section of the benchmark; see docs/benchmarks.md ("Views").
///
///     health-warehouse-bench views [--samples N] [--database-url URL] [--runs N]
///                                  [--upkeep-days N] [--skip-naive] [--skip-upkeep] [--against REV]
///                                  [--durability default|fast]
///
/// Loads ~N realistic samples of a phone-and-watch user into a throwaway database, rebuilds
/// the rollups, then times the per-day views for one person (365 days and all time, median
/// of warm runs) next to plain views computing the same answers straight from the samples,
/// and checks the answers are equal. Then measures the rollup upkeep inside store_batch:
/// the same 1000-sample batches into two fresh databases, with and without the refresh.
func runViewsBenchmark(_ arguments: [String], durability: ClusterDurability) throws {
    var options = ViewsBenchmark.Options()
    options.durability = durability
    var reader = OptionReader(arguments, usage: ViewsBenchmark.usage)
    while let option = reader.next() {
        switch option {
        case "--samples": options.samples = try reader.number(atLeast: 10_000)
        case "--database-url": options.databaseURL = try reader.value()
        case "--runs": options.runs = try reader.number()
        case "--upkeep-days": options.upkeepDays = try reader.number()
        case "--skip-naive": options.naive = false
        case "--skip-upkeep": options.upkeep = false
        case "--against": options.against = try reader.value()
        case "-h", "--help":
            ViewsBenchmark.say(ViewsBenchmark.usage)
            return
        default:
            throw reader.failure("unknown option \(option)")
        }
    }
    // Built first: a build of another commit takes minutes, and fails before anything is loaded.
    let against = try options.against.map { try AgainstBuild.build($0) }
    try ViewsBenchmark(options: options, against: against).run()
}

/// The views benchmark: state and steps. Everything is namespaced here because the benchmark
/// sections share one executable.
struct ViewsBenchmark {
    static let usage = """
        usage: health-warehouse-bench views [--samples N] [--database-url URL] [--runs N]
                                            [--upkeep-days N] [--skip-naive] [--skip-upkeep] [--against REV]
                                            [--durability default|fast]
          --samples N        samples to load for the timed person (default 10000000, ~9 years)
          --database-url U   a server to use (needs CREATEDB); default: a throwaway cluster
          --runs N           timed runs per query, after two warm-up runs (default 9; naive: 3)
          --upkeep-days N    days of DemoGenerator's user sent as 1000-sample batches for the upkeep test (default 100)
          --against REV      the upkeep of another commit too (built in a temporary folder), its batches in turn with this build's
        """

    struct Options {
        var samples = 10_000_000
        var databaseURL: String?
        var runs = 9
        var upkeepDays = 100
        var naive = true
        var upkeep = true
        /// A commit whose upkeep is measured beside this build's (`--against REV`).
        var against: String?
        /// The throwaway cluster's durability (`--durability`, read by main.swift).
        var durability = ClusterDurability.default
    }

    let options: Options
    /// The build of `options.against`, made before the run.
    var against: AgainstBuild.Built? = nil
    static let person = "bench"

    /// What the samples cost the disk, in bytes: health_store.sample_rows with its indexes, and
    /// the tables it names rows of (series; export contexts, where the schema has them: a build
    /// from before migration 0096 has none).
    static let samplesBytesSQL = """
        (pg_total_relation_size('health_store.sample_rows') + pg_total_relation_size('health_store.series')
         + coalesce(pg_total_relation_size(to_regclass('health_store.export_contexts')), 0))
        """

    /// One line to standard output, unbuffered: a 10M run takes a while, and progress should
    /// show even when the output goes to a file.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
    static let zone = "Europe/Berlin"

    func run() throws {
        let databases = try Databases(url: options.databaseURL, durability: options.durability)
        defer { databases.cleanup() }

        let main = try databases.fresh("views")
        let connection = try PostgresConnection(connectionString: main)
        defer { connection.close() }
        ViewsBenchmark.say("views benchmark: PostgreSQL \(connection.serverVersion / 10000).\(connection.serverVersion % 100), \(databases.label)")

        let load = try loadSamples(main, connection: connection)
        ViewsBenchmark.say(String(format: "loaded %@ samples for %@ (%d days, %.1f years) + %@ for a second person in %.0f s; rollups rebuilt in %.1f s",
                     Self.grouped(load.samples), Self.person, load.days, Double(load.days) / 365.25,
                     Self.grouped(load.otherSamples), load.loadSeconds, load.rebuildSeconds))
        let sizes = try connection.query("""
            SELECT pg_size_pretty(\(Self.samplesBytesSQL))
                     || format(' (%s bytes a sample with its indexes)',
                               round((\(Self.samplesBytesSQL))::numeric
                                     / greatest((SELECT count(*) FROM health_store.sample_rows), 1))),
                   pg_size_pretty(pg_total_relation_size('health_store.rollup_source') + pg_total_relation_size('health_store.rollup_day_type')
                                  + pg_total_relation_size('health_store.rollup_day')),
                   (SELECT count(*) FROM health_store.rollup_source), (SELECT count(*) FROM health_store.rollup_day_type),
                   (SELECT count(*) FROM health_store.rollup_day)
            """)
        if let s = sizes.first {
            ViewsBenchmark.say("samples table \(s[0] ?? "?"); rollups \(s[1] ?? "?") (\(s[2] ?? "?") source rows, \(s[3] ?? "?") day-type rows, \(s[4] ?? "?") day rows)")
        }
        let verifyStarted = ContinuousClock.now
        let drift = try connection.query("SELECT count(*) FROM health_store.verify_rollups($1)", [Self.person]).first?[0]
        ViewsBenchmark.say(String(format: "verify_rollups(%@): %@ differences, in %.1f s", Self.person, drift ?? "?",
                     Self.seconds(ContinuousClock.now - verifyStarted)))

        try timeViews(connection, lastDay: load.lastDay)

        if options.upkeep {
            try measureUpkeep(databases)
        }
    }

    // MARK: - Loading

    struct Load {
        var samples: Int
        var otherSamples: Int
        var days: Int
        var lastDay: String
        var loadSeconds: Double
        var rebuildSeconds: Double
    }

    /// Streams of one person's day: (type from DemoData's catalog, source, per day, from hour,
    /// span hours, sample length s, low, high, whole numbers).
    static let phone = "com.apple.health.6F1C2A0B-3D4E-4F50-8A9B-0C1D2E3F4A5B"
    static let watch = "com.apple.health.9E8D7C6B-5A49-4838-A726-15F4E3D2C1B0"
    static let streams: [(type: DemoType, source: String, perDay: Double,
                          from: Double, span: Double, length: Double, low: Double, high: Double, whole: Bool)] = [
        // activity: phone and watch both count the same walks all day
        (.steps, phone, 150, 7, 16, 300, 0, 80, true),
        (.steps, watch, 250, 7, 16, 180, 0, 50, true),
        (.distance, phone, 150, 7, 16, 300, 0, 60, false),
        (.distance, watch, 250, 7, 16, 180, 0, 37, false),
        (.activeEnergy, watch, 400, 0, 24, 120, 0, 2, false),
        (.activeEnergy, phone, 100, 7, 16, 300, 0, 6, false),
        (.basalEnergy, watch, 400, 0, 24, 200, 3, 5, false),
        (.flights, phone, 30, 7, 16, 60, 1, 2, true),
        (.flights, watch, 30, 7, 16, 60, 1, 2, true),
        (.exercise, watch, 40, 7, 16, 60, 1, 1, true),
        (.stand, watch, 16, 7, 16, 60, 1, 5, true),
        // heart: the watch reads every minute and a half, daily resting and walking averages, HRV
        (.heartRate, watch, 1000, 0, 24, 0, 48, 150, true),
        (.restingHeartRate, watch, 1, 6, 1, 0, 48, 62, true),
        (.walkingHeartRate, watch, 1, 20, 1, 0, 85, 110, true),
        (.hrv, watch, 6, 0, 24, 60, 20, 90, false),
        // vitals: at night from the watch, now and then from a thermometer and a cuff
        (.oxygen, watch, 24, 0, 7, 0, 0.93, 1, false),
        (.respiratoryRate, watch, 40, 0, 7, 0, 12, 18, false),
        (.vo2Max, watch, 1.0 / 7, 19, 1, 0, 38, 45, false),
        (.bodyTemperature, "com.apple.Health", 0.1, 8, 12, 0, 36.2, 37.4, false),
        (.systolic, "com.omron.connect", 1.0 / 3, 8, 1, 0, 110, 135, true),
        (.diastolic, "com.omron.connect", 1.0 / 3, 8, 1, 0, 70, 88, true),
        // body: weekly weigh-ins on a scale, height once a year
        (.bodyMass, "com.withings.wiScaleNG", 1.0 / 7, 7, 1, 0, 72, 78, false),
        (.bodyFat, "com.withings.wiScaleNG", 1.0 / 7, 7, 1, 0, 0.16, 0.22, false),
        (.bmi, "com.withings.wiScaleNG", 1.0 / 7, 7, 1, 0, 22.5, 24.5, false),
        (.leanMass, "com.withings.wiScaleNG", 1.0 / 7, 7, 1, 0, 58, 62, false),
        (.height, "com.apple.Health", 1.0 / 365, 12, 1, 0, 1.80, 1.80, false),
    ]
    /// Sleep: 30 watch stages and one phone in-bed span a night; workouts: four a week, and a
    /// second app on the same run once a month.
    static let perDay = streams.reduce(0) { $0 + $1.perDay } + 31 + 4.0 / 7 + 1.0 / 30

    /// Loads the timed person (and a small second one), then rebuilds the rollups.
    func loadSamples(_ connectionString: String, connection: PostgresConnection) throws -> Load {
        try connection.execute(script: Self.generatorSQL)
        let days = max(7, Int((Double(options.samples) / Self.perDay).rounded()))
        let lastDay = try connection.query("SELECT current_date::text").first?[0] ?? "2026-01-01"
        try connection.query("SELECT health.set_time_zone($1, $2)", [Self.person, Self.zone])
        try connection.query("SELECT health.set_time_zone('partner', 'America/New_York')")

        // The streams, spread over two connections (the machine has two cores).
        var jobs: [(sql: String, parameters: [String])] = []
        // Largest first, so the two workers finish together.
        for s in Self.streams.sorted(by: { $0.perDay > $1.perDay }) {
            jobs.append(("SELECT bench.stream($1, $2, $3::date - ($4::int - 1), $4::int, $5, $6, $7, $8, $9::float8, $10::float8, $11::float8, $12::float8, $13::float8, $14::float8, $15::bool)",
                         [Self.person, Self.zone, lastDay, String(days), s.type.identifier, s.type.group, s.source, s.type.unit ?? "", String(s.perDay),
                          String(s.from), String(s.span), String(s.length), String(s.low), String(s.high), String(s.whole)]))
        }
        jobs.append(("SELECT bench.sleep($1, $2, $3::date - ($4::int - 1), $4::int, $5, $6)", [Self.person, Self.zone, lastDay, String(days), Self.watch, Self.phone]))
        jobs.append(("SELECT bench.workouts($1, $2, $3::date - ($4::int - 1), $4::int, $5)", [Self.person, Self.zone, lastDay, String(days), Self.watch]))
        // The second person: 60 days of a few types, so every query must pick its person.
        for s in Self.streams.prefix(5) {
            jobs.append(("SELECT bench.stream('partner', 'America/New_York', $1::date - 59, 60, $2, $3, $4, $5, $6::float8, 7, 16, 300, 0, 40, true)",
                         [lastDay, s.type.identifier, s.type.group, s.source, s.type.unit ?? "", String(s.perDay)]))
        }
        // Autovacuum would start on the growing table mid-load and hold back what later
        // vacuums may mark all-visible; vacuum it once, after the load, as it would settle.
        try connection.query("ALTER TABLE health_store.sample_rows SET (autovacuum_enabled = off)")
        let started = ContinuousClock.now
        let counts = try Self.runParallel(jobs, on: connectionString, workers: 2)
        let loadSeconds = Self.seconds(ContinuousClock.now - started)
        try connection.query("VACUUM ANALYZE health_store.sample_rows")

        let rebuildStarted = ContinuousClock.now
        try connection.query("SELECT health_store.rebuild_rollups()")
        let rebuildSeconds = Self.seconds(ContinuousClock.now - rebuildStarted)
        // The state a running warehouse is in: rollups vacuumed (their visibility map set, so
        // the views read them with index-only scans), statistics current.
        try connection.query("VACUUM ANALYZE")
        try connection.query("ALTER TABLE health_store.sample_rows RESET (autovacuum_enabled)")

        let partner = counts.enumerated().filter { jobs[$0.offset].parameters.first != Self.person }.reduce(0) { $0 + $1.element }
        return Load(samples: counts.reduce(0, +) - partner, otherSamples: partner, days: days, lastDay: lastDay,
                    loadSeconds: loadSeconds, rebuildSeconds: rebuildSeconds)
    }

    /// Runs each job (one statement returning a count) on one of `workers` connections.
    static func runParallel(_ jobs: [(sql: String, parameters: [String])], on connectionString: String, workers: Int) throws -> [Int] {
        let next = Mutex(0)
        let results = Mutex([Int](repeating: 0, count: jobs.count))
        let failure = Mutex<String?>(nil)
        let group = DispatchGroup()
        for _ in 0..<workers {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let c = try PostgresConnection(connectionString: connectionString)
                    defer { c.close() }
                    while true {
                        let i = next.withLock { n -> Int in n += 1; return n - 1 }
                        guard i < jobs.count, failure.withLock({ $0 == nil }) else { return }
                        let rows = try c.query(jobs[i].sql, jobs[i].parameters)
                        let n = Int(rows.first?[0] ?? "0") ?? 0
                        results.withLock { $0[i] = n }
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
            }.start()
        }
        group.wait()
        if let message = failure.withLock({ $0 }) { throw BenchmarkError.usage("loading failed: \(message)") }
        return results.withLock { $0 }
    }

    // MARK: - Timing the views

    struct Timing {
        var view: String
        var span: String
        var rows: Int
        var rollupMs: Double
        var naiveMs: Double?
        var equal: Bool?
    }

    /// The four views, 365 days and all time, rollups next to the naive views.
    func timeViews(_ c: PostgresConnection, lastDay: String) throws {
        try c.execute(script: Self.naiveSQL)
        // The naive plans are costly enough to be JIT-compiled, which adds seconds of
        // compilation to each run; the baseline is fairer without it. (The rollup views are
        // never costly enough to be compiled.)
        try c.query("SET jit = off")
        let views = [("daily_summary", "day"), ("daily_totals", "day, type"), ("daily_sleep", "day"), ("daily_readings", "day, type")]
        let spans = [("365 days", "AND day BETWEEN $2::date - 364 AND $2::date"), ("all time", "AND $2::text IS NOT NULL")]
        var timings: [Timing] = []
        for (view, order) in views {
            for (span, filter) in spans {
                let sql = { (schema: String) in "SELECT * FROM \(schema).\(view) WHERE person = $1 \(filter) ORDER BY \(order)" }
                let (rollupMs, rollupRows) = try Self.time(c, sql("health"), [Self.person, lastDay], warmups: 2, runs: options.runs)
                var timing = Timing(view: view, span: span, rows: rollupRows.count, rollupMs: rollupMs)
                if options.naive {
                    let (naiveMs, naiveRows) = try Self.time(c, sql("naive"), [Self.person, lastDay], warmups: 1, runs: 3)
                    timing.naiveMs = naiveMs
                    let diff = Self.differences(rollupRows, naiveRows)
                    timing.equal = diff.isEmpty
                    for d in diff.prefix(3) { ViewsBenchmark.say("  difference in \(view) (\(span)): \(d)") }
                }
                timings.append(timing)
                ViewsBenchmark.say(Self.line(timing))
            }
        }
        ViewsBenchmark.say("")
        ViewsBenchmark.say("| view | span | rows | rollup views (median) | naive views (median) | speed-up | answers equal |")
        ViewsBenchmark.say("|---|---|---:|---:|---:|---:|---|")
        for t in timings {
            let naive = t.naiveMs.map { Self.ms($0) } ?? "—"
            let ratio = t.naiveMs.map { String(format: "%.0f×", $0 / t.rollupMs) } ?? "—"
            let equal = t.equal.map { $0 ? "yes" : "**no**" } ?? "—"
            ViewsBenchmark.say("| `\(t.view)` | \(t.span) | \(t.rows) | \(Self.ms(t.rollupMs)) | \(naive) | \(ratio) | \(equal) |")
        }
        ViewsBenchmark.say("")
        if timings.contains(where: { $0.equal == false }) {
            throw BenchmarkError.usage("the rollup views and the naive views disagree (see above)")
        }
    }

    static func line(_ t: Timing) -> String {
        let naive = t.naiveMs.map { String(format: "naive %@ (%.0f×)", ms($0), $0 / t.rollupMs) } ?? ""
        let equal = t.equal.map { $0 ? "answers equal" : "ANSWERS DIFFER" } ?? ""
        return "\(t.view.padding(toLength: 15, withPad: " ", startingAt: 0)) \(t.span.padding(toLength: 9, withPad: " ", startingAt: 0)) "
            + "\(String(t.rows).padding(toLength: 6, withPad: " ", startingAt: 0)) rows  rollup \(ms(t.rollupMs))  \(naive)  \(equal)"
    }

    /// Median wall time of `runs` runs after `warmups`, in ms, with the last run's rows.
    static func time(_ c: PostgresConnection, _ sql: String, _ parameters: [String], warmups: Int, runs: Int) throws -> (Double, PostgresRows) {
        var rows = try c.query(sql, parameters)
        for _ in 1..<max(1, warmups) { rows = try c.query(sql, parameters) }
        var times: [Double] = []
        for _ in 0..<runs {
            let started = ContinuousClock.now
            rows = try c.query(sql, parameters)
            times.append(seconds(ContinuousClock.now - started) * 1000)
        }
        times.sort()
        let median = times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
        return (median, rows)
    }

    /// Cell-by-cell differences: equal text, numbers equal to 1e-9 relative, or JSON objects
    /// of such numbers (a sum read in another order may differ in its last digits).
    static func differences(_ a: PostgresRows, _ b: PostgresRows) -> [String] {
        var out: [String] = []
        if a.columns != b.columns { return ["columns \(a.columns) vs \(b.columns)"] }
        if a.count != b.count { out.append("\(a.count) rows vs \(b.count)") }
        for i in 0..<min(a.count, b.count) where out.count < 5 {
            for c in 0..<a.columns.count where !cellsMatch(a[i][c], b[i][c]) {
                out.append("row \(i) \(a.columns[c]): \(a[i][c] ?? "NULL") vs naive \(b[i][c] ?? "NULL")")
                break
            }
        }
        return out
    }

    static func cellsMatch(_ x: String?, _ y: String?) -> Bool {
        if x == y { return true }
        guard let x, let y else { return false }
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-9 * max(1, abs(a), abs(b)) }
        if let a = Double(x), let b = Double(y) { return close(a, b) }
        if x.hasPrefix("{"), let a = try? JSONSerialization.jsonObject(with: Data(x.utf8)) as? [String: Any],
           let b = try? JSONSerialization.jsonObject(with: Data(y.utf8)) as? [String: Any], Set(a.keys) == Set(b.keys) {
            return a.allSatisfy { key, value in
                guard let n = value as? NSNumber, let m = b[key] as? NSNumber else { return false }
                return close(n.doubleValue, m.doubleValue)
            }
        }
        return false
    }

    // MARK: - Rollup upkeep

    /// The same 1000-sample batches into two fresh databases, one with the rollup refresh and
    /// one where the refresh does nothing; the difference is what the rollups cost a batch.
    /// The batches are `DemoGenerator`'s phone-and-watch user, cut as healthd cuts a run.
    func measureUpkeep(_ databases: Databases) throws {
        let days = options.upkeepDays
        let first = CivilDate("2025-01-06")!
        let samples = DemoGenerator(.init(start: first, days: days, seed: 7)).samples()
        // As healthd builds a run: each export reads type by type, ascending by start, and
        // cuts the result into batches of 1000. A 30-day manual export is one run.
        let exportOrder = Self.batches(samples, from: first, runDays: 30, typeByType: true)
        // The worst case for the rollups: every batch in time order, so each one touches every
        // type and source of its hours and re-reads the day so far of each.
        let timeOrder = Self.batches(samples, from: first, runDays: days, typeByType: false)
        // A backlog where Apple Health coalesced 5 % of the days: their phone steps and
        // distance arrive again 14 days later as a few combined samples (DemoCoalescer).
        let coalesced = DemoGenerator(.init(start: first, days: days, seed: 7, coalescedShare: 0.05)).samples()
        let coalescedOrder = Self.batches(coalesced, from: first, runDays: 30, typeByType: true)
        let lastDay = first.adding(days: days - 1).description
        for (label, batches) in [("export order (30-day runs, type by type)", exportOrder),
                                 ("time order (every type in every batch)", timeOrder),
                                 ("export order, 5 % of days coalesced", coalescedOrder)] {
            try upkeep(databases, label: label, batches: batches, days: days, lastDay: lastDay)
        }
    }

    /// 1000-sample batches: runs of `runDays` local days, each run read type by type (or in
    /// time order) and cut into batches of 1000, each batch grouped by type and ascending by
    /// start as the app sends it; each as the JSON array `store_batch` takes. A run sends what
    /// reached Health by its end, so a sample belongs to the run of the day it was written.
    static func batches(_ samples: [DemoSample], from first: CivilDate, runDays: Int, typeByType: Bool) -> [[UInt8]] {
        func run(_ s: DemoSample) -> Int {
            (CentralEuropeanTime.localDate(atMilliseconds: s.written).daysSinceEpoch - first.daysSinceEpoch) / runDays
        }
        func byType(_ a: DemoSample, _ b: DemoSample) -> Bool {
            a.type.order != b.type.order ? a.type.order < b.type.order : a.start != b.start ? a.start < b.start : a.uuid < b.uuid
        }
        func byTime(_ a: DemoSample, _ b: DemoSample) -> Bool {
            a.start != b.start ? a.start < b.start : a.uuid < b.uuid
        }
        var out: [[UInt8]] = []
        for (_, runSamples) in Dictionary(grouping: samples, by: run).sorted(by: { $0.key < $1.key }) {
            let ordered = runSamples.sorted(by: typeByType ? byType : byTime)
            for start in stride(from: 0, to: ordered.count, by: DemoGenerator.maxSamplesPerBatch) {
                let batch = ordered[start..<min(start + DemoGenerator.maxSamplesPerBatch, ordered.count)].sorted(by: byType)
                out.append(DemoEncoder.array(batch, offsetMinutes: 60))
            }
        }
        return out
    }

    /// Stores the batches into two fresh databases, with and without the rollup refresh — and,
    /// with `--against REV`, into two more migrated by that commit's build, every batch of both
    /// builds in turn, so the two upkeeps are measured over the same minutes of the machine.
    func upkeep(_ databases: Databases, label: String, batches: [[UInt8]], days: Int, lastDay: String) throws {
        var sides = [try UpkeepSide(name: "this build", databases: databases, migratedBy: nil)]
        if let against { sides.append(try UpkeepSide(name: against.short, databases: databases, migratedBy: against.binary)) }
        defer { for side in sides { side.close() } }
        // What users run: a person with history. The first third of the batches is sent first,
        // untimed, and the databases vacuumed and analyzed as autovacuum would have done by
        // then; the rest is timed. (Timed from an empty database, every statement was planned
        // for each batch while the tables had no statistics yet.)
        let history = batches.count / 3
        let exportId = UUID().uuidString
        for (n, body) in batches.enumerated() {
            if n == history { for side in sides { try side.startTiming() } }
            let envelope = Envelope(exportId: exportId, generatedAt: "\(lastDay)T12:00:00.000+01:00", batchSequence: n + 1,
                                    isFinalBatch: n == batches.count - 1, basis: "window", windowStart: "2000-01-01T00:00:00.000Z",
                                    windowEnd: "2100-01-01T00:00:00.000Z", occasionStart: "\(lastDay)T11:00:00.000+01:00",
                                    occasionEnd: "\(lastDay)T12:00:00.000+01:00").jsonText
            // Alternate which database goes first, so none always meets a warmer cache.
            var turns = sides.flatMap { side in [(side, true), (side, false)] }
            if n % 2 == 1 { turns.reverse() }
            for (side, isWith) in turns { try side.store(envelope: envelope, body: body, withRefresh: isWith) }
        }
        for side in sides {
            let who = sides.count > 1 ? "\(label), \(side.name)" : label
            ViewsBenchmark.say("upkeep, \(who): \(batches.count) batches (\(days) days; the first \(history) sent first, untimed), \(try side.summary())")
        }
        if sides.count == 2, let mine = sides[0].added, let theirs = sides[1].added {
            ViewsBenchmark.say(String(format: "upkeep, %@: this build %+.1f%% against %@ %+.1f%% (%@), in the same run",
                                      label, mine, sides[1].name, theirs, sides[0].cpuKnown && sides[1].cpuKnown ? "server CPU" : "wall"))
        }
    }

    /// One build's two databases for the upkeep: one with the rollup refresh, one where it does
    /// nothing; what each batch took in both.
    final class UpkeepSide {
        let name: String
        let with: PostgresConnection
        let without: PostgresConnection
        private let pidWith: Int32
        private let pidWithout: Int32
        private(set) var cpuKnown: Bool
        private var wall = (with: 0.0, without: 0.0)
        private var cpu = (with: 0.0, without: 0.0)
        private var perWith: [Double] = []
        private var perWithout: [Double] = []

        /// Fresh databases migrated by this build, or by the build at `migratedBy`.
        init(name: String, databases: Databases, migratedBy binary: String?) throws {
            self.name = name
            with = try PostgresConnection(connectionString: try databases.fresh("upkeep_with", migratedBy: binary))
            without = try PostgresConnection(connectionString: try databases.fresh("upkeep_without", migratedBy: binary))
            try Self.switchOffRefresh(without, build: name)
            for c in [with, without] { try c.query("SELECT health.set_time_zone('u', $1)", [ViewsBenchmark.zone]) }
            // The server backend's own CPU time, from /proc/<pid>/schedstat: on a shared machine
            // it moves far less with other load than wall time does. (Only readable when the
            // server runs here and /proc allows it; otherwise only wall time is reported.)
            pidWith = Int32(try with.query("SELECT pg_backend_pid()").first?[0] ?? "0") ?? 0
            pidWithout = Int32(try without.query("SELECT pg_backend_pid()").first?[0] ?? "0") ?? 0
            cpuKnown = ViewsBenchmark.cpuSeconds(pid: pidWith) != nil && ViewsBenchmark.cpuSeconds(pid: pidWithout) != nil
        }

        /// store_batch's refresh (refresh_batch_rollups) does nothing there, nor does the
        /// coalescing check around the written spans (24_coalescing.sql): it is rollup upkeep
        /// too, since it decides what the totals count. A build without either function (by
        /// these signatures) cannot be measured this way: an error says so.
        static func switchOffRefresh(_ c: PostgresConnection, build: String) throws {
            let signatures = ["health_store.refresh_batch_rollups(text, health_store.rollup_key[], health_store.added_samples[])",
                              "health_store.refresh_coverings(text, health_store.span[])"]
            for signature in signatures where try c.query("SELECT to_regprocedure($1) IS NULL", [signature]).first?[0] == "t" {
                throw BenchmarkError.usage("upkeep: \(build) has no \(signature) to switch off")
            }
            try c.query("""
                CREATE OR REPLACE FUNCTION health_store.refresh_batch_rollups(p_person text, p_keys health_store.rollup_key[],
                                                                              p_added health_store.added_samples[])
                RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$
                """)
            try c.query("""
                CREATE OR REPLACE FUNCTION health_store.refresh_coverings(p_person text, p_spans health_store.span[])
                RETURNS health_store.rollup_key[] LANGUAGE sql AS $$ SELECT NULL::health_store.rollup_key[] $$
                """)
        }

        /// The history is in: vacuum and analyze both databases, then time from zero.
        func startTiming() throws {
            for c in [with, without] { try c.query("VACUUM (ANALYZE)") }
            wall = (0, 0); cpu = (0, 0); perWith = []; perWithout = []
        }

        /// One batch into one of the two databases, timed.
        func store(envelope: String, body: [UInt8], withRefresh: Bool) throws {
            let c = withRefresh ? with : without
            let pid = withRefresh ? pidWith : pidWithout
            let cpuBefore = cpuKnown ? ViewsBenchmark.cpuSeconds(pid: pid) : nil
            let started = ContinuousClock.now
            try c.query("""
                SELECT * FROM health_store.store_batch('u', 'http', false, 'json', NULL, $1::jsonb, $2::jsonb, '[]'::jsonb, sha256(convert_to($2, 'UTF8')),
                                                     clock_timestamp(), false)
                """, [envelope, PostgresBinaryText(body)])
            let ms = ViewsBenchmark.seconds(ContinuousClock.now - started) * 1000
            if withRefresh { wall.with += ms; perWith.append(ms) } else { wall.without += ms; perWithout.append(ms) }
            if let before = cpuBefore, let after = ViewsBenchmark.cpuSeconds(pid: pid) {
                if withRefresh { cpu.with += after - before } else { cpu.without += after - before }
            } else {
                cpuKnown = false
            }
        }

        /// What the refresh added to a batch: server CPU where it could be read, else wall time.
        var added: Double? {
            let (a, b) = cpuKnown ? cpu : wall
            return b > 0 ? Self.percent(a, over: b) : nil
        }

        /// How much more `a` is than `b`, in percent of `b`.
        static func percent(_ a: Double, over b: Double) -> Double { (a - b) / b * 100 }

        /// The medians, wall totals, CPU totals and the rollups checked.
        func summary() throws -> String {
            let drift = try with.query("SELECT count(*) FROM health_store.verify_rollups('u')").first?[0] ?? "?"
            let sortedWith = perWith.sorted(), sortedWithout = perWithout.sorted()
            let cpuText = cpuKnown
                ? String(format: "; server CPU %.2f s vs %.2f s: %+.1f%%", cpu.with, cpu.without, Self.percent(cpu.with, over: cpu.without))
                : ""
            return String(format: "store_batch median %@ with the rollup refresh vs %@ without; wall total %.2f s vs %.2f s: %+.1f%%%@ (verify_rollups: %@ differences)",
                          ViewsBenchmark.ms(sortedWith[sortedWith.count / 2]), ViewsBenchmark.ms(sortedWithout[sortedWithout.count / 2]),
                          wall.with / 1000, wall.without / 1000, Self.percent(wall.with, over: wall.without), cpuText, drift)
        }

        func close() {
            with.close()
            without.close()
        }
    }

    // MARK: - Helpers

    /// CPU time a process has run, in seconds (first field of /proc/<pid>/schedstat, in ns).
    static func cpuSeconds(pid: Int32) -> Double? {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
              let first = text.split(separator: " ").first, let ns = Double(first) else { return nil }
        return ns / 1e9
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func ms(_ v: Double) -> String {
        v < 10 ? String(format: "%.2f ms", v) : v < 100 ? String(format: "%.1f ms", v) : String(format: "%.0f ms", v)
    }

    static func grouped(_ n: Int) -> String {
        let digits = Array(String(n))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return out
    }

    /// Fresh migrated databases: of a throwaway cluster, or of the server a URL names.
    final class Databases: @unchecked Sendable {
        let cluster: TestCluster?
        let url: String?
        private var made: [String] = []
        private var counter = 0

        init(url: String?, durability: ClusterDurability) throws {
            self.url = url
            cluster = url == nil ? try TestCluster(durability: durability) : nil
        }

        var label: String { cluster.map { "throwaway cluster, \($0.durability.benchmarkLabel)" } ?? "server from --database-url" }

        /// A new database migrated by this build, or by the `health-warehouse` at `binary`
        /// (`--against`); its connection string.
        func fresh(_ label: String, migratedBy binary: String? = nil) throws -> String {
            let target: String
            if let cluster {
                target = try cluster.freshDatabase(label: label, migrated: binary == nil).connectionString
            } else {
                counter += 1
                let name = "hw_bench_views_\(getpid())_\(counter)"
                let admin = try PostgresConnection(connectionString: url!)
                defer { admin.close() }
                try admin.query("CREATE DATABASE \(name)")
                made.append(name)
                target = try Self.with(url!, database: name)
                if binary == nil {
                    let c = try PostgresConnection(connectionString: target)
                    defer { c.close() }
                    try Migrator().migrate(c)
                }
            }
            if let binary {
                let migrated = try CLIProcess.runProgram(binary, ["migrate", "--database-url", target])
                guard migrated.status == 0 else {
                    throw BenchmarkError.usage("\(binary) migrate failed: \(migrated.stderr.suffix(800))")
                }
            }
            return target
        }

        func cleanup() {
            if let cluster { cluster.destroy(); return }
            guard let url, let admin = try? PostgresConnection(connectionString: url) else { return }
            defer { admin.close() }
            for name in made.reversed() { _ = try? admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        }

        /// The same server with another database, the string read and rewritten by libpq.
        static func with(_ connectionString: String, database: String) throws -> String {
            try PostgresConnectionInfo(parsing: connectionString).setting("dbname", to: database).connectionString
        }
    }

    // MARK: - SQL

    /// Set-based generators of realistic samples, written straight into
    /// health_store.sample_rows as the write path stores what the app would send (timestamps
    /// in the zone's offset: every key rebuilt from the columns, no payload kept).
    static let generatorSQL = #"""
        CREATE SCHEMA IF NOT EXISTS bench;

        -- The person's series of a type and source, made on first use.
        CREATE OR REPLACE FUNCTION bench.series_of(p_person text, p_type text, p_source text)
        RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE v integer;
        BEGIN
          SELECT k.series INTO v FROM health_store.series k WHERE k.person = p_person AND k.type = p_type AND k.source = p_source;
          IF v IS NULL THEN
            -- Two loaders of one person may meet here.
            PERFORM pg_advisory_xact_lock(hashtext(p_person));
            SELECT k.series INTO v FROM health_store.series k WHERE k.person = p_person AND k.type = p_type AND k.source = p_source;
          END IF;
          IF v IS NULL THEN
            INSERT INTO health_store.series (person, series, type, source)
            SELECT p_person, coalesce(max(k.series), 0) + 1, p_type, p_source FROM health_store.series k WHERE k.person = p_person
            RETURNING series INTO v;
          END IF;
          RETURN v;
        END
        $$;

        -- Minutes east of UTC of an instant in the session's zone.
        CREATE OR REPLACE FUNCTION bench.offset_of(t timestamptz) RETURNS smallint
        LANGUAGE sql STABLE RETURN (extract(timezone FROM t) / 60)::smallint;

        CREATE OR REPLACE FUNCTION bench.stream(
          p_person text, p_tz text, p_first date, p_days int,
          p_type text, p_grp text, p_source text, p_unit text, p_per_day float8,
          p_from_h float8, p_span_h float8, p_len_s float8, p_lo float8, p_hi float8, p_round bool)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE n bigint; v_series integer := bench.series_of(p_person, p_type, p_source);
        BEGIN
          PERFORM set_config('TimeZone', p_tz, true);
          WITH t AS (
            SELECT gen_random_uuid() AS uuid,
                   ((p_first + d)::timestamp + make_interval(secs => p_from_h * 3600 + (i + random() * 0.8) * p_span_h * 3600 / ceil(p_per_day))) AT TIME ZONE p_tz AS start_at,
                   CASE WHEN p_round THEN round(p_lo + random() * (p_hi - p_lo))
                        ELSE round((p_lo + random() * (p_hi - p_lo))::numeric, 3)::float8 END AS value
            FROM generate_series(0, p_days - 1) d
            CROSS JOIN generate_series(0, ceil(p_per_day)::int - 1) i
            WHERE p_per_day >= 1 OR random() < p_per_day
          ), ins AS (
            INSERT INTO health_store.sample_rows (person, uuid, id, series, grp, kind, origin, start_at, end_at, day,
              start_offset, end_offset, value, unit, first_received_at, last_received_at, export_id)
            SELECT p_person, t.uuid, md5(t.uuid::text) || md5(p_type), v_series,
                   p_grp, 'quantity', 'healthd', t.start_at, t.start_at + make_interval(secs => p_len_s), (t.start_at AT TIME ZONE p_tz)::date,
                   bench.offset_of(t.start_at), bench.offset_of(t.start_at + make_interval(secs => p_len_s)), t.value, p_unit,
                   t.start_at + interval '40 minutes', t.start_at + interval '40 minutes', NULL
            FROM t
            RETURNING 1
          )
          SELECT count(*) INTO n FROM ins;
          RETURN n;
        END
        $$;

        CREATE OR REPLACE FUNCTION bench.sleep(p_person text, p_tz text, p_first date, p_days int, p_watch text, p_phone text)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE n bigint;
          v_watch integer := bench.series_of(p_person, 'HKCategoryTypeIdentifierSleepAnalysis', p_watch);
          v_phone integer := bench.series_of(p_person, 'HKCategoryTypeIdentifierSleepAnalysis', p_phone);
        BEGIN
          PERFORM set_config('TimeZone', p_tz, true);
          WITH t AS (
            SELECT gen_random_uuid() AS uuid, s.src, s.v,
                   ((p_first + d)::timestamp + interval '23 hours' + make_interval(mins => 16 * s.k)) AT TIME ZONE p_tz AS start_at,
                   s.len
            FROM generate_series(0, p_days - 1) d
            CROSS JOIN LATERAL (
              SELECT p_watch AS src, k, (ARRAY[3, 4, 3, 5, 3, 2, 3, 5, 4, 3])[k % 10 + 1] AS v, 16 AS len FROM generate_series(0, 29) k
              UNION ALL SELECT p_phone, -1, 0, 500) s
          ), ins AS (
            INSERT INTO health_store.sample_rows (person, uuid, id, series, grp, kind, origin, start_at, end_at, day,
              start_offset, end_offset, value, category_name, first_received_at, last_received_at)
            SELECT p_person, t.uuid, md5(t.uuid::text) || md5('sleep'),
                   CASE t.src WHEN p_watch THEN v_watch ELSE v_phone END, 'sleep', 'category', 'healthd',
                   t.start_at, t.start_at + make_interval(mins => t.len), ((t.start_at + make_interval(mins => t.len)) AT TIME ZONE p_tz)::date,
                   bench.offset_of(t.start_at), bench.offset_of(t.start_at + make_interval(mins => t.len)),
                   t.v, health_store.sleep_stage(t.v),
                   t.start_at + interval '8 hours', t.start_at + interval '8 hours'
            FROM t WHERE health_store.sleep_stage(t.v) IS NOT NULL
            RETURNING 1
          )
          SELECT count(*) INTO n FROM ins;
          RETURN n;
        END
        $$;

        CREATE OR REPLACE FUNCTION bench.workouts(p_person text, p_tz text, p_first date, p_days int, p_watch text)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE n bigint;
          v_watch integer := bench.series_of(p_person, 'HKWorkoutTypeIdentifier', p_watch);
          v_strava integer := bench.series_of(p_person, 'HKWorkoutTypeIdentifier', 'com.strava.stravaride');
        BEGIN
          PERFORM set_config('TimeZone', p_tz, true);
          WITH t AS (
            SELECT gen_random_uuid() AS uuid, w.src, w.at, w.act, w.name, w.dur, w.dist, w.kcal
            FROM generate_series(0, p_days - 1) d
            CROSS JOIN LATERAL (
              SELECT ((p_first + d)::timestamp + interval '18 hours') AT TIME ZONE p_tz AS at, 1800 + (d % 5) * 360 AS dur) b
            CROSS JOIN LATERAL (
              SELECT p_watch AS src, b.at, CASE WHEN d % 7 = 2 THEN 50 ELSE 37 END AS act,
                     CASE WHEN d % 7 = 2 THEN 'traditionalStrengthTraining' ELSE 'running' END AS name,
                     b.dur, CASE WHEN d % 7 = 2 THEN NULL ELSE round((b.dur * 2.8)::numeric, 1)::float8 END AS dist,
                     round((b.dur * 0.18)::numeric, 1)::float8 AS kcal
              WHERE d % 7 IN (0, 2, 4, 5)
              UNION ALL
              SELECT 'com.strava.stravaride', b.at + interval '2 minutes', 37, NULL, b.dur, round((b.dur * 2.75)::numeric, 1)::float8, NULL
              WHERE d % 30 = 4) w
          ), ins AS (
            INSERT INTO health_store.sample_rows (person, uuid, id, series, grp, kind, origin, start_at, end_at, day,
              start_offset, end_offset, activity_type, activity_name, duration_s, distance_m, energy_kcal,
              first_received_at, last_received_at)
            SELECT p_person, t.uuid, md5(t.uuid::text) || md5('workout'),
                   CASE t.src WHEN p_watch THEN v_watch ELSE v_strava END, 'workouts', 'workout', 'healthd',
                   t.at, t.at + make_interval(secs => t.dur), (t.at AT TIME ZONE p_tz)::date,
                   bench.offset_of(t.at), bench.offset_of(t.at + make_interval(secs => t.dur)),
                   t.act, t.name, t.dur, t.dist, t.kcal,
                   t.at + interval '1 hour', t.at + interval '1 hour'
            FROM t
            RETURNING 1
          )
          SELECT count(*) INTO n FROM ins;
          RETURN n;
        END
        $$;
        """#

    /// Plain views with the same columns and answers as the rollup views, computed straight
    /// from health_store.samples on every query: the baseline.
    static let naiveSQL = #"""
        CREATE SCHEMA IF NOT EXISTS naive;

        -- Each source's total per person, day and per-source type, ranked: straight from the samples.
        CREATE VIEW naive.source_totals AS
        SELECT p.*,
               row_number() OVER (PARTITION BY p.person, p.day, p.type
                                  ORDER BY array_position(pr.sources, p.source) NULLS LAST, p.total DESC NULLS LAST, p.source COLLATE "C") AS rank
        FROM (
          SELECT s.person, s.day, s.type, c.metric, CASE c.rule WHEN 'sleep' THEN 'min' ELSE c.unit END AS unit, s.source,
                 CASE c.rule WHEN 'sleep' THEN coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value IN (1, 3, 4, 5)), 0) / 60
                             ELSE sum(s.value::numeric) END AS total,
                 count(*) AS samples,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 3), 0) / 60 AS core,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 4), 0) / 60 AS deep,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 5), 0) / 60 AS rem,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 1), 0) / 60 AS unspecified,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 2), 0) / 60 AS awake,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE s.value = 0), 0) / 60 AS in_bed,
                 coalesce(sum(extract(epoch FROM s.end_at - s.start_at)) FILTER (WHERE coalesce(s.value NOT IN (0, 1, 2, 3, 4, 5), true)), 0) / 60 AS unknown
          FROM health_store.samples s JOIN health_store.catalog c ON c.type = s.type AND c.rule IN ('total', 'sleep')
          GROUP BY s.person, s.day, s.type, c.metric, c.rule, c.unit, s.source
        ) p
        LEFT JOIN health_store.source_priorities pr ON pr.person = p.person AND pr.type = p.type;

        CREATE VIEW naive.winners AS
        SELECT x.* FROM (
          SELECT t.*, coalesce(jsonb_object_agg(t.source, t.total::float8) FILTER (WHERE t.rank > 1)
                                 OVER (PARTITION BY t.person, t.day, t.type), '{}') AS alternatives
          FROM naive.source_totals t) x
        WHERE x.rank = 1;

        CREATE VIEW naive.daily_totals AS
        SELECT w.person, w.day, w.type, w.metric, w.unit, w.total::float8 AS value, w.source, w.alternatives,
               health.is_partial(w.person, w.day) AS is_partial
        FROM naive.winners w;

        CREATE VIEW naive.daily_sleep AS
        SELECT w.person, w.day, w.source, w.total::float8 AS asleep_min, w.core::float8 AS core_min, w.deep::float8 AS deep_min,
               w.rem::float8 AS rem_min, w.unspecified::float8 AS unspecified_min, w.awake::float8 AS awake_min,
               w.in_bed::float8 AS in_bed_min, w.unknown::float8 AS unknown_min, w.alternatives,
               health.is_partial(w.person, w.day) AS is_partial
        FROM naive.winners w
        WHERE w.type = 'HKCategoryTypeIdentifierSleepAnalysis';

        CREATE VIEW naive.daily_readings AS
        SELECT r.*, health.is_partial(r.person, r.day) AS is_partial
        FROM (
          SELECT s.person, s.day, s.type, c.metric, c.unit, min(s.value) AS min, avg(s.value) AS mean, max(s.value) AS max, count(s.value) AS samples
          FROM health_store.samples s JOIN health_store.catalog c ON c.type = s.type AND c.rule = 'reading'
          GROUP BY s.person, s.day, s.type, c.metric, c.unit) r;

        -- One value per person, day and metric (workouts: count and duration; unknown: count).
        CREATE VIEW naive.day_values AS
        SELECT w.person, w.day, w.metric, w.total::float8 AS value, NULL::float8 AS low, NULL::float8 AS high FROM naive.winners w
        UNION ALL
        SELECT s.person, s.day, c.metric, avg(s.value), min(s.value), max(s.value)
        FROM health_store.samples s JOIN health_store.catalog c ON c.type = s.type AND c.rule = 'reading'
        GROUP BY s.person, s.day, c.metric
        UNION ALL
        SELECT l.person, l.day, l.metric, l.value, NULL, NULL FROM (
          SELECT DISTINCT ON (s.person, s.day, s.type) s.person, s.day, c.metric, s.value
          FROM health_store.samples s JOIN health_store.catalog c ON c.type = s.type AND c.rule = 'latest'
          ORDER BY s.person, s.day, s.type, s.start_at DESC, s.end_at DESC, s.source COLLATE "C", s.uuid) l
        UNION ALL
        SELECT s.person, s.day, 'workouts', count(*), sum(s.duration_s), NULL
        FROM health_store.samples s JOIN health_store.catalog c ON c.type = s.type AND c.rule = 'workout'
        WHERE s.kind = 'workout'
        GROUP BY s.person, s.day
        UNION ALL
        SELECT s.person, s.day, '(unknown)', count(*), NULL, NULL
        FROM health_store.samples s
        WHERE NOT EXISTS (SELECT 1 FROM health_store.catalog c WHERE c.type = s.type)
        GROUP BY s.person, s.day;

        CREATE VIEW naive.daily_summary AS
        SELECT v.person, v.day,
               health.is_partial(v.person, v.day) AS is_partial,
               max(v.value) FILTER (WHERE v.metric = 'steps') AS steps,
               max(v.value) FILTER (WHERE v.metric = 'distance_m') AS distance_m,
               max(v.value) FILTER (WHERE v.metric = 'flights_climbed') AS flights_climbed,
               max(v.value) FILTER (WHERE v.metric = 'active_energy_kcal') AS active_energy_kcal,
               max(v.value) FILTER (WHERE v.metric = 'basal_energy_kcal') AS basal_energy_kcal,
               max(v.value) FILTER (WHERE v.metric = 'exercise_min') AS exercise_min,
               max(v.value) FILTER (WHERE v.metric = 'stand_min') AS stand_min,
               max(v.value) FILTER (WHERE v.metric = 'sleep_min') AS sleep_min,
               max(v.low) FILTER (WHERE v.metric = 'heart_rate_bpm') AS heart_rate_min,
               max(v.value) FILTER (WHERE v.metric = 'heart_rate_bpm') AS heart_rate_mean,
               max(v.high) FILTER (WHERE v.metric = 'heart_rate_bpm') AS heart_rate_max,
               max(v.value) FILTER (WHERE v.metric = 'resting_heart_rate_bpm') AS resting_heart_rate,
               max(v.value) FILTER (WHERE v.metric = 'walking_heart_rate_bpm') AS walking_heart_rate,
               max(v.value) FILTER (WHERE v.metric = 'hrv_sdnn_ms') AS hrv_sdnn_ms,
               100 * max(v.value) FILTER (WHERE v.metric = 'oxygen_saturation_fraction') AS oxygen_saturation_pct,
               max(v.value) FILTER (WHERE v.metric = 'respiratory_rate_per_min') AS respiratory_rate,
               max(v.value) FILTER (WHERE v.metric = 'vo2_max_ml_per_kg_min') AS vo2_max,
               max(v.value) FILTER (WHERE v.metric = 'body_temperature_c') AS body_temperature_c,
               max(v.value) FILTER (WHERE v.metric = 'blood_pressure_systolic_mmhg') AS blood_pressure_systolic,
               max(v.value) FILTER (WHERE v.metric = 'blood_pressure_diastolic_mmhg') AS blood_pressure_diastolic,
               max(v.value) FILTER (WHERE v.metric = 'body_mass_kg') AS body_mass_kg,
               max(v.value) FILTER (WHERE v.metric = 'height_m') AS height_m,
               max(v.value) FILTER (WHERE v.metric = 'body_mass_index') AS body_mass_index,
               100 * max(v.value) FILTER (WHERE v.metric = 'body_fat_fraction') AS body_fat_pct,
               max(v.value) FILTER (WHERE v.metric = 'lean_body_mass_kg') AS lean_body_mass_kg,
               max(v.value) FILTER (WHERE v.metric = 'workouts')::bigint AS workouts,
               max(v.low) FILTER (WHERE v.metric = 'workouts') AS workout_duration_s,
               max(v.value) FILTER (WHERE v.metric = '(unknown)')::bigint AS unknown_samples
        FROM naive.day_values v
        GROUP BY v.person, v.day;
        """#
}
