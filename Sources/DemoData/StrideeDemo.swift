import Civil
import Foundation
import HealthPayload

/// Stridee bodies of a simulated person (docs/stridee.md), made from the same samples as their
/// healthd bodies, as an app reading HealthKit itself would push them:
///
/// - a `healthkit.v1` body for each workout the watch recorded, with the HKWorkout's uuid of its
///   healthd sample (so the two are one workout), its heart-rate stream (the watch's readings
///   during it), running power or cycling power and cadence every 5 s, and for a run, ride or
///   walk with a distance a GPS route: a loop from home one point every 2 s, as long as the
///   workout's distance, with altitude, speed, course and accuracies;
/// - one `healthkit.wellness.v1` batch per day: HealthKit's own merged daily totals (the
///   watch's samples first, another source's only where no watch sample covers its time, as
///   HealthKit's statistics queries merge them), the night's sleep stages, HRV, respiration,
///   blood oxygen, VO₂max, body composition, blood pressure and wrist temperature.
///
/// Seeded per day, so a seed and a date decide every byte whatever else was generated.
public struct StrideeDemo: Sendable {
    /// One body, ready to be written to a file of its name and sent to its endpoint.
    public struct Body: Sendable {
        /// Where it goes: `/v1/accounts/{id}/apple/workouts` or `…/wellness` (or the device paths).
        public enum Endpoint: String, Sendable {
            case workouts
            case wellness
        }

        /// `2026-10-01-workout-<UUID>.json` or `2026-10-01-wellness.json`: names sort by day.
        public var fileName: String
        /// Which endpoint takes it.
        public var endpoint: Endpoint
        /// The body's bytes.
        public var bytes: [UInt8]
    }

    /// The simulated person's home, where every route starts and ends (Berlin, by the Tiergarten).
    public static let home = (lat: 52.5145, lon: 13.3501)

    let seed: UInt64

    /// Bodies decided by `seed`.
    public init(seed: UInt64) {
        self.seed = seed
    }

    /// The Stridee bodies of one local day, from every sample made for it (`DemoGenerator`'s
    /// `day` callback): the day's workout bodies, then its wellness batch when it has items.
    public func bodies(for date: CivilDate, samples: [DemoSample]) -> [Body] {
        var random = SeededRandom(seed: seed ^ (UInt64(truncatingIfNeeded: date.daysSinceEpoch) &* 0x9E37_79B9_7F4A_7C15))
        // The watch is the device that measures heart rate; workouts it recorded are the ones
        // HealthKit holds with their samples (another app's copy has none to send).
        let heart = samples.filter { $0.type.identifier == DemoType.heartRate.identifier }
        let watch = Dictionary(grouping: heart, by: \.source).max { $0.value.count < $1.value.count }?.key
        var out: [Body] = []
        for workout in samples where workout.type.kind == "workout" && workout.source == watch {
            let readings = heart.filter { $0.source == workout.source && $0.start >= workout.start && $0.start <= workout.end }
                .sorted { $0.start < $1.start }
            out.append(Body(fileName: "\(date)-workout-\(workout.uuid).json", endpoint: .workouts,
                            bytes: Self.workoutBody(workout, heartRate: readings, random: &random)))
        }
        let items = Self.wellnessItems(date, samples, watch: watch, random: &random)
        if !items.isEmpty {
            let text = "{\"format\":\"healthkit.wellness.v1\",\"items\":[" + items.joined(separator: ",") + "]}"
            out.append(Body(fileName: "\(date)-wellness.json", endpoint: .wellness, bytes: Array(text.utf8)))
        }
        return out
    }

    // MARK: - Workouts

    /// Stridee's discipline for an `HKWorkoutActivityType`.
    static func serverType(_ activityType: Int) -> String {
        switch activityType {
        case 37: "RUNNING"
        case 13: "CYCLING"
        case 52: "WALKING"
        case 24: "HIKING"
        case 46: "SWIMMING"
        case 35: "ROWING"
        case 50, 63, 20: "TRAINING"
        default: "GENERIC"
        }
    }

