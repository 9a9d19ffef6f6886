import HTTPServer
import Metrics
import Postgres
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What `serve` tells Prometheus (docs/operations.md): requests by route
/// family and status, their durations and body bytes, samples by way in and outcome, refusals
/// by reason, 503s by cause, the database pool, the last stored batch, the build, and the
/// process. Counters start at zero with the process. No person's name appears unless
/// `perPerson` is set.
public final class ReceiverMetrics: Sendable {
    /// Every family, for `/metrics`.
    public let registry = MetricsRegistry()
    let requests: CounterFamily
    let durations: HistogramFamily
    let bodyBytes: CounterFamily
    let samples: CounterFamily
    let haeSamples: CounterFamily
    let refusals: CounterFamily
    let unavailable: CounterFamily
    /// The last stored batch, milliseconds since the epoch; 0 for none.
    let lastBatchMilliseconds = Atomic<Int>(0)
    /// Per person (`--metrics-per-person`): samples by way and outcome, and the last batch.
    let persons = Mutex<[String: PersonCounts]>([:])
    /// `--metrics-per-person`: `persons` is kept and shown.
    let perPerson: Bool

    /// The families of one `serve`; `pool` is the writers' pool, `schema` the newest migration.
    public init(version: String, schema: String, pool: PostgresPool?, perPerson: Bool = false) {
        requests = registry.register(CounterFamily("health_warehouse_http_requests_total",
                                                   help: "HTTP requests answered, by route family and status code.",
                                                   labels: ["route", "code"]))
        durations = registry.register(HistogramFamily("health_warehouse_http_request_duration_seconds",
                                                      help: "Seconds from a request's header fields to its answer, body upload and storing included.",
                                                      labels: ["route"], buckets: Self.durationBuckets))
        bodyBytes = registry.register(CounterFamily("health_warehouse_http_request_body_bytes_total",
                                                    help: "Request body bytes received, by route family.", labels: ["route"]))
        samples = registry.register(CounterFamily("health_warehouse_samples_total",
                                                  help: "Samples received, by way in and outcome (a Stridee workout is one sample, a wellness item one).",
                                                  labels: ["way", "outcome"]))
        samples.declare([SampleWay.allCases.filter { $0 != .hae }.map(\.rawValue), SampleOutcome.allCases.map(\.rawValue)])
        // Health Auto Export's points in a family of their own: `way` keeps the four values of
        // the ways in it names.
        haeSamples = registry.register(CounterFamily("health_warehouse_hae_samples_total",
                                                     help: "Health Auto Export's data points received (POST /hae), by outcome.",
                                                     labels: ["outcome"]))
        haeSamples.declare([SampleOutcome.allCases.map(\.rawValue)])
        refusals = registry.register(CounterFamily("health_warehouse_refusals_total",
                                                   help: "Answers on a way in that stored nothing because of the request or the database, by reason.",
                                                   labels: ["reason"]))
        refusals.declare([RefusalReason.allCases.map(\.rawValue)])
        unavailable = registry.register(CounterFamily("health_warehouse_unavailable_total",
                                                      help: "Answers 503 or 500 (the client keeps the batch and retries), by cause.",
                                                      labels: ["cause"]))
        unavailable.declare([UnavailableCause.allCases.map(\.rawValue)])
        self.perPerson = perPerson
        registerGauges(version: version, schema: schema, pool: pool)
        ProcessMetrics.register(in: registry)
    }

    /// Request duration buckets, seconds: a probe takes a millisecond, a 1,000-sample batch
    /// ~20 ms, a 30 MiB workout seconds.
    static let durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    private func registerGauges(version: String, schema: String, pool: PostgresPool?) {
        if let pool {
            registry.register(GaugeFamily("health_warehouse_db_pool_connections", help: "Database connections of the writers' pool, by state.",
                                          labels: ["state"]) {
                let now = pool.statistics
                return [(["in_use"], Double(now.open - now.idle)), (["idle"], Double(now.idle))]
            })
            registry.register(GaugeFamily("health_warehouse_db_pool_waiting", help: "Requests waiting for a database connection now.") {
                Double(pool.statistics.waiting)
            })
            registry.register(GaugeFamily("health_warehouse_db_pool_waits_total", help: "Requests that had to wait for a database connection.",
                                          type: .counter) { Double(pool.statistics.waitedTotal) })
        }
        registry.register(GaugeFamily("health_warehouse_last_batch_timestamp_seconds",
                                      help: "When a batch was last stored (seconds since the epoch; 0 for never).") { [self] in
            Double(lastBatchMilliseconds.load(ordering: .relaxed)) / 1000
        })
        registry.register(GaugeFamily("health_warehouse_build_info", help: "The running build: version and newest schema migration.",
                                      labels: ["version", "schema"]) { [([version, schema], 1)] })
        guard perPerson else { return }
        registry.register(WrittenFamily("health_warehouse_person_samples_total", help: "Samples received per person, by way in and outcome.",
                                        type: .counter) { [self] writer in writePersonSamples(&writer) })
        registry.register(WrittenFamily("health_warehouse_person_last_batch_timestamp_seconds",
                                        help: "When a batch of the person was last stored (seconds since the epoch).") { [self] writer in
            for (person, counts) in personSnapshot() {
                writer.sample(["person"], [person], Double(counts.lastBatchMilliseconds) / 1000)
            }
        })
    }

