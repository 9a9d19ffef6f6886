import Civil

/// Days of Health Auto Export minute buckets of every metric of its table, as its REST API
/// automation sends them with "summarize data" on and `automation-aggregation: minutes`, and
/// the same readings as healthd samples: what the `hae` benchmark and the large-body tests send.
/// Pure and seeded: a seed gives the same bytes on every run.
public struct HAEDemo: Sendable {
    /// One point: a metric's bucket (or a night), with what the healthd twin of it carries.
    public struct Point: Sendable {
        public var metric: String
        public var units: String
        public var source: String
        /// The bucket's start, ms since the epoch; `minutes` long (a night: its end instead).
        public var start: Int64
        public var minutes: Int
        /// The value in `units`; the healthd sample's value in the catalog's unit is `catalogValue`.
        public var value: Double
        public var catalogValue: Double
        public var type: DemoType
        /// Heart rate's Min and Max; blood pressure's diastolic.
        public var low: Double?
        public var high: Double?
        /// A night's stages (value, minutes): the healthd samples its summary stands for.
        public var stages: [(value: Int, minutes: Double)] = []
    }

    public let points: [Point]
    /// The offset every date is written in, minutes east.
    public let offsetMinutes: Int

    /// `days` days from `start` (local days in `offsetMinutes`).
    public init(start: CivilDate, days: Int, seed: UInt64, offsetMinutes: Int = 60) {
        self.offsetMinutes = offsetMinutes
        var random = SeededRandom(seed: seed)
        var points: [Point] = []
        for d in 0..<days {
            let midnight = (Int64(start.adding(days: d).daysSinceEpoch) * 1440 - Int64(offsetMinutes)) * 60_000
            Self.day(midnight, &random, &points, first: d == 0)
        }
        self.points = points
    }

    /// The healthd samples the points stand for (a blood pressure point is two, a night one per stage).
    public var sampleCount: Int {
        points.reduce(0) { $0 + ($1.stages.isEmpty ? ($1.metric == "blood_pressure" ? 2 : 1) : $1.stages.count) }
    }