    static func workoutBody(_ w: DemoSample, heartRate: [DemoSample], random: inout SeededRandom) -> [UInt8] {
        let offset = w.offsetMinutes ?? CentralEuropeanTime.offsetMinutes(atMilliseconds: w.start)
        func stamp(_ ms: Int64) -> String { "\"" + DemoTimestamp.text(ms, offsetMinutes: offset) + "\"" }
        func samples(every seconds: Int, _ value: (inout SeededRandom) -> String) -> String {
            var parts: [String] = []
            for t in stride(from: w.start, through: w.end, by: seconds * 1000) {
                let v: String = value(&random)
                parts.append("{\"t\":" + stamp(t) + ",\"v\":" + v + "}")
            }
            return "[" + parts.joined(separator: ",") + "]"
        }
        let activity = w.activityType ?? 0
        var text = "{\"format\":\"healthkit.v1\",\"uuid\":\"\(w.uuid)\",\"activityType\":\(activity)"
        text += ",\"serverType\":\"\(serverType(activity))\",\"sourceName\":\"Apple Watch\""
        text += ",\"sourceBundleId\":" + JSONString.quoted(w.source) + ",\"deviceName\":\"Apple Watch\""
        text += ",\"startDate\":" + stamp(w.start) + ",\"endDate\":" + stamp(w.end)
        text += ",\"duration\":" + (w.durationSeconds ?? DemoNumber.text(Double(w.end - w.start) / 1000, decimals: 3))
        text += ",\"totalDistanceMeters\":" + (w.distanceMeters ?? "null")
        text += ",\"totalEnergyKcal\":" + (w.activeEnergyKilocalories ?? "null")
        text += ",\"heartRate\":[" + heartRate.map { "{\"t\":" + stamp($0.start) + ",\"v\":" + ($0.value ?? "0") + "}" }
            .joined(separator: ",") + "]"
        let running = activity == 37, cycling = activity == 13
        text += ",\"runningPower\":" + (running ? samples(every: 5) { DemoNumber.text($0.normal(mean: 245, sd: 18), decimals: 0) } : "[]")
        text += ",\"cyclingPower\":" + (cycling ? samples(every: 5) { DemoNumber.text(max(0, $0.normal(mean: 185, sd: 40)), decimals: 0) } : "[]")
        text += ",\"cyclingCadence\":" + (cycling ? samples(every: 5) { DemoNumber.text($0.normal(mean: 86, sd: 5), decimals: 0) } : "[]")
        let distance = w.distanceMeters.flatMap(Double.init) ?? 0
        let outdoors = [37, 13, 52].contains(activity) && distance > 0
        text += ",\"route\":" + (outdoors ? route(from: w.start, to: w.end, metres: distance, offset: offset, random: &random) : "[]")
        return Array((text + "}").utf8)
    }