    /// Counts one answered request (the HTTP server's `onAnswered`), under `family` when the
    /// caller knows better than the path (`/mcp` served by `serve --mcp` is `other`, no batch).
    public func answered(_ answer: HTTPAnswered, family: RouteFamily? = nil) {
        let route = family ?? RouteFamily.of(method: answer.method, path: answer.path)
        requests.add(1, route.label, String(answer.status))
        durations.labels(route.label).observe(answer.seconds)
        bodyBytes.add(answer.bodyBytes, route.label)
        if answer.byServer, answer.status == 503 {
            unavailable.add(1, UnavailableCause.bodyBudget.rawValue)
        } else if route.countsRefusals, let reason = RefusalReason(status: answer.status) {
            refusals.add(1, reason.rawValue)
        }
    }

    /// Counts a way in's samples by outcome, for `person`, and marks a batch stored.
    func stored(_ way: SampleWay, person: String, _ counts: [SampleOutcome: Int]) {
        for (outcome, count) in counts where count > 0 {
            if way == .hae { haeSamples.add(count, outcome.rawValue) } else { samples.add(count, way.rawValue, outcome.rawValue) }
        }
        let now = Self.nowMilliseconds()
        lastBatchMilliseconds.store(now, ordering: .relaxed)
        guard perPerson else { return }
        persons.withLock { persons in
            persons[person, default: PersonCounts()].add(way, counts, at: now)
        }
    }

    /// Counts `inserted` samples of `way` for `person` (benchmarks: the cost of counting).
    public func recordStored(_ way: SampleWay, person: String, inserted: Int) {
        stored(way, person: person, [.inserted: inserted])
    }

    /// Counts a 503 or 500 by its cause.
    func unavailable(_ cause: UnavailableCause) {
        unavailable.add(1, cause.rawValue)
    }

    /// Sets the last stored batch from the database at start (`seconds` since the epoch), so
    /// "no batch for 6 h" does not fire on every restart.
    public func restoreLastBatch(secondsSinceEpoch seconds: Double) {
        let milliseconds = Int(seconds * 1000)
        var current = lastBatchMilliseconds.load(ordering: .relaxed)
        while milliseconds > current {
            let (done, original) = lastBatchMilliseconds.compareExchange(expected: current, desired: milliseconds, ordering: .relaxed)
            if done { return }
            current = original
        }
    }

    /// The persons' counts, sorted by name (a copy: the scrape writes without the lock).
    private func personSnapshot() -> [(String, PersonCounts)] {
        // Byte order: String's own comparison normalizes Unicode, several times slower.
        persons.withLock { $0.map { ($0.key, $0.value) } }.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) }
    }

    private func writePersonSamples(_ writer: inout SampleWriter) {
        let labels = ["person", "way", "outcome"]
        for (person, counts) in personSnapshot() {
            // A person has a few of the sixteen series: those held, in a fixed order.
            for (key, count) in counts.samples.sorted(by: { $0.key.order < $1.key.order }) {
                writer.sample(labels, [person, key.way.rawValue, key.outcome.rawValue], Double(count))
            }
        }
    }

    static func nowMilliseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time.tv_sec * 1000 + time.tv_nsec / 1_000_000
    }
}

/// Why an answer was 503 or 500, the `cause` label of `health_warehouse_unavailable_total`.
enum UnavailableCause: String, CaseIterable {
    /// A writer waited past `--lock-timeout` (SQLSTATE 55P03).
    case lockTimeout = "lock_timeout"
    /// A statement ran past `--statement-timeout` (57014).
    case statementTimeout = "statement_timeout"
    /// The database could not be reached or failed transiently.
    case databaseDown = "database_down"
    /// `serve` was still migrating.
    case migrating
    /// The body budget could not take the body now.
    case bodyBudget = "body_budget"
    /// An unexpected fault (500).
    case internalError = "internal"
}

/// One person's counts (`--metrics-per-person`).
struct PersonCounts {
    struct Key: Hashable {
        var way: SampleWay
        var outcome: SampleOutcome

        /// Way first, then outcome, in their declared order.
        var order: Int {
            (SampleWay.allCases.firstIndex(of: way) ?? 0) * 8 + (SampleOutcome.allCases.firstIndex(of: outcome) ?? 0)
        }
    }

    var samples: [Key: Int] = [:]
    var lastBatchMilliseconds = 0

    mutating func add(_ way: SampleWay, _ counts: [SampleOutcome: Int], at milliseconds: Int) {
        for (outcome, count) in counts where count > 0 {
            samples[Key(way: way, outcome: outcome), default: 0] += count
        }
        lastBatchMilliseconds = milliseconds
    }
}
