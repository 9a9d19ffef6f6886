import Civil
import DemoData
import Foundation

/// Realistic healthd v1 bodies for one person over the weeks up to now, built the way the app
/// sends them, with what the views must then say about them. The scenario (what happened on
/// which day, and so what the views must answer) is this file's; the samples and bodies are
/// DemoData's (`DemoSample`, `DemoEncoder`, `SeededRandom`), the same writer `generate` uses.
///
/// An iPhone and an Apple Watch both count steps (the watch wins most days, the phone on days
/// the watch was charging), a watch records sleep stages, heart rate around the clock, resting
/// heart rate and HRV; a scale weighs every other morning; workouts four times a week, one run
/// also recorded by a running app (two overlapping workouts). Deliveries are one scheduled
/// (`anchor`) export run a day in batches, one day sent as CSV, plus what goes wrong in real
/// life: a batch sent twice, a manual export that stopped part-way, a sample that breaks the
/// contract and a type this version does not know.
struct HealthHistory {
    static let phone = "com.apple.health.81C8E1B4-2F3A-4C55-9E7A-0B6D2A1F9C01"
    static let watch = "com.apple.health.E4D2C0A9-7B1F-4E3C-8A6D-5F9B1C2D3E4F"
    static let scale = "com.withings.wiscale2"
    static let runningApp = "com.strava.stravaKit"
    static let unknownType = "HKQuantityTypeIdentifierTimeInDaylight"
    static let quarantinedUUID = "not-a-uuid"

    /// One request body as the app would send it.
    struct Body {
        var bytes: [UInt8]
        var isCSV: Bool
        var label: String
    }

    let person: String
    let timeZone: TimeZone
    let dayCount: Int
    let now: Date
    /// Local dates, oldest first; the last is today (partial).
    private(set) var days: [String] = []
    /// Bodies in the order they arrive.
    private(set) var bodies: [Body] = []
    /// The same person's Stridee bodies (DemoData's `StrideeDemo`): each watch workout with its
    /// heart rate and, for runs and rides, a GPS route; each day's HealthKit totals, sleep and
    /// vitals. Pushed after the healthd bodies, so each workout becomes `both`.
    private(set) var strideeBodies: [StrideeDemo.Body] = []

    // What the views must say.
    /// Per local day, each source's step total.
    private(set) var steps: [String: [String: Double]] = [:]
    /// Per local date that sleep samples ended on, the watch's minutes asleep.
    private(set) var asleepMinutes: [String: Double] = [:]
    /// uuids of the run recorded by the watch and by the running app.
    private(set) var overlappingRun: (watch: String, app: String) = ("", "")
    private(set) var overlappingRunDay = ""
    /// The manual export that stopped after two of its three batches.
    private(set) var truncatedExportId = ""
    /// The batch that arrived twice, and how many samples it held.
    private(set) var resentExportId = ""
    private(set) var resentSamples = 0
    private(set) var unknownSamples = 0
    private(set) var workoutCount = 0

    private var random: SeededRandom
    private var calendar: Calendar
    private var daySamples: [[DemoSample]] = []

    init(person: String = "me", timeZone: String = "Europe/Berlin", days: Int = 45, now: Date = Date(), seed: UInt64 = 7) {
        self.person = person
        self.timeZone = TimeZone(identifier: timeZone)!
        self.dayCount = days
        self.now = now
        random = SeededRandom(seed: seed)
        calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = self.timeZone
        build()
    }

    // MARK: - Samples

    private mutating func build() {
        let today = calendar.startOfDay(for: now)
        for offset in stride(from: dayCount - 1, through: 0, by: -1) {
            let midnight = calendar.date(byAdding: .day, value: -offset, to: today)!
            let index = dayCount - 1 - offset
            days.append(localDate(midnight))
            var samples: [DemoSample] = []
            addActivity(day: midnight, index: index, to: &samples)
            addSleep(wakingOn: midnight, index: index, to: &samples)
            addHeart(day: midnight, index: index, to: &samples)
            addBody(day: midnight, index: index, to: &samples)
            addWorkouts(day: midnight, index: index, to: &samples)
            if offset < 5 {
                for hour in [10, 13, 16] {
                    append(quantity: Self.unknownType, group: "activity", source: Self.watch, start: at(midnight, hour, 0),
                           minutes: 20, value: Double(10 + draw(20)), unit: "min", to: &samples)
                }
            }
            daySamples.append(samples)
            strideeBodies += StrideeDemo(seed: 7).bodies(for: CivilDate(days[index])!, samples: samples)
        }
        unknownSamples = daySamples.suffix(5).joined().filter { $0.type.identifier == Self.unknownType }.count
        workoutCount = daySamples.joined().filter { $0.type.kind == "workout" }.count
        deliver()
    }

