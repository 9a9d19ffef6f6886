import Civil
import HealthPayload

/// Realistic healthd version 1 bodies for demos, tests and benchmarks, deterministic by seed.
///
/// The simulated phone exports a few times a day (the scheduled export, `basis` `anchor`),
/// sending what reached Health since its last run, in batches of at most 1000 samples grouped
/// by type and ascending by start; on Sundays one run is a manual "last 3 hours" export
/// (`basis` `window`) that resends what it covers. Every timestamp of a body is written in the
/// phone's Europe/Berlin offset when the run was built (+01:00 or +02:00), as healthd does.
/// Nothing reads the clock: a seed and a start date decide every byte.
public struct DemoGenerator: Sendable {
    /// What to generate.
    public struct Options: Sendable {
        /// The first local day simulated.
        public var start: CivilDate
        /// How many days, from `start`.
        public var days: Int
        /// JSON or CSV bodies.
        public var format: PayloadFormat
        /// Decides every draw.
        public var seed: UInt64
        /// 0 (the default): the scheduled export a few times a day. N > 0: no schedule; a manual
        /// export every N days covers them (`basis` `window`), in full batches of 1000 samples,
        /// as when a user fills in history by hand (the longest manual range is 30 days).
        public var manualExportDays: Int
        /// Share of days (0 to 1) whose phone step and distance samples Apple Health later
        /// coalesces: resent `coalesceDelayDays` later as a few combined samples with new
        /// uuids (only days whose resend falls inside the simulated range). 0: none.
        public var coalescedShare: Double
        /// How many days after a coalesced day its combined samples arrive.
        public var coalesceDelayDays: Int

        /// Options for `days` days from `start`.
        public init(start: CivilDate, days: Int, format: PayloadFormat = .json, seed: UInt64 = 1, manualExportDays: Int = 0,
                    coalescedShare: Double = 0, coalesceDelayDays: Int = 14) {
            self.start = start
            self.days = days
            self.format = format
            self.seed = seed
            self.manualExportDays = manualExportDays
            self.coalescedShare = coalescedShare
            self.coalesceDelayDays = coalesceDelayDays
        }
    }

    /// One body, ready to be written to a file of its name.
    public struct Body: Sendable {
        /// `2026-08-21-0001.json`: the local date of the run and a counter, so names sort in delivery order.
        public var fileName: String
        /// The body's bytes, exactly as healthd would send them.
        public var bytes: [UInt8]
        /// Samples in the body.
        public var sampleCount: Int
        /// The run's exportId and this batch's place in it.
        public var exportId: String
        /// 1-based position in the run, and whether it is the run's last batch.
        public var batchSequence: Int
        public var isFinalBatch: Bool
        /// `anchor` or `window`.
        public var basis: String
    }

    /// What a generation wrote.
    public struct Summary: Sendable, Equatable {
        /// Bodies (files) written, samples in them, export runs they came from.
        public var bodies = 0
        public var samples = 0
        public var runs = 0
        /// Samples sent a second time because a manual export covered them too.
        public var resent = 0
        /// Combined samples sent for coalesced days (`Options.coalescedShare`).
        public var combined = 0
        /// Bytes of all bodies.
        public var bytes = 0
    }

    /// Batches hold at most this many samples (reference "Limits").
    public static let maxSamplesPerBatch = 1000

    let options: Options

    /// A generator for `options`.
    public init(_ options: Options) {
        self.options = options
    }

    /// Builds every body in delivery order and hands each to `emit`.
    @discardableResult
    public func generate(_ emit: (Body) throws -> Void) rethrows -> Summary {
        try generate(emit, day: { _, _ in })
    }

    /// The same, and `day` gets each simulated day's samples as they are made (for bodies of
    /// another format about the same person: `StrideeDemo`).
    @discardableResult
    public func generate(_ emit: (Body) throws -> Void, day: (CivilDate, [DemoSample]) throws -> Void) rethrows -> Summary {
        var simulator = DemoSimulator(seed: options.seed)
        var coalescer = makeCoalescer()
        var summary = Summary()
        var pending: [DemoSample] = []
        var recent: [DemoSample] = []
        var lastAnchor: Int64?
        var counters: [CivilDate: Int] = [:]

        func export(_ samples: [DemoSample], at time: Int64, basis: String, window: (Int64, Int64)?, occasion: (Int64, Int64)) throws {
            let run = ExportRun(time: time, basis: basis, window: window, occasion: occasion)
            try deliver(samples, run, simulator: &simulator, summary: &summary, counters: &counters, emit)
        }

        func anchorRun(at time: Int64) throws {
            let due = pending.filter { $0.written <= time }
            pending.removeAll { $0.written <= time }
            let occasionStart = lastAnchor ?? (time - 3_600_000)
            lastAnchor = time
            try export(due, at: time, basis: "anchor", window: nil, occasion: (occasionStart, time))
        }

        for dayNumber in 0..<options.days {
            let date = options.start.adding(days: dayNumber)
            let made = simulator.samples(for: date)
            try day(date, made)
            pending.append(contentsOf: made)
            // Combined samples wait in `pending` until they are written, days later.
            let combined = coalesced(&coalescer, made, dayNumber: dayNumber, simulator: simulator)
            pending.append(contentsOf: combined)
            summary.combined += combined.count
            // A manual export looks back three hours; keep a little more than a day of samples for it.
            let horizon = CentralEuropeanTime.instant(date, minutes: -1440)
            recent.removeAll { $0.start < horizon }
            recent.append(contentsOf: made)
            if options.manualExportDays > 0 {
                // By hand every N days, the next morning: "last N days", a day of overlap with the previous one.
                guard (dayNumber + 1) % options.manualExportDays == 0 || dayNumber == options.days - 1 else { continue }
                let time = CentralEuropeanTime.instant(date.adding(days: 1), minutes: 480)
                let due = pending.filter { $0.written <= time }
                pending.removeAll { $0.written <= time }
                let from = min(lastAnchor.map { $0 - 86_400_000 } ?? time, due.map(\.start).min() ?? time)
                lastAnchor = time
                try export(due, at: time, basis: "window", window: (from, time), occasion: (from, time))
                continue
            }
            for run in simulator.runs(on: date) {
                let time = CentralEuropeanTime.instant(date, minutes: run.minutes)
                if run.manual {
                    let from = time - 3 * 3_600_000
                    let covered = recent.filter { $0.start >= from && $0.end <= time && $0.written <= time }
                    summary.resent += covered.count  // each arrives again: sent before, or by a later scheduled run
                    try export(covered, at: time, basis: "window", window: (from, time), occasion: (from, time))
                } else {
                    try anchorRun(at: time)
                }
            }
        }
        // The next morning's run delivers whatever is still waiting.
        if !pending.isEmpty && options.manualExportDays > 0 {
            let time = pending.map(\.written).max()! + 60_000
            let from = pending.map(\.start).min()!
            try export(pending, at: time, basis: "window", window: (from, time), occasion: (from, time))
        } else if !pending.isEmpty {
            let morning = CentralEuropeanTime.instant(options.start.adding(days: options.days), minutes: 470)
            let latest = pending.map(\.written).max()!
            try anchorRun(at: max(morning, latest + 60_000))
        }
        return summary
    }

