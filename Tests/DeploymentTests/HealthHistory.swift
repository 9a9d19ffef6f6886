import Foundation
import TestSupport

/// Realistic healthd v1 bodies for one person over the weeks up to now, built the way the app
/// sends them, with what the views must then say about them.
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

    private var random: SeededGenerator
    private var calendar: Calendar
    private var daySamples: [[String]] = []

    init(person: String = "me", timeZone: String = "Europe/Berlin", days: Int = 45, now: Date = Date(), seed: UInt64 = 7) {
        self.person = person
        self.timeZone = TimeZone(identifier: timeZone)!
        self.dayCount = days
        self.now = now
        random = SeededGenerator(seed: seed)
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
            var samples: [String] = []
            addActivity(day: midnight, index: index, to: &samples)
            addSleep(wakingOn: midnight, index: index, to: &samples)
            addHeart(day: midnight, index: index, to: &samples)
            addBody(day: midnight, index: index, to: &samples)
            addWorkouts(day: midnight, index: index, to: &samples)
            if offset < 5 {
                for hour in [10, 13, 16] {
                    append(quantity: Self.unknownType, group: "activity", source: Self.watch, start: at(midnight, hour, 0),
                           minutes: 20, value: Double(10 + random.int(20)), unit: "min", to: &samples)
                }
            }
            daySamples.append(samples)
        }
        unknownSamples = daySamples.suffix(5).joined().filter { $0.contains(Self.unknownType) }.count
        workoutCount = daySamples.joined().filter { $0.contains("\"kind\":\"workout\"") }.count
        deliver()
    }

    private mutating func addActivity(day: Date, index: Int, to samples: inout [String]) {
        // Every fifth day the watch was charging until the afternoon: the phone counts more.
        let charging = index % 5 == 2
        for hour in 7...21 {
            let walked = Double(150 + random.int(750))
            let start = at(day, hour, 0)
            append(quantity: "HKQuantityTypeIdentifierStepCount", group: "activity", source: Self.phone, start: start, minutes: 60,
                   value: walked, unit: "count", to: &samples, steps: true)
            append(quantity: "HKQuantityTypeIdentifierDistanceWalkingRunning", group: "activity", source: Self.phone, start: start,
                   minutes: 60, value: (walked * 0.74).rounded(), unit: "m", to: &samples)
            if !charging || hour >= 15 {
                append(quantity: "HKQuantityTypeIdentifierStepCount", group: "activity", source: Self.watch, start: start, minutes: 60,
                       value: (walked * 1.12).rounded(), unit: "count", to: &samples, steps: true)
                append(quantity: "HKQuantityTypeIdentifierActiveEnergyBurned", group: "activity", source: Self.watch, start: start,
                       minutes: 60, value: Double(12 + random.int(45)), unit: "kcal", to: &samples)
                append(quantity: "HKQuantityTypeIdentifierAppleStandTime", group: "activity", source: Self.watch, start: start,
                       minutes: 60, value: Double(1 + random.int(8)), unit: "min", to: &samples)
            }
            if hour % 4 == 0 {
                append(quantity: "HKQuantityTypeIdentifierFlightsClimbed", group: "activity", source: Self.phone, start: start,
                       minutes: 60, value: Double(1 + random.int(4)), unit: "count", to: &samples)
            }
        }
        for hour in stride(from: 0, to: 24, by: 3) {
            append(quantity: "HKQuantityTypeIdentifierBasalEnergyBurned", group: "activity", source: Self.watch, start: at(day, hour, 0),
                   minutes: 180, value: 205, unit: "kcal", to: &samples)
        }
    }

    private mutating func addSleep(wakingOn day: Date, index: Int, to samples: inout [String]) {
        // The phone's bedtime schedule writes in bed only; the watch writes the stages.
        let bedtime = calendar.date(byAdding: .minute, value: -60 - random.int(30), to: day)!   // 22:30–23:00
        let wake = at(day, 6, 30 + random.int(40))
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

    private mutating func addHeart(day: Date, index: Int, to samples: inout [String]) {
        for slot in 0..<48 {
            // The first reading is at midnight, so today always has data, whenever the tests run.
            let start = calendar.date(byAdding: .minute, value: slot * 30, to: day)!
            let base = slot < 14 ? 54.0 : 68.0
            append(quantity: "HKQuantityTypeIdentifierHeartRate", group: "heart", source: Self.watch, start: start, minutes: 0,
                   value: base + Double(random.int(25)), unit: "count/min", to: &samples)
        }
        let resting = 56.0 - Double(index) * 0.05 + Double(random.int(4))
        append(quantity: "HKQuantityTypeIdentifierRestingHeartRate", group: "heart", source: Self.watch, start: at(day, 6, 0),
               minutes: 0, value: resting, unit: "count/min", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierWalkingHeartRateAverage", group: "heart", source: Self.watch, start: at(day, 12, 0),
               minutes: 0, value: 92 + Double(random.int(10)), unit: "count/min", to: &samples)
        for hour in [2, 4] {
            append(quantity: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", group: "heart", source: Self.watch,
                   start: at(day, hour, 15), minutes: 1, value: 38 + Double(random.int(30)), unit: "ms", to: &samples)
            append(quantity: "HKQuantityTypeIdentifierOxygenSaturation", group: "vitals", source: Self.watch, start: at(day, hour, 40),
                   minutes: 0, value: 0.94 + Double(random.int(5)) / 100, unit: "fraction", to: &samples)
            append(quantity: "HKQuantityTypeIdentifierRespiratoryRate", group: "vitals", source: Self.watch, start: at(day, hour, 45),
                   minutes: 0, value: 13.5 + Double(random.int(30)) / 10, unit: "count/min", to: &samples)
        }
        if index % 7 == 0 {
            append(quantity: "HKQuantityTypeIdentifierVO2Max", group: "vitals", source: Self.watch, start: at(day, 19, 0), minutes: 0,
                   value: 44.5 + Double(random.int(20)) / 10, unit: "ml/(kg*min)", to: &samples)
        }
    }

    private mutating func addBody(day: Date, index: Int, to samples: inout [String]) {
        guard index % 2 == 0 else { return }
        let kg = 81.0 - Double(index) * 0.04 + Double(random.int(6)) / 10
        append(quantity: "HKQuantityTypeIdentifierBodyMass", group: "body", source: Self.scale, start: at(day, 7, 15), minutes: 0,
               value: (kg * 10).rounded() / 10, unit: "kg", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierBodyFatPercentage", group: "body", source: Self.scale, start: at(day, 7, 15),
               minutes: 0, value: 0.19 + Double(random.int(10)) / 1000, unit: "fraction", to: &samples)
        append(quantity: "HKQuantityTypeIdentifierBodyMassIndex", group: "body", source: Self.scale, start: at(day, 7, 15), minutes: 0,
               value: ((kg / (1.82 * 1.82)) * 10).rounded() / 10, unit: "count", to: &samples)
    }

    private mutating func addWorkouts(day: Date, index: Int, to samples: inout [String]) {
        switch index % 7 {
        case 1, 3:
            let minutes = 30 + random.int(20)
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

    private mutating func addWorkoutHeartRate(start: Date, minutes: Int, to samples: inout [String]) {
        for minute in stride(from: 2, to: minutes, by: 5) {
            append(quantity: "HKQuantityTypeIdentifierHeartRate", group: "heart", source: Self.watch,
                   start: calendar.date(byAdding: .minute, value: minute, to: start)!, minutes: 0,
                   value: 138 + Double(random.int(30)), unit: "count/min", to: &samples)
        }
    }

    // MARK: - Sample objects

    private mutating func append(quantity type: String, group: String, source: String, start: Date, minutes: Int, value: Double,
                                 unit: String, to samples: inout [String], steps isSteps: Bool = false) {
        let end = calendar.date(byAdding: .minute, value: minutes, to: start)!
        guard end <= now else { return }
        if isSteps { steps[localDate(start), default: [:]][source, default: 0] += value }
        samples.append(object(common(type: type, group: group, source: source, start: start, end: end, kind: "quantity")
            + [("value", number(value)), ("unit", json(unit))]))
    }

    private mutating func append(category type: String, group: String, source: String, start: Date, end: Date, value: Int, name: String?,
                                 to samples: inout [String]) {
        guard end <= now else { return }
        var fields = common(type: type, group: group, source: source, start: start, end: end, kind: "category") + [("value", "\(value)")]
        if let name { fields.append(("name", json(name))) }
        samples.append(object(fields))
    }

    @discardableResult
    private mutating func append(workout activityType: Int, name: String?, source: String, start: Date, minutes: Int, distance: Double?,
                                 energy: Double?, to samples: inout [String]) -> String? {
        let end = calendar.date(byAdding: .minute, value: minutes, to: start)!
        guard end <= now else { return nil }
        var fields = common(type: "HKWorkoutTypeIdentifier", group: "workouts", source: source, start: start, end: end, kind: "workout")
        fields.append(("activityType", "\(activityType)"))
        if let name { fields.append(("activityName", json(name))) }
        fields.append(("durationSeconds", number(Double(minutes * 60))))
        if let distance { fields.append(("distanceMeters", number(distance))) }
        if let energy { fields.append(("activeEnergyKilocalories", number(energy))) }
        samples.append(object(fields))
        return fields.first { $0.0 == "uuid" }.map { String($0.1.dropFirst().dropLast()) }
    }

    private mutating func common(type: String, group: String, source: String, start: Date, end: Date, kind: String) -> [(String, String)] {
        [("uuid", json(random.uuid())), ("id", json(random.hex(64))), ("type", json(type)), ("group", json(group)),
         ("source", json(source)), ("start", json(stamp(start))), ("end", json(stamp(end))), ("kind", json(kind))]
    }

    private func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(json($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    // MARK: - Deliveries

    private mutating func deliver() {
        let batchSize = 150
        for (index, samples) in daySamples.enumerated() where !samples.isEmpty {
            var batchSamples = samples
            // The newest run carries a sample that breaks the contract: quarantined, the rest stored.
            if index == daySamples.count - 1 {
                batchSamples.insert(samples[0].replacingOccurrences(of: #"(?<="uuid":")[^"]+"#, with: Self.quarantinedUUID,
                                                                    options: .regularExpression), at: 1)
            }
            let exportId = random.uuid()
            let generated = sentAt(dayIndex: index)
            let chunks = stride(from: 0, to: batchSamples.count, by: batchSize).map { Array(batchSamples[$0..<min($0 + batchSize, batchSamples.count)]) }
            for (n, chunk) in chunks.enumerated() {
                let envelope = Envelope(exportId: exportId, generatedAt: generated, sequence: n + 1, isFinal: n == chunks.count - 1,
                                        basis: "anchor", occasionStart: generated.addingTimeInterval(-86_400), occasionEnd: generated)
                let asCSV = index == daySamples.count - 3
                bodies.append(Body(bytes: asCSV ? csvBody(envelope, chunk) : jsonBody(envelope, chunk), isCSV: asCSV,
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
            let envelope = Envelope(exportId: truncatedExportId, generatedAt: generated, sequence: n + 1, isFinal: false, basis: "window",
                                    occasionStart: generated.addingTimeInterval(-7 * 86_400), occasionEnd: generated)
            bodies.append(Body(bytes: jsonBody(envelope, chunk), isCSV: false, label: "manual export batch \(n + 1)/3"))
        }
    }

    /// When the scheduled export of a day ran: the next morning, or an hour ago for today.
    private func sentAt(dayIndex: Int) -> Date {
        let next = calendar.date(byAdding: .day, value: dayIndex - dayCount + 2, to: calendar.startOfDay(for: now))!
        return min(next.addingTimeInterval(5 * 3600), now.addingTimeInterval(-3600))
    }

    struct Envelope {
        var exportId: String
        var generatedAt: Date
        var sequence: Int
        var isFinal: Bool
        var basis: String
        var occasionStart: Date
        var occasionEnd: Date
    }

    private func window(_ samples: [String]) -> (String, String) {
        let starts = samples.compactMap { field("start", in: $0) }.sorted()
        let ends = samples.compactMap { field("end", in: $0) }.sorted()
        return (starts.first ?? stamp(now), ends.last ?? stamp(now))
    }

    private func jsonBody(_ e: Envelope, _ samples: [String]) -> [UInt8] {
        let (windowStart, windowEnd) = window(samples)
        let text = "{\"basis\":\(json(e.basis)),\"batchSequence\":\(e.sequence),\"connectivityTest\":false,\"exportId\":\(json(e.exportId)),"
            + "\"generatedAt\":\(json(stamp(e.generatedAt))),\"isFinalBatch\":\(e.isFinal),\"occasionEnd\":\(json(stamp(e.occasionEnd))),"
            + "\"occasionStart\":\(json(stamp(e.occasionStart))),\"samples\":[\(samples.joined(separator: ","))],\"schemaVersion\":1,"
            + "\"windowEnd\":\(json(windowEnd)),\"windowStart\":\(json(windowStart))}"
        return Array(text.utf8)
    }

    static let csvColumns = ["schemaVersion", "exportId", "generatedAt", "batchSequence", "isFinalBatch", "windowStart", "windowEnd", "uuid", "id",
                             "type", "group", "source", "start", "end", "kind", "value", "unit", "name", "activityType", "activityName",
                             "durationSeconds", "distanceMeters", "activeEnergyKilocalories", "basis", "occasionStart", "occasionEnd"]

    /// The same batch in the reference's CSV dialect: header row, envelope on every row,
    /// minimal quoting, empty cells for absent keys, LF after every row.
    private func csvBody(_ e: Envelope, _ samples: [String]) -> [UInt8] {
        let (windowStart, windowEnd) = window(samples)
        var text = Self.csvColumns.joined(separator: ",") + "\n"
        for sample in samples {
            let object = (try? JSONSerialization.jsonObject(with: Data(sample.utf8))) as? [String: Any] ?? [:]
            let envelope: [String: String] = [
                "schemaVersion": "1", "exportId": e.exportId, "generatedAt": stamp(e.generatedAt), "batchSequence": "\(e.sequence)",
                "isFinalBatch": "\(e.isFinal)", "windowStart": windowStart, "windowEnd": windowEnd, "basis": e.basis,
                "occasionStart": stamp(e.occasionStart), "occasionEnd": stamp(e.occasionEnd),
            ]
            let cells = Self.csvColumns.map { column -> String in
                if let value = envelope[column] { return value }
                guard let value = object[column] else { return "" }
                if let text = value as? String { return text }
                if let whole = value as? Int { return "\(whole)" }
                if let n = value as? Double { return number(n) }
                if let n = value as? NSNumber { return number(n.doubleValue) }
                return "\(value)"
            }
            text += cells.map(csvField).joined(separator: ",") + "\n"
        }
        return Array(text.utf8)
    }

    private func csvField(_ text: String) -> String {
        text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    // MARK: - Text

    /// The reference's one timestamp shape, in this person's zone: 2026-08-21T10:25:30.000+02:00.
    func stamp(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let offset = timeZone.secondsFromGMT(for: date)
        let sign = offset < 0 ? "-" : "+"
        let millis = Int((date.timeIntervalSince1970 * 1000).rounded()) % 1000
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03d%@%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
                      millis, sign, abs(offset) / 3600, abs(offset) % 3600 / 60)
    }

    /// The local date of an instant, `yyyy-MM-dd`.
    func localDate(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    private func at(_ day: Date, _ hour: Int, _ minute: Int) -> Date {
        calendar.date(byAdding: .minute, value: hour * 60 + minute, to: day)!
    }

    private func field(_ key: String, in object: String) -> String? {
        guard let range = object.range(of: "\"\(key)\":\"") else { return nil }
        let rest = object[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    /// A number as JSON writes it: no decimal point on a whole number.
    private func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    private func json(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}

/// Draws the history is made of, from TestSupport's seeded generator.
extension SeededGenerator {
    /// 0 ..< upperBound
    mutating func int(_ upperBound: Int) -> Int { Int(next() % UInt64(upperBound)) }

    /// An uppercase version-4 UUID, as Apple Health writes them.
    mutating func uuid() -> String {
        let a = next(), b = next()
        let hex = String(format: "%016llX%016llX", (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000, (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    mutating func hex(_ count: Int) -> String {
        var out = ""
        while out.count < count { out += String(format: "%016llx", next()) }
        return String(out.prefix(count))
    }
}