    private static func day(_ midnight: Int64, _ r: inout SeededRandom, _ out: inout [Point], first: Bool) {
        func add(_ metric: String, _ units: String, _ type: DemoType, _ source: String, minute: Int, _ value: Double,
                 catalog: Double? = nil, low: Double? = nil, high: Double? = nil) {
            out.append(Point(metric: metric, units: units, source: source, start: midnight + Int64(minute) * 60_000, minutes: 1,
                             value: value, catalogValue: catalog ?? value, type: type, low: low, high: high))
        }
        let watch = "Apple Watch", both = "iPhone|Apple Watch", scale = "Withings"
        for m in 0..<1440 {
            let asleep = m < 420 || m >= 1410
            let avg = (asleep ? r.double(50...62) : r.double(62...110)).rounded()
            add("heart_rate", "bpm", .heartRate, watch, minute: m, avg, low: avg - Double(r.int(0...6)), high: avg + Double(r.int(0...12)))
            add("basal_energy_burned", "kcal", .basalEnergy, watch, minute: m, (r.double(1.0...1.3) * 100).rounded() / 100)
            let kilojoules = asleep ? 1 : r.double(1...30).rounded()
            add("active_energy", "kJ", .activeEnergy, watch, minute: m, kilojoules, catalog: kilojoules / 4.184)
            if !asleep && r.chance(0.83) {
                let steps = Double(r.int(8...130))
                add("step_count", "count", .steps, both, minute: m, steps)
                add("walking_running_distance", "km", .distance, both, minute: m, (steps * 0.75).rounded() / 1000, catalog: (steps * 0.75).rounded())
            }
            if !asleep && r.chance(0.3) { add("apple_stand_time", "min", .stand, watch, minute: m, 1) }
            if m >= 1080 && m < 1140 { add("apple_exercise_time", "min", .exercise, watch, minute: m, 1) }
            if !asleep && r.chance(0.06) { add("flights_climbed", "count", .flights, both, minute: m, Double(r.int(1...2))) }
            if asleep && m % 2 == 0 { add("respiratory_rate", "count/min", .respiratoryRate, watch, minute: m, (r.double(12...17) * 10).rounded() / 10) }
            if asleep && m % 10 == 0 {
                let spo2 = Double(r.int(93...99))
                add("blood_oxygen_saturation", "%", .oxygen, watch, minute: m, spo2, catalog: spo2 / 100)
            }
            if m % 120 == 0 { add("heart_rate_variability", "ms", .hrv, watch, minute: m, (r.double(25...70) * 10).rounded() / 10) }
        }
        add("resting_heart_rate", "bpm", .restingHeartRate, watch, minute: 600, Double(r.int(52...60)))
        add("walking_heart_rate_average", "bpm", .walkingHeartRate, watch, minute: 1200, Double(r.int(90...105)))
        let mass = (r.double(70...72) * 10).rounded() / 10
        add("weight_body_mass", "kg", .bodyMass, scale, minute: 425, mass)
        add("body_mass_index", "count", .bmi, scale, minute: 425, (mass / 1.78 / 1.78 * 10).rounded() / 10)
        let fat = (r.double(17...20) * 10).rounded() / 10
        add("body_fat_percentage", "%", .bodyFat, scale, minute: 425, fat, catalog: fat / 100)
        add("lean_body_mass", "kg", .leanMass, scale, minute: 425, (mass * (1 - fat / 100) * 10).rounded() / 10)
        if first { add("height", "cm", .height, "Health", minute: 430, 178, catalog: 1.78) }
        add("vo2_max", "ml/(kg·min)", .vo2Max, watch, minute: 1150, (r.double(40...46) * 10).rounded() / 10)
        add("body_temperature", "degC", .bodyTemperature, "Thermometer", minute: 428, (r.double(36.3...37) * 10).rounded() / 10)
        add("blood_pressure", "mmHg", .systolic, "Omron", minute: 440, Double(r.int(110...128)), low: Double(r.int(70...84)))
        // The night ending this morning at 07:00: stages in whole minutes; totalSleep is their sum,
        // so its unstaged part is a span of no length (which /hae stores, as a stage at 0 hours).
        let core = Double(r.int(200...240)), deep = Double(r.int(60...90)), rem = Double(r.int(80...110)), awake = Double(r.int(5...20))
        out.append(Point(metric: "sleep_analysis", units: "hr", source: watch, start: midnight + 420 * 60_000, minutes: 0,
                         value: (core + deep + rem) / 60, catalogValue: 0, type: .sleep, low: nil, high: nil,
                         stages: [(0, core + deep + rem + awake + 10), (1, 0), (2, awake), (3, core), (4, deep), (5, rem)]))
    }

    /// The points as one body `{"data": {"metrics": [...]}}`, one metric per name, in the
    /// app's date format (`yyyy-MM-dd HH:mm:ss ±hhmm`).
    public func haeBody() -> [UInt8] {
        var byMetric: [(name: String, units: String, points: [String])] = []
        var index: [String: Int] = [:]
        for p in points {
            let k = index[p.metric] ?? {
                byMetric.append((p.metric, p.units, []))
                index[p.metric] = byMetric.count - 1
                return byMetric.count - 1
            }()
            byMetric[k].points.append(pointJSON(p))
        }
        let metrics = byMetric.map { "{\"name\":\"\($0.name)\",\"units\":\"\($0.units)\",\"data\":[\($0.points.joined(separator: ","))]}" }
        return Array("{\"data\":{\"metrics\":[\(metrics.joined(separator: ","))],\"workouts\":[]}}".utf8)
    }