    /// A loop from `home` and back, one point every 2 s, `metres` long, as JSON text.
    static func route(from start: Int64, to end: Int64, metres: Double, offset: Int, random: inout SeededRandom) -> String {
        let count = max(2, Int((end - start) / 2000) + 1)
        // The loop's shape: a wobbly circle around a centre that lies off home in a random
        // direction; the pace wavers, so points are not evenly spaced.
        let bearing = random.double(0...(2 * .pi)), phase = random.double(0...(2 * .pi))
        let clockwise: Double = random.chance(0.5) ? -1 : 1
        var paces: [Double] = []
        for i in 0..<count { paces.append(max(0.3, 1 + 0.12 * sin(Double(i) / 40 + phase) + random.normal(mean: 0, sd: 0.05))) }
        let total = paces.reduce(0, +)
        var progress = 0.0
        var shape: [(x: Double, y: Double, a: Double)] = []
        for pace in paces {
            let a = 2 * .pi * progress / total
            progress += pace
            let r = 1 + 0.18 * sin(3 * a) + 0.07 * sin(5 * a + phase)
            let theta = bearing + .pi + clockwise * a
            shape.append((cos(bearing) + r * cos(theta), sin(bearing) + r * sin(theta), a))
        }
        var unitLength = 0.0
        for i in 1..<shape.count { unitLength += hypot(shape[i].x - shape[i - 1].x, shape[i].y - shape[i - 1].y) }
        let scale = metres / max(unitLength, 1e-9)
        let metresPerDegree = 111_195.0
        var points: [String] = []
        var previous: (x: Double, y: Double)?
        var drift = (x: 0.0, y: 0.0)
        for (i, p) in shape.enumerated() {
            // Metres east (x) and north (y) of home, off by a slowly wandering GPS error.
            drift = (0.95 * drift.x + random.normal(mean: 0, sd: 0.25), 0.95 * drift.y + random.normal(mean: 0, sd: 0.25))
            let x = p.x * scale + drift.x, y = p.y * scale + drift.y
            let lat = home.lat + y / metresPerDegree
            let lon = home.lon + x / (metresPerDegree * cos(home.lat * .pi / 180))
            let altitude = 36 + 5 * sin(2 * p.a + phase) + 1.5 * sin(7 * p.a) + random.normal(mean: 0, sd: 0.05)
            var point = "{\"t\":\"" + DemoTimestamp.text(start + Int64(i) * 2000, offsetMinutes: offset) + "\""
            point += ",\"lat\":" + DemoNumber.text(lat, decimals: 7) + ",\"lon\":" + DemoNumber.text(lon, decimals: 7)
            point += ",\"altitude\":" + DemoNumber.text(altitude, decimals: 1)
            if let last = previous {
                let dx = x - last.x, dy = y - last.y
                let course = (atan2(dx, dy) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
                point += ",\"speed\":" + DemoNumber.text(hypot(dx, dy) / 2, decimals: 2) + ",\"course\":" + DemoNumber.text(course, decimals: 1)
            }
            point += ",\"horizontalAccuracy\":" + DemoNumber.text(random.double(3...8), decimals: 1)
            point += ",\"verticalAccuracy\":" + DemoNumber.text(random.double(2...6), decimals: 1) + "}"
            points.append(point)
            previous = (x, y)
        }
        return "[" + points.joined(separator: ",") + "]"
    }

    // MARK: - Wellness

    /// The day's items as JSON text, in the seed's kinds and field names.
    static func wellnessItems(_ date: CivilDate, _ samples: [DemoSample], watch: String?, random: inout SeededRandom) -> [String] {
        let midnight = CentralEuropeanTime.instant(date, minutes: 0)
        let offset = CentralEuropeanTime.offsetMinutes(atMilliseconds: midnight)
        func stamp(_ ms: Int64) -> String { "\"" + DemoTimestamp.text(ms, offsetMinutes: offset) + "\"" }
        func item(_ kind: String, start: Int64, end: Int64?, id: String? = nil, inUTC: Bool = false, _ fields: String) -> String {
            let startTime = inUTC ? "\"" + DemoTimestamp.text(start, offsetMinutes: 0) + "\"" : stamp(start)
            var text = "{\"kind\":\"\(kind)\",\"calendarDate\":\"\(date)\",\"startTime\":" + startTime
            if let end { text += ",\"endTime\":" + stamp(end) }
            text += ",\"tzOffsetSeconds\":\(offset * 60),\"final\":true"
            if let id { text += ",\"id\":\"\(id)\"" }
            return text + "," + fields + "}"
        }
        func series(_ list: [DemoSample], scale: Double = 1, decimals: Int) -> String {
            "[" + list.map { "{\"t\":" + stamp($0.start) + ",\"v\":" + DemoNumber.text((Double($0.value ?? "") ?? 0) * scale, decimals: decimals) + "}" }
                .joined(separator: ",") + "]"
        }
        let today = samples.filter { CentralEuropeanTime.localDate(atMilliseconds: $0.start) == date }.sorted { $0.start < $1.start }
        // By identifier: a type built by hand has no catalog position.
        func of(_ type: DemoType) -> [DemoSample] { today.filter { $0.type.identifier == type.identifier } }
        var items: [String] = []

        let daily = dailyFields(of, watch: watch)
        if !daily.isEmpty {
            // Its start as the seed writes it: local midnight in UTC.
            let next = CentralEuropeanTime.instant(date.adding(days: 1), minutes: 0)
            items.append(item("daily", start: midnight, end: next, inUTC: true, daily.joined(separator: ",")))
        }

        // The night that ended this morning (sleep belongs to the day of waking).
        let stageNames = [0: "inBed", 1: "asleepUnspecified", 2: "awake", 3: "core", 4: "deep", 5: "rem"]
        let night = samples.filter { $0.type.identifier == DemoType.sleep.identifier && CentralEuropeanTime.localDate(atMilliseconds: $0.end) == date }
            .sorted { $0.start < $1.start }
        let stages = night.compactMap { s -> String? in
            guard let name = Int(s.value ?? "").flatMap({ stageNames[$0] }) else { return nil }  // a stage HealthKit cannot name
            return "{\"stage\":\"\(name)\",\"start\":" + stamp(s.start) + ",\"end\":" + stamp(s.end) + "}"
        }
        if let first = night.first, let last = night.map(\.end).max(), !stages.isEmpty {
            items.append(item("sleep", start: first.start, end: last, "\"stages\":[" + stages.joined(separator: ",") + "]"))
            if night.contains(where: { $0.source == watch }) {
                items.append(item("skin_temperature", start: first.start, end: last,
                                  "\"celsius\":" + DemoNumber.text(random.normal(mean: 34.3, sd: 0.25), decimals: 2)))
            }
        }

        let hrv = of(.hrv), breaths = of(.respiratoryRate), oxygen = of(.oxygen)
        if let first = hrv.first { items.append(item("hrv", start: first.start, end: nil, "\"samples\":" + series(hrv, decimals: 3))) }
        if let first = breaths.first {
            items.append(item("respiration", start: first.start, end: nil, "\"samples\":" + series(breaths, decimals: 1)))
        }
        if let first = oxygen.first {
            items.append(item("pulse_ox", start: first.start, end: nil, "\"samples\":" + series(oxygen, scale: 100, decimals: 1)))
        }
        for v in of(.vo2Max) { items.append(item("fitness", start: v.start, end: nil, id: v.uuid, "\"vo2Max\":" + (v.value ?? "0"))) }
        for weight in of(.bodyMass) {
            var fields = "\"weightKg\":" + (weight.value ?? "0")
            if let fat = of(.bodyFat).first(where: { $0.start == weight.start })?.value.flatMap(Double.init) {
                fields += ",\"bodyFatPercent\":" + DemoNumber.text(fat * 100, decimals: 1)
            }
            if let bmi = of(.bmi).first(where: { $0.start == weight.start })?.value { fields += ",\"bodyMassIndex\":" + bmi }
            items.append(item("body_composition", start: weight.start, end: nil, id: weight.uuid, fields))
        }
        for systolic in of(.systolic) {
            guard let diastolic = of(.diastolic).first(where: { $0.start == systolic.start })?.value else { continue }
            items.append(item("blood_pressure", start: systolic.start, end: nil, id: systolic.uuid,
                              "\"systolic\":" + (systolic.value ?? "0") + ",\"diastolic\":" + diastolic))
        }
        return items
    }

    /// The fields of a day's `daily` item: HealthKit's merged totals from local midnight, the
    /// resting heart rate and the day's heart-rate mean, min and max (`of`: the day's samples of a type).
    static func dailyFields(_ of: (DemoType) -> [DemoSample], watch: String?) -> [String] {
        var daily: [String] = []
        let totals: [(DemoType, String, Int)] = [(.steps, "steps", 0), (.distance, "distanceMeters", 1), (.activeEnergy, "activeKilocalories", 1),
                                                 (.basalEnergy, "basalKilocalories", 1), (.flights, "flightsClimbed", 0),
                                                 (.exercise, "exerciseMinutes", 0)]
        for (type, field, decimals) in totals {
            if let total = merged(of(type), watch: watch) { daily.append("\"\(field)\":" + DemoNumber.text(total, decimals: decimals)) }
        }
        if let resting = of(.restingHeartRate).last?.value { daily.append("\"restingHeartRate\":" + resting) }
        let beats = of(.heartRate).compactMap { $0.value.flatMap(Double.init) }
        if !beats.isEmpty {
            daily.append("\"avgHeartRate\":" + DemoNumber.text(beats.reduce(0, +) / Double(beats.count), decimals: 0))
            daily.append("\"minHeartRate\":" + DemoNumber.text(beats.min()!, decimals: 0))
            daily.append("\"maxHeartRate\":" + DemoNumber.text(beats.max()!, decimals: 0))
        }
        return daily
    }

    /// A day's total as HealthKit's statistics merge it: every sample of the watch, and of any
    /// other source the part of its span no watch sample covers (an instant one whole or not at
    /// all). nil without samples.
    static func merged(_ samples: [DemoSample], watch: String?) -> Double? {
        guard !samples.isEmpty else { return nil }
        let watchSpans = samples.filter { $0.source == watch }.map { ($0.start, $0.end) }.sorted { $0.0 < $1.0 }
        var total = 0.0
        for s in samples {
            let value = Double(s.value ?? "") ?? 0
            if s.source == watch { total += value; continue }
            if s.end <= s.start {
                if !watchSpans.contains(where: { $0.0 <= s.start && s.start < $0.1 }) { total += value }
                continue
            }
            var covered: Int64 = 0
            for (from, to) in watchSpans where to > s.start && from < s.end {
                covered += min(to, s.end) - max(from, s.start)
            }
            total += value * Double(max(0, (s.end - s.start) - covered)) / Double(s.end - s.start)
        }
        return total
    }
}