    private mutating func addActivity(day: Date, index: Int, to samples: inout [DemoSample]) {
        // Every fifth day the watch was charging until the afternoon: the phone counts more.
        let charging = index % 5 == 2
        for hour in 7...21 {
            let walked = Double(150 + draw(750))
            let start = at(day, hour, 0)
            append(quantity: "HKQuantityTypeIdentifierStepCount", group: "activity", source: Self.phone, start: start, minutes: 60,
                   value: walked, unit: "count", to: &samples, steps: true)
            append(quantity: "HKQuantityTypeIdentifierDistanceWalkingRunning", group: "activity", source: Self.phone, start: start,
                   minutes: 60, value: (walked * 0.74).rounded(), unit: "m", to: &samples)
            if !charging || hour >= 15 {
                append(quantity: "HKQuantityTypeIdentifierStepCount", group: "activity", source: Self.watch, start: start, minutes: 60,
                       value: (walked * 1.12).rounded(), unit: "count", to: &samples, steps: true)
                append(quantity: "HKQuantityTypeIdentifierActiveEnergyBurned", group: "activity", source: Self.watch, start: start,
                       minutes: 60, value: Double(12 + draw(45)), unit: "kcal", to: &samples)
                append(quantity: "HKQuantityTypeIdentifierAppleStandTime", group: "activity", source: Self.watch, start: start,
                       minutes: 60, value: Double(1 + draw(8)), unit: "min", to: &samples)
            }
            if hour % 4 == 0 {
                append(quantity: "HKQuantityTypeIdentifierFlightsClimbed", group: "activity", source: Self.phone, start: start,
                       minutes: 60, value: Double(1 + draw(4)), unit: "count", to: &samples)
            }
        }
        for hour in stride(from: 0, to: 24, by: 3) {
            append(quantity: "HKQuantityTypeIdentifierBasalEnergyBurned", group: "activity", source: Self.watch, start: at(day, hour, 0),
                   minutes: 180, value: 205, unit: "kcal", to: &samples)
        }
    }

    private mutating func addSleep(wakingOn day: Date, index: Int, to samples: inout [DemoSample]) {
        // The phone's bedtime schedule writes in bed only; the watch writes the stages.
        let bedtime = calendar.date(byAdding: .minute, value: -60 - draw(30), to: day)!   // 22:30–23:00
        let wake = at(day, 6, 30 + draw(40))
        append(category: "HKCategoryTypeIdentifierSleepAnalysis", group: "sleep", source: Self.phone, start: bedtime, end: wake,
               value: 0, name: "inBed", to: &samples)
        let cycle: [(value: Int, name: String?, minutes: Int)] = [(3, "asleepCore", 45), (4, "asleepDeep", 35), (3, "asleepCore", 30),
                                                                  (5, "asleepREM", 25), (2, "awake", 4)]
        var cursor = calendar.date(byAdding: .minute, value: 10, to: bedtime)!
        var step = 0
        while cursor < wake {
            var stage = cycle[step % cycle.count]
            // One night carries a stage this app version has no name for.
            if index == dayCount - 8 && step == 3 { stage = (7, nil, 12) }
            let end = min(calendar.date(byAdding: .minute, value: stage.minutes, to: cursor)!, wake)
            append(category: "HKCategoryTypeIdentifierSleepAnalysis", group: "sleep", source: Self.watch, start: cursor, end: end,
                   value: stage.value, name: stage.name, to: &samples)
            // Sleep counts on the local date its sample ends (the reference's rule), so a stage
            // that ends before midnight belongs to the evening's date.
            if [1, 3, 4, 5].contains(stage.value) && end <= now {
                asleepMinutes[localDate(end), default: 0] += end.timeIntervalSince(cursor) / 60
            }
            cursor = end
            step += 1
        }
    }

