import Civil
/// Simulates one person's Apple Health day by day: an iPhone and an Apple Watch writing
/// overlapping activity, the watch's heart readings (dense during workouts), nightly sleep
/// stages, a weekly weigh-in, about four workouts a week and some vitals.
///
/// Every draw comes from one seeded generator in a fixed order, so a seed and a start date
/// decide every sample.
struct DemoSimulator {
    private var random: SeededRandom
    let phone: String
    let watch: String
    let scale = "com.withings.wiscale2"
    let cuff = "com.omronhealthcare.omronconnect"
    let strava = "com.strava.stravaride"
    private let heightMeters: Double
    private var weight: Double
    private var restingBase: Double
    private var previousPlan: DayPlan?
    private var dayIndex = 0

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        phone = "com.apple.health." + random.uuid()
        watch = "com.apple.health." + random.uuid()
        heightMeters = random.double(1.62...1.92)
        weight = random.double(21.5...25.5) * heightMeters * heightMeters
        restingBase = random.double(52...64)
    }

    /// What the person does on one day, decided before its samples.
    struct DayPlan {
        var date: CivilDate
        /// Minutes after local midnight.
        var wake: Double
        var bed: Double
        var watchWorn: Bool
        var bouts: [Bout]
        var workouts: [Workout]
    }

    /// A spell of walking.
    struct Bout {
        var start: Double
        var minutes: Double
        var cadence: Double
        var phoneCarried: Bool
    }

    /// A planned workout.
    struct Workout {
        var start: Double
        var minutes: Double
        var activity: Activity
        var withEnergy: Bool
        var alsoOnStrava: Bool
    }

    /// The activity types the demo records. 14, 15 and 30 are deprecated and arrive unnamed.
    struct Activity {
        var type: Int
        var name: String?
        var hasDistance: Bool
        var cadence: Double
        var stride: Double
        var kcalPerMinute: Double
        var heartRate: ClosedRange<Double>

        static let all: [Activity] = [
            Activity(type: 37, name: "running", hasDistance: true, cadence: 165, stride: 1.05, kcalPerMinute: 11, heartRate: 140...172),
            Activity(type: 37, name: "running", hasDistance: true, cadence: 160, stride: 1.0, kcalPerMinute: 10.5, heartRate: 135...165),
            Activity(type: 13, name: "cycling", hasDistance: true, cadence: 0, stride: 0, kcalPerMinute: 9, heartRate: 120...158),
            Activity(type: 52, name: "walking", hasDistance: true, cadence: 112, stride: 0.78, kcalPerMinute: 5, heartRate: 95...120),
            Activity(type: 50, name: "traditionalStrengthTraining", hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 6.5, heartRate: 100...145),
            Activity(type: 57, name: "yoga", hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 3.5, heartRate: 80...110),
            Activity(type: 63, name: "highIntensityIntervalTraining", hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 12, heartRate: 130...178),
            Activity(type: 14, name: nil, hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 7, heartRate: 110...150),
            Activity(type: 15, name: nil, hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 7.5, heartRate: 110...155),
            Activity(type: 30, name: nil, hasDistance: false, cadence: 0, stride: 0, kcalPerMinute: 9, heartRate: 115...160),
        ]
    }

    private mutating func plan(_ date: CivilDate) -> DayPlan {
        let weekend = date.weekday >= 5
        let wake = random.double(390...465) + (weekend ? random.double(20...80) : 0)
        let bed = random.double(1350...1435) + (date.weekday >= 4 && date.weekday <= 5 ? random.double(15...60) : 0)
        let watchWorn = !random.chance(0.04)
        var workouts: [Workout] = []
        if random.chance(4.0 / 7.0) {
            let morning = random.chance(0.4)
            let start = morning ? wake + random.double(20...60) : random.double(1050...1170)
            let activity = random.pick(Activity.all)
            workouts.append(Workout(start: start, minutes: random.double(22...70), activity: activity,
                                    withEnergy: !random.chance(0.08),
                                    alsoOnStrava: (activity.type == 37 || activity.type == 13) && random.chance(0.3)))
        }
        var bouts: [Bout] = []
        func add(_ start: Double, _ minutes: ClosedRange<Double>) {
            bouts.append(Bout(start: start, minutes: random.double(minutes), cadence: random.double(92...122),
                              phoneCarried: random.chance(0.8)))
        }
        if !weekend {
            add(wake + random.double(45...80), 12...25)
            add(random.double(1040...1080), 12...25)
        }
        if random.chance(0.6) { add(random.double(730...790), 8...22) }
        for _ in 0..<random.int(2...5) { add(random.double(600...1260), 3...14) }
        if weekend && random.chance(0.5) { add(random.double(840...960), 30...90) }
        // No bout inside a workout: the workout has its own steps.
        bouts.removeAll { bout in
            workouts.contains { bout.start + bout.minutes > $0.start - 5 && bout.start < $0.start + $0.minutes + 5 }
        }
        bouts.sort { $0.start < $1.start }
        return DayPlan(date: date, wake: wake, bed: bed, watchWorn: watchWorn, bouts: bouts, workouts: workouts)
    }

    /// One day's samples as they are made, and the day's instants every part reads.
    struct DayMaking {
        let date: CivilDate
        let yesterday: DayPlan
        let today: DayPlan
        var out: [DemoSample] = []
        let sleepStart: Int64, wakeAt: Int64, asleepFrom: Int64, dayStart: Int64, dayEnd: Int64
        let workoutSpans: [(Int64, Int64)], boutSpans: [(Int64, Int64)]

        init(date: CivilDate, yesterday: DayPlan, today: DayPlan) {
            self.date = date
            self.yesterday = yesterday
            self.today = today
            out.reserveCapacity(1400)
            func at(_ minutes: Double) -> Int64 { CentralEuropeanTime.instant(date, minutes: minutes) }
            sleepStart = CentralEuropeanTime.instant(yesterday.date, minutes: yesterday.bed)
            wakeAt = at(today.wake)
            asleepFrom = at(today.bed)
            dayStart = at(0)
            dayEnd = at(1440)
            workoutSpans = today.workouts.map { (at($0.start), at($0.start + $0.minutes)) }
            boutSpans = today.bouts.map { (at($0.start), at($0.start + $0.minutes)) }
        }

        /// The instant `minutes` after this day's local midnight.
        func at(_ minutes: Double) -> Int64 { CentralEuropeanTime.instant(date, minutes: minutes) }
    }

    /// Every sample of one local day (sleep: the night that ends this morning), in the order made.
    mutating func samples(for date: CivilDate) -> [DemoSample] {
        let yesterday = previousPlan ?? plan(date.adding(days: -1))
        let today = plan(date)
        previousPlan = today
        defer { dayIndex += 1 }
        var day = DayMaking(date: date, yesterday: yesterday, today: today)
        night(&day)
        if today.watchWorn { watchDay(&day) }
        walking(&day)
        pottering(&day)
        for (workout, span) in zip(today.workouts, day.workoutSpans) where today.watchWorn {
            self.workout(workout, span, &day)
        }
        summaries(&day)
        return day.out
    }

    private mutating func watchWritten(_ end: Int64) -> Int64 { end + Int64(random.int(180_000...2_400_000)) }
    private mutating func phoneWritten(_ end: Int64) -> Int64 { end + Int64(random.int(500...90_000)) }
    private mutating func quantity(_ day: inout DayMaking, _ type: DemoType, _ source: String, _ start: Int64, _ end: Int64,
                                   _ value: String, written: Int64) {
        day.out.append(DemoSample(uuid: random.uuid(), type: type, source: source, start: start, end: end, written: written, value: value))
    }

    /// The night that ends this morning: in bed on the phone, stages on the watch, and the
    /// vitals it measured asleep.
    private mutating func night(_ day: inout DayMaking) {
        let sleepStart = day.sleepStart, wakeAt = day.wakeAt
        let morningSync = wakeAt + Int64(random.int(300_000...2_400_000))
        day.out.append(DemoSample(uuid: random.uuid(), type: .sleep, source: phone, start: sleepStart - 300_000,
                                  end: wakeAt + 240_000, written: wakeAt + 250_000, value: "0", name: "inBed"))
        guard day.yesterday.watchWorn else { return }
        var t = sleepStart + Int64(random.int(240_000...1_500_000))
        var cycle = 0
        while t < wakeAt - 600_000 {
            let late = Double(cycle) / 5
            var stages: [(Int, Double)] = [(3, random.double(15...35)), (4, random.double(8...32) * (1.2 - late)),
                                           (3, random.double(8...20)), (5, random.double(8...26) * (0.6 + late))]
            if random.chance(0.3) { stages.append((2, random.double(1...6))) }
            if random.chance(0.08) { stages.insert((6, random.double(2...9)), at: 2) }  // a stage this build cannot name
            if random.chance(0.05) { stages.append((1, random.double(3...12))) }
            for (value, minutes) in stages {
                let end = min(t + Int64(max(1, minutes) * 60_000), wakeAt)
                if end <= t { break }
                day.out.append(DemoSample(uuid: random.uuid(), type: .sleep, source: watch, start: t, end: end,
                                          written: morningSync, value: String(value), name: Self.sleepName(value)))
                t = end
            }
            cycle += 1
        }
        // Vitals measured asleep.
        for _ in 0..<random.int(3...8) {
            let t = sleepStart + Int64(random.double(0.1...0.95) * Double(wakeAt - sleepStart))
            quantity(&day, .oxygen, watch, t, t, DemoNumber.text(min(1, random.normal(mean: 0.965, sd: 0.012)), decimals: 2), written: morningSync)
        }
        for _ in 0..<random.int(4...9) {
            let t = sleepStart + Int64(random.double(0.05...0.95) * Double(wakeAt - sleepStart))
            quantity(&day, .respiratoryRate, watch, t, t + 60_000, DemoNumber.text(random.normal(mean: 14.5, sd: 1.2), decimals: 1), written: morningSync)
        }
        for _ in 0..<random.int(1...3) {
            let t = sleepStart + Int64(random.double(0.1...0.9) * Double(wakeAt - sleepStart))
            quantity(&day, .hrv, watch, t, t + 60_000, DemoNumber.text(max(12, random.normal(mean: 55, sd: 14)), decimals: 3), written: morningSync)
        }
    }

    /// A day the watch is worn: heart rate every few minutes, basal energy, stand minutes and
    /// active energy.
    private mutating func watchDay(_ day: inout DayMaking) {
        // Heart rate every few minutes, all day, from the watch.
        var t = day.dayStart + Int64(random.int(0...300_000))
        while t < day.dayEnd {
            if let w = day.workoutSpans.first(where: { t >= $0.0 && t < $0.1 }) {
                t = w.1 + Int64(random.int(30_000...120_000))
                continue
            }
            let bpm: Double
            if t < day.wakeAt || t >= day.asleepFrom {
                bpm = random.normal(mean: restingBase - 4, sd: 3)
            } else if day.boutSpans.contains(where: { t >= $0.0 && t < $0.1 }) {
                bpm = random.normal(mean: 104, sd: 8)
            } else {
                bpm = random.normal(mean: restingBase + 14, sd: 7)
            }
            quantity(&day, .heartRate, watch, t, t, DemoNumber.text(max(38, bpm), decimals: 0), written: watchWritten(t))
            t += Int64(random.int(240_000...420_000))
        }
        // Basal energy every half hour; stand minutes in waking hours.
        var b = day.dayStart
        while b < day.dayEnd {
            let end = min(b + 1_800_000, day.dayEnd)
            quantity(&day, .basalEnergy, watch, b, end, DemoNumber.text(random.normal(mean: 35.5, sd: 1.2), decimals: 3), written: watchWritten(end))
            b = end
        }
        var hour = (day.today.wake / 60).rounded(.up)
        while hour * 60 < day.today.bed - 30 {
            if random.chance(0.8) {
                let s = day.at(hour * 60 + random.double(0...45))
                let minutes = random.int(1...6)
                quantity(&day, .stand, watch, s, s + Int64(minutes) * 60_000, String(minutes), written: watchWritten(s))
            }
            hour += 1
        }
        // Active energy every ~10 minutes while awake, outside workouts.
        var a = day.wakeAt
        while a < day.asleepFrom {
            let end = a + Int64(random.int(420_000...780_000))
            if !day.workoutSpans.contains(where: { a < $0.1 && end > $0.0 }) {
                let walking = day.boutSpans.contains { a < $0.1 && end > $0.0 }
                let kcal = walking ? random.double(18...40) : random.double(0.8...4.5)
                quantity(&day, .activeEnergy, watch, a, end, DemoNumber.text(kcal, decimals: 3), written: watchWritten(end))
            }
            a = end
        }
    }

    /// Walking: the watch in short chunks, the phone (when carried) in longer ones, overlapping.
    private mutating func walking(_ day: inout DayMaking) {
        for (bout, span) in zip(day.today.bouts, day.boutSpans) {
            let stride = random.double(0.72...0.8)
            if day.today.watchWorn {
                var s = span.0
                while s < span.1 {
                    let end = min(s + Int64(random.int(60_000...420_000)), span.1)
                    let steps = bout.cadence * Double(end - s) / 60_000 * random.double(0.9...1.05)
                    quantity(&day, .steps, watch, s, end, DemoNumber.text(steps, decimals: 0), written: watchWritten(end))
                    quantity(&day, .distance, watch, s, end, DemoNumber.text(steps * stride, decimals: 2), written: watchWritten(end))
                    if bout.cadence > 110 {
                        quantity(&day, .exercise, watch, s, end, String(max(1, Int(Double(end - s) / 60_000))), written: watchWritten(end))
                    }
                    s = end
                }
            }
            guard bout.phoneCarried else { continue }
            var s = span.0 + Int64(random.int(0...40_000))
            while s < span.1 {
                let end = min(s + Int64(random.int(300_000...600_000)), span.1)
                let steps = bout.cadence * Double(end - s) / 60_000 * random.double(0.85...1.0)
                quantity(&day, .steps, phone, s, end, DemoNumber.text(steps, decimals: 0), written: phoneWritten(end))
                quantity(&day, .distance, phone, s, end, DemoNumber.text(steps * stride * 0.97, decimals: 2), written: phoneWritten(end))
                if !day.today.watchWorn {
                    quantity(&day, .activeEnergy, phone, s, end, DemoNumber.text(steps * 0.045, decimals: 3), written: phoneWritten(end))
                }
                s = end
            }
            if random.chance(0.35) {
                let t = span.0 + (span.1 - span.0) / 2
                quantity(&day, .flights, phone, t, t + 30_000, String(random.int(1...4)), written: phoneWritten(t + 30_000))
            }
        }
    }

    /// Pottering about the house: a few small step counts from whichever device noticed.
    private mutating func pottering(_ day: inout DayMaking) {
        for _ in 0..<random.int(3...8) {
            let s = day.at(random.double(day.today.wake + 10...day.today.bed - 20))
            let end = s + Int64(random.int(30_000...240_000))
            let source = day.today.watchWorn && random.chance(0.7) ? watch : phone
            let steps = Double(random.int(12...160))
            quantity(&day, .steps, source, s, end, String(Int(steps)), written: source == watch ? watchWritten(end) : phoneWritten(end))
        }
    }

    /// A workout: dense heart rate, energy and exercise minutes per minute, steps for running
    /// and walking; the workout itself, now and then the same session from a second app, and
    /// after a run now and then a VO2 max.
    private mutating func workout(_ workout: Workout, _ span: (Int64, Int64), _ day: inout DayMaking) {
        let activity = workout.activity
        let minutes = Double(span.1 - span.0) / 60_000
        let written = watchWritten(span.1)
        var t = span.0 + Int64(random.int(2_000...6_000))
        while t < span.1 {
            let phase = Double(t - span.0) / Double(span.1 - span.0)
            let warm = min(1, phase * 4)
            let bpm = activity.heartRate.lowerBound + (activity.heartRate.upperBound - activity.heartRate.lowerBound) * warm * random.double(0.75...1.0)
            quantity(&day, .heartRate, watch, t, t, DemoNumber.text(bpm, decimals: 0), written: written)
            t += Int64(random.int(4_000...6_500))
        }
        var m = span.0
        var totalKcal = 0.0
        while m < span.1 {
            let end = min(m + 60_000, span.1)
            let kcal = activity.kcalPerMinute * Double(end - m) / 60_000 * random.double(0.8...1.15)
            totalKcal += kcal
            quantity(&day, .activeEnergy, watch, m, end, DemoNumber.text(kcal, decimals: 3), written: written)
            quantity(&day, .exercise, watch, m, end, "1", written: written)
            m = end
        }
        var distance = 0.0
        if activity.cadence > 0 {
            var s = span.0
            while s < span.1 {
                let end = min(s + Int64(random.int(60_000...150_000)), span.1)
                let steps = activity.cadence * Double(end - s) / 60_000 * random.double(0.93...1.04)
                distance += steps * activity.stride
                quantity(&day, .steps, watch, s, end, DemoNumber.text(steps, decimals: 0), written: written)
                quantity(&day, .distance, watch, s, end, DemoNumber.text(steps * activity.stride, decimals: 2), written: written)
                s = end
            }
        } else if activity.hasDistance {
            distance = minutes * random.double(380...470)  // cycling, metres a minute
        }
        day.out.append(DemoSample(
            uuid: random.uuid(), type: .workout, source: watch, start: span.0, end: span.1, written: written,
            activityType: activity.type, activityName: activity.name,
            durationSeconds: DemoNumber.text(Double(span.1 - span.0) / 1000, decimals: 3),
            distanceMeters: activity.hasDistance ? DemoNumber.text(distance, decimals: 2) : nil,
            activeEnergyKilocalories: workout.withEnergy ? DemoNumber.text(totalKcal, decimals: 3) : nil))
        if workout.alsoOnStrava {
            // The same session recorded by a second app: overlapping, never merged.
            let s = span.0 + Int64(random.int(5_000...60_000))
            let e = span.1 + Int64(random.int(-30_000...45_000))
            day.out.append(DemoSample(
                uuid: random.uuid(), type: .workout, source: strava, start: s, end: e, written: e + Int64(random.int(600_000...3_600_000)),
                activityType: activity.type, activityName: activity.name,
                durationSeconds: String((e - s) / 1000),
                distanceMeters: DemoNumber.text(distance * random.double(0.97...1.03), decimals: 1),
                activeEnergyKilocalories: DemoNumber.text(totalKcal * random.double(0.9...1.1), decimals: 0)))
        }
        if activity.type == 37 && random.chance(0.5) {
            quantity(&day, .vo2Max, watch, span.1, span.1, DemoNumber.text(random.normal(mean: 42, sd: 1.5), decimals: 2), written: written)
        }
    }

    /// The day's heart summaries (written in the evening), the height once, the weekly
    /// weigh-in, and now and then a blood pressure reading or a temperature typed in by hand.
    private mutating func summaries(_ day: inout DayMaking) {
        let today = day.today
        if today.watchWorn {
            let evening = day.asleepFrom + Int64(random.int(600_000...1_800_000))
            quantity(&day, .restingHeartRate, watch, day.dayStart, day.asleepFrom, DemoNumber.text(random.normal(mean: restingBase, sd: 2), decimals: 0), written: evening)
            if let first = day.boutSpans.first, let last = day.boutSpans.last {
                quantity(&day, .walkingHeartRate, watch, first.0, last.1, DemoNumber.text(random.normal(mean: 101, sd: 4), decimals: 1), written: evening)
            }
            let t = day.at(random.double(today.wake + 60...today.bed - 60))
            quantity(&day, .hrv, watch, t, t + 60_000, DemoNumber.text(max(12, random.normal(mean: 48, sd: 12)), decimals: 3), written: watchWritten(t))
        }
        // Weekly weigh-in on Monday morning; height once.
        if dayIndex == 0 {
            let t = day.at(today.wake + 25)
            quantity(&day, .height, phone, t, t, DemoNumber.text(heightMeters, decimals: 2), written: t + 1000)
        }
        if day.date.weekday == 0 {
            weight += random.normal(mean: -0.05, sd: 0.3)
            let t = day.at(today.wake + random.double(5...30))
            let fat = random.normal(mean: 0.19, sd: 0.008)
            quantity(&day, .bodyMass, scale, t, t, DemoNumber.text(weight, decimals: 2), written: t + 60_000)
            quantity(&day, .bodyFat, scale, t, t, DemoNumber.text(fat, decimals: 3), written: t + 60_000)
            quantity(&day, .bmi, scale, t, t, DemoNumber.text(weight / (heightMeters * heightMeters), decimals: 1), written: t + 60_000)
            quantity(&day, .leanMass, scale, t, t, DemoNumber.text(weight * (1 - fat), decimals: 2), written: t + 60_000)
        }
        if random.chance(0.12) {
            let t = day.at(random.double(today.wake + 30...today.wake + 120))
            let written = t + Int64(random.int(60_000...7_200_000))
            quantity(&day, .systolic, cuff, t, t, String(random.int(110...136)), written: written)
            quantity(&day, .diastolic, cuff, t, t, String(random.int(68...88)), written: written)
        }
        if random.chance(0.04) {
            let t = day.at(random.double(today.wake...today.bed))
            quantity(&day, .bodyTemperature, phone, t, t, DemoNumber.text(random.double(36.3...37.4), decimals: 1), written: t + 5000)
        }
    }

    /// A fresh exportId from the same seeded stream.
    mutating func exportId() -> String {
        random.uuid()
    }

    static func sleepName(_ value: Int) -> String? {
        switch value {
        case 0: "inBed"
        case 1: "asleepUnspecified"
        case 2: "awake"
        case 3: "asleepCore"
        case 4: "asleepDeep"
        case 5: "asleepREM"
        default: nil
        }
    }

    /// The export runs the phone makes on `date`: local wall times in minutes, and whether
    /// the run is a manual "last 3 hours" export rather than the scheduled one.
    mutating func runs(on date: CivilDate) -> [(minutes: Double, manual: Bool)] {
        var out: [(Double, Bool)] = []
        for (slot, base) in [470.0, 735, 1000, 1210, 1410].enumerated() {
            let minutes = base + random.double(-25...25)
            if random.chance(0.15) { continue }  // Low Power Mode, a locked phone: no run then
            out.append((min(minutes, 1435), slot == 3 && date.weekday == 6))
        }
        return out
    }
}