    private func pointJSON(_ p: Point) -> String {
        let date = "\"date\":\"\(text(p.start))\",\"source\":\"\(p.source)\""
        switch p.metric {
        case "heart_rate": return "{\(date),\"Min\":\(n(p.low!)),\"Avg\":\(n(p.value)),\"Max\":\(n(p.high!))}"
        case "blood_pressure": return "{\(date),\"systolic\":\(n(p.value)),\"diastolic\":\(n(p.low!))}"
        case "sleep_analysis":
            let hours = Dictionary(uniqueKeysWithValues: p.stages.map { ($0.value, n($0.minutes / 60)) })
            let day = String(text(p.start).prefix(10))
            return "{\"date\":\"\(day)\",\"totalSleep\":\(n(p.value)),\"core\":\(hours[3]!),\"deep\":\(hours[4]!),\"rem\":\(hours[5]!),"
                + "\"awake\":\(hours[2]!),\"inBed\":\(hours[0]!),\"sleepEnd\":\"\(text(p.start))\",\"sleepSource\":\"\(p.source)\"}"
        default: return "{\(date),\"qty\":\(n(p.value))}"
        }
    }

    /// The same readings as healthd samples (uuids drawn from `seed`), in `batchSize`-sample
    /// bodies: the baseline the app that sends them natively pays.
    public func healthdBodies(batchSize: Int = DemoGenerator.maxSamplesPerBatch, seed: UInt64 = 1) -> [[UInt8]] {
        var random = SeededRandom(seed: seed)
        var samples: [DemoSample] = []
        for p in points {
            let end = p.start + Int64(p.minutes) * 60_000
            if !p.stages.isEmpty {
                for stage in p.stages {
                    samples.append(DemoSample(uuid: random.uuid(), type: .sleep, source: p.source, start: p.start - Int64(stage.minutes * 60_000),
                                              end: p.start, value: String(stage.value), offsetMinutes: offsetMinutes))
                }
                continue
            }
            samples.append(DemoSample(uuid: random.uuid(), type: p.type, source: p.source, start: p.start, end: end,
                                      value: n(p.catalogValue), offsetMinutes: offsetMinutes))
            if p.metric == "blood_pressure" {
                samples.append(DemoSample(uuid: random.uuid(), type: .diastolic, source: p.source, start: p.start, end: end,
                                          value: n(p.low!), offsetMinutes: offsetMinutes))
            }
        }
        let first = points.map(\.start).min() ?? 0, last = points.map { $0.start + Int64($0.minutes) * 60_000 }.max() ?? 0
        return stride(from: 0, to: samples.count, by: batchSize).enumerated().map { k, from in
            let envelope = DemoEnvelope(exportId: random.uuid(), generatedAt: last, batchSequence: k + 1, isFinalBatch: true,
                                        windowStart: first - 86_400_000, windowEnd: last, occasionStart: first - 86_400_000,
                                        occasionEnd: last, offsetMinutes: offsetMinutes)
            return DemoEncoder.json(envelope, Array(samples[from..<min(from + batchSize, samples.count)]))
        }
    }

    /// `ms` in the app's date format, in `offsetMinutes`.
    func text(_ ms: Int64) -> String {
        let local = ms + Int64(offsetMinutes) * 60_000
        let day = CivilDate(daysSinceEpoch: Int(CivilDate.floorDivide(local, 86_400_000)))
        let inDay = Int(local - Int64(day.daysSinceEpoch) * 86_400_000) / 1000
        let o = abs(offsetMinutes)
        return "\(day) " + CivilDate.digits(inDay / 3600, 2) + ":" + CivilDate.digits(inDay / 60 % 60, 2) + ":"
            + CivilDate.digits(inDay % 60, 2) + " " + (offsetMinutes < 0 ? "-" : "+") + CivilDate.digits(o / 60, 2) + CivilDate.digits(o % 60, 2)
    }

    /// A number as JSON: whole numbers without a point.
    func n(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }
}