    private mutating func addHeart(day: Date, index: Int, to samples: inout [DemoSample]) {
        for slot in 0..<48 {
            // The first reading is at midnight, so today always has data, whenever the tests run.
            let start = calendar.date(byAdding: .minute, value: slot * 30, to: day)!
            let base = slot < 14 ? 54.0 : 68.0
            append(quantity: "HKQuantityTypeIdentifierHeartRate", group: "heart", source: Self.watch, start: start, minutes: 0,
                   value: base + Double(draw(25)), unit: "count/min", to: &samples)
        }
        let resting = 56.0 - Double(index) * 0.05 + Double(draw(4))
        append(quantity: "HKQuantityTypeIdentifierRestingHeartRate", group: "heart", source: Self.watch, start: at(day, 6, 0),
               minutes: 0, value: resting, unit: "count/min", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierWalkingHeartRateAverage", group: "heart", source: Self.watch, start: at(day, 12, 0),
               minutes: 0, value: 92 + Double(draw(10)), unit: "count/min", to: &samples)
        for hour in [2, 4] {
            append(quantity: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", group: "heart", source: Self.watch,
                   start: at(day, hour, 15), minutes: 1, value: 38 + Double(draw(30)), unit: "ms", to: &samples)
            append(quantity: "HKQuantityTypeIdentifierOxygenSaturation", group: "vitals", source: Self.watch, start: at(day, hour, 40),
                   minutes: 0, value: 0.94 + Double(draw(5)) / 100, unit: "fraction", to: &samples)
            append(quantity: "HKQuantityTypeIdentifierRespiratoryRate", group: "vitals", source: Self.watch, start: at(day, hour, 45),
                   minutes: 0, value: 13.5 + Double(draw(30)) / 10, unit: "count/min", to: &samples)
        }
        if index % 7 == 0 {
            append(quantity: "HKQuantityTypeIdentifierVO2Max", group: "vitals", source: Self.watch, start: at(day, 19, 0), minutes: 0,
                   value: 44.5 + Double(draw(20)) / 10, unit: "ml/(kg*min)", to: &samples)
        }
    }

    private mutating func addBody(day: Date, index: Int, to samples: inout [DemoSample]) {
        guard index % 2 == 0 else { return }
        let kg = 81.0 - Double(index) * 0.04 + Double(draw(6)) / 10
        append(quantity: "HKQuantityTypeIdentifierBodyMass", group: "body", source: Self.scale, start: at(day, 7, 15), minutes: 0,
               value: (kg * 10).rounded() / 10, unit: "kg", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierBodyFatPercentage", group: "body", source: Self.scale, start: at(day, 7, 15),
               minutes: 0, value: 0.19 + Double(draw(10)) / 1000, unit: "fraction", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierBodyMassIndex", group: "body", source: Self.scale, start: at(day, 7, 15), minutes: 0,
               value: ((kg / (1.82 * 1.82)) * 10).rounded() / 10, unit: "count", to: &samples)
    }