    /// When and how an export run sends: its time, `basis`, the window it names (none: each
    /// batch's own samples bracket it) and the occasion.
    struct ExportRun {
        var time: Int64
        var basis: String
        var window: (Int64, Int64)?
        var occasion: (Int64, Int64)
    }

    /// One export run's samples as bodies of at most `maxSamplesPerBatch`, in the phone's order
    /// (type, start, uuid), each handed to `emit` and counted in `summary`; `counters` numbers
    /// the files of each day.
    private func deliver(_ samples: [DemoSample], _ run: ExportRun, simulator: inout DemoSimulator, summary: inout Summary,
                         counters: inout [CivilDate: Int], _ emit: (Body) throws -> Void) rethrows {
        guard !samples.isEmpty else { return }  // a run that finds nothing sends no request
        let sorted = samples.sorted { a, b in
            a.type.order != b.type.order ? a.type.order < b.type.order
                : a.start != b.start ? a.start < b.start : a.uuid < b.uuid
        }
        let offset = CentralEuropeanTime.offsetMinutes(atMilliseconds: run.time)
        let exportId = simulator.exportId()
        let chunks = stride(from: 0, to: sorted.count, by: Self.maxSamplesPerBatch).map {
            Array(sorted[$0..<min($0 + Self.maxSamplesPerBatch, sorted.count)])
        }
        let date = CentralEuropeanTime.localDate(atMilliseconds: run.time)
        summary.runs += 1
        for (index, chunk) in chunks.enumerated() {
            let bracket = run.window ?? (chunk.map(\.start).min()!, chunk.map(\.end).max()!)
            let envelope = DemoEnvelope(
                exportId: exportId, generatedAt: run.time, batchSequence: index + 1, isFinalBatch: index == chunks.count - 1,
                basis: run.basis, windowStart: bracket.0, windowEnd: bracket.1, occasionStart: run.occasion.0,
                occasionEnd: run.occasion.1, offsetMinutes: offset)
            let bytes = options.format == .json ? DemoEncoder.json(envelope, chunk) : DemoEncoder.csv(envelope, chunk)
            let counter = (counters[date] ?? 0) + 1
            counters[date] = counter
            let body = Body(fileName: "\(date)-\(CivilDate.digits(counter, 4)).\(options.format.rawValue)", bytes: bytes,
                            sampleCount: chunk.count, exportId: exportId, batchSequence: index + 1,
                            isFinalBatch: index == chunks.count - 1, basis: run.basis)
            summary.bodies += 1
            summary.samples += chunk.count
            summary.bytes += bytes.count
            try emit(body)
        }
    }

    /// Every sample of the simulated days, day by day in the order made, as the phone would
    /// hold them before any export run (for benchmarks that cut batches of their own).
    /// A coalesced day's combined samples follow the samples of the day they are written.
    public func samples() -> [DemoSample] {
        var simulator = DemoSimulator(seed: options.seed)
        var coalescer = makeCoalescer()
        var later: [Int: [DemoSample]] = [:]
        var out: [DemoSample] = []
        for dayNumber in 0..<options.days {
            let made = simulator.samples(for: options.start.adding(days: dayNumber))
            out.append(contentsOf: made)
            later[dayNumber + options.coalesceDelayDays, default: []]
                .append(contentsOf: coalesced(&coalescer, made, dayNumber: dayNumber, simulator: simulator))
            out.append(contentsOf: later.removeValue(forKey: dayNumber) ?? [])
        }
        return out
    }

    func makeCoalescer() -> DemoCoalescer {
        DemoCoalescer(seed: options.seed, share: options.coalescedShare, delayDays: options.coalesceDelayDays)
    }

    /// The combined samples of one simulated day, when their resend still falls in the range.
    func coalesced(_ coalescer: inout DemoCoalescer, _ made: [DemoSample], dayNumber: Int,
                   simulator: DemoSimulator) -> [DemoSample] {
        guard dayNumber + options.coalesceDelayDays < options.days else { return [] }
        return coalescer.combined(made, on: options.start.adding(days: dayNumber), source: simulator.phone)
    }

    /// Every body in memory (for tests and small demos).
    public func bodies() -> [Body] {
        var out: [Body] = []
        generate { out.append($0) }
        return out
    }
}