    private mutating func addWorkouts(day: Date, index: Int, to samples: inout [DemoSample]) {
        switch index % 7 {
        case 1, 3:
            let minutes = 30 + draw(20)
            let start = at(day, 7, 0)
            let distance = Double(minutes) * 170
            let watchUUID = append(workout: 37, name: "running", source: Self.watch, start: start, minutes: minutes,
                                   distance: distance, energy: Double(minutes) * 11, to: &samples)
            addWorkoutHeartRate(start: start, minutes: minutes, to: &samples)
            append(quantity: "HKQuantityTypeIdentifierAppleExerciseTime", group: "activity", source: Self.watch, start: start,
                   minutes: minutes, value: Double(minutes), unit: "min", to: &samples)
            // The same run, also recorded by a running app a minute later: kept apart, never merged.
            if index >= dayCount - 10 && overlappingRunDay.isEmpty {
                let appUUID = append(workout: 37, name: "running", source: Self.runningApp,
                                     start: calendar.date(byAdding: .minute, value: 1, to: start)!, minutes: minutes - 1,
                                     distance: distance - 40, energy: nil, to: &samples)
                overlappingRun = (watchUUID ?? "", appUUID ?? "")
                overlappingRunDay = localDate(day)
            }
        case 5:
            let start = at(day, 18, 30)
            _ = append(workout: 50, name: "traditionalStrengthTraining", source: Self.watch, start: start, minutes: 45,
                       distance: nil, energy: 260, to: &samples)
            append(quantity: "HKQuantityTypeIdentifierAppleExerciseTime", group: "activity", source: Self.watch, start: start,
                   minutes: 45, value: 45, unit: "min", to: &samples)
        case 6:
            // Activity type 14 is one Apple deprecated: it arrives without a name.
            let named = index < dayCount - 7
            _ = append(workout: named ? 13 : 14, name: named ? "cycling" : nil, source: Self.watch, start: at(day, 10, 0), minutes: 75,
                       distance: named ? 31_500 : nil, energy: 540, to: &samples)
        default:
            break
        }
    }

    private mutating func addWorkoutHeartRate(start: Date, minutes: Int, to samples: inout [DemoSample]) {
        for minute in stride(from: 2, to: minutes, by: 5) {
            append(quantity: "HKQuantityTypeIdentifierHeartRate", group: "heart", source: Self.watch,
                   start: calendar.date(byAdding: .minute, value: minute, to: start)!, minutes: 0,
                   value: 138 + Double(draw(30)), unit: "count/min", to: &samples)
        }
    }

    // MARK: - Samples

    /// 0 ..< upperBound, from the seeded stream.
    private mutating func draw(_ upperBound: Int) -> Int { random.int(0...(upperBound - 1)) }

    private mutating func append(quantity type: String, group: String, source: String, start: Date, minutes: Int, value: Double,
                                 unit: String, to samples: inout [DemoSample], steps isSteps: Bool = false) {
        let end = calendar.date(byAdding: .minute, value: minutes, to: start)!
        guard end <= now else { return }
        if isSteps { steps[localDate(start), default: [:]][source, default: 0] += value }
        samples.append(sample(DemoType(identifier: type, group: group, kind: "quantity", unit: unit), source: source, start: start, end: end,
                              value: number(value)))
    }

    private mutating func append(category type: String, group: String, source: String, start: Date, end: Date, value: Int, name: String?,
                                 to samples: inout [DemoSample]) {
        guard end <= now else { return }
        samples.append(sample(DemoType(identifier: type, group: group, kind: "category"), source: source, start: start, end: end,
                              value: "\(value)", name: name))
    }

    @discardableResult
    private mutating func append(workout activityType: Int, name: String?, source: String, start: Date, minutes: Int, distance: Double?,
                                 energy: Double?, to samples: inout [DemoSample]) -> String? {
        let end = calendar.date(byAdding: .minute, value: minutes, to: start)!
        guard end <= now else { return nil }
        let workout = sample(.workout, source: source, start: start, end: end, activityType: activityType, activityName: name,
                             durationSeconds: number(Double(minutes * 60)), distanceMeters: distance.map(number),
                             activeEnergyKilocalories: energy.map(number))
        samples.append(workout)
        return workout.uuid
    }

    /// A sample with a fresh uuid, written in this person's offset at its start.
    private mutating func sample(_ type: DemoType, source: String, start: Date, end: Date, value: String? = nil, name: String? = nil,
                                 activityType: Int? = nil, activityName: String? = nil, durationSeconds: String? = nil,
                                 distanceMeters: String? = nil, activeEnergyKilocalories: String? = nil) -> DemoSample {
        DemoSample(uuid: random.uuid(), type: type, source: source, start: milliseconds(start), end: milliseconds(end), value: value, name: name,
                   activityType: activityType, activityName: activityName, durationSeconds: durationSeconds,
                   distanceMeters: distanceMeters, activeEnergyKilocalories: activeEnergyKilocalories, offsetMinutes: offsetMinutes(start))
    }

    // MARK: - Deliveries

    private mutating func deliver() {
        let batchSize = 150
        for (index, samples) in daySamples.enumerated() where !samples.isEmpty {
            var batchSamples = samples
            // The newest run carries a sample that breaks the contract: quarantined, the rest stored.
            if index == daySamples.count - 1 {
                var broken = samples[0]
                broken.uuid = Self.quarantinedUUID
                batchSamples.insert(broken, at: 1)
            }
            let exportId = random.uuid()
            let generated = sentAt(dayIndex: index)
            let chunks = stride(from: 0, to: batchSamples.count, by: batchSize).map { Array(batchSamples[$0..<min($0 + batchSize, batchSamples.count)]) }
            for (n, chunk) in chunks.enumerated() {
                let envelope = self.envelope(exportId: exportId, generatedAt: generated, sequence: n + 1, isFinal: n == chunks.count - 1,
                                             basis: "anchor", occasionStart: generated.addingTimeInterval(-86_400), samples: chunk)
                let asCSV = index == daySamples.count - 3
                bodies.append(Body(bytes: asCSV ? DemoEncoder.csv(envelope, chunk) : DemoEncoder.json(envelope, chunk), isCSV: asCSV,
                                   label: "day \(days[index]) batch \(n + 1)/\(chunks.count)"))
            }
            // A batch stored but its answer lost on the way back: the app sends the same bytes again.
            if index == daySamples.count - 4 {
                resentExportId = exportId
                resentSamples = chunks[0].count
                bodies.append(Body(bytes: bodies[bodies.count - chunks.count].bytes, isCSV: false, label: "resent \(days[index]) batch 1"))
            }
        }
        // A manual "Last 7 days" export that stopped after batch 2 of 3 (the phone went out of
        // reach): everything in it was already held, and batch 3 never came.
        let recent = daySamples.suffix(7).joined().prefix(2 * batchSize)
        truncatedExportId = random.uuid()
        let generated = now.addingTimeInterval(-3 * 3600)
        for n in 0..<2 {
            let chunk = Array(recent.dropFirst(n * batchSize).prefix(batchSize))
            let envelope = self.envelope(exportId: truncatedExportId, generatedAt: generated, sequence: n + 1, isFinal: false, basis: "window",
                                         occasionStart: generated.addingTimeInterval(-7 * 86_400), samples: chunk)
            bodies.append(Body(bytes: DemoEncoder.json(envelope, chunk), isCSV: false, label: "manual export batch \(n + 1)/3"))
        }
    }

    /// When the scheduled export of a day ran: the next morning, or an hour ago for today.
    private func sentAt(dayIndex: Int) -> Date {
        let next = calendar.date(byAdding: .day, value: dayIndex - dayCount + 2, to: calendar.startOfDay(for: now))!
        return min(next.addingTimeInterval(5 * 3600), now.addingTimeInterval(-3600))
    }

    /// A batch's envelope: its window brackets its samples, its times are written in the offset of when it was built.
    private func envelope(exportId: String, generatedAt: Date, sequence: Int, isFinal: Bool, basis: String, occasionStart: Date,
                          samples: [DemoSample]) -> DemoEnvelope {
        let generated = milliseconds(generatedAt)
        return DemoEnvelope(exportId: exportId, generatedAt: generated, batchSequence: sequence, isFinalBatch: isFinal, basis: basis,
                            windowStart: samples.map(\.start).min() ?? generated, windowEnd: samples.map(\.end).max() ?? generated,
                            occasionStart: milliseconds(occasionStart), occasionEnd: generated, offsetMinutes: offsetMinutes(generatedAt))
    }

    // MARK: - Text

    /// Milliseconds since the epoch.
    private func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// This person's UTC offset at an instant, in minutes.
    private func offsetMinutes(_ date: Date) -> Int {
        timeZone.secondsFromGMT(for: date) / 60
    }

    /// The local date of an instant, `yyyy-MM-dd`.
    func localDate(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    private func at(_ day: Date, _ hour: Int, _ minute: Int) -> Date {
        calendar.date(byAdding: .minute, value: hour * 60 + minute, to: day)!
    }

    /// A number as JSON writes it: no decimal point on a whole number.
    private func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
