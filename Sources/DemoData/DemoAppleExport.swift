import Civil
import Foundation

/// The simulated person of `DemoGenerator` as the Health app's own export would hold them:
/// `export.xml` (Records, Workouts, ActivitySummaries, in the app's shapes and units) and one
/// GPX file per outdoor workout, deterministic by seed. Pure: the bytes come out in chunks
/// (`AppleExportDocument.next()`), and whoever writes the archive pulls them.
///
/// Every sample of the simulated days becomes a Record (sources named as the phone names
/// them, `Demo’s iPhone`; distance in km, height in cm, VO2 max in mL/min·kg, sleep stages by
/// name, times to the second in Europe/Berlin), grouped by type within blocks of 30 days, as
/// the app groups by type. The same options give the same samples as `DemoGenerator.samples()`.
public enum DemoAppleExport {
    /// A workout's route file.
    public struct Route: Sendable, Equatable {
        /// `workout-routes/route_2024-03-10_6.00pm.gpx` (inside `apple_health_export/`).
        public var path: String
        var start: Int64
        var end: Int64
        var distance: Double
        var seed: UInt64
    }

    /// Days per block: records are grouped by type within each.
    static let blockDays = 30

    /// Types a real export is full of that healthd does not send (audio exposure, walking
    /// metrics, stand hours, effort): outside the warehouse's catalog, kept like its unknown types.
    public static let extraTypes: [(type: DemoType, exportUnit: String)] = [
        (DemoType(identifier: "HKQuantityTypeIdentifierEnvironmentalAudioExposure", group: "other", kind: "quantity", unit: "dBASPL", order: 30), "dBASPL"),
        (DemoType(identifier: "HKQuantityTypeIdentifierHeadphoneAudioExposure", group: "other", kind: "quantity", unit: "dBASPL", order: 31), "dBASPL"),
        (DemoType(identifier: "HKQuantityTypeIdentifierWalkingSpeed", group: "other", kind: "quantity", unit: "km/hr", order: 32), "km/hr"),
        (DemoType(identifier: "HKQuantityTypeIdentifierWalkingStepLength", group: "other", kind: "quantity", unit: "cm", order: 33), "cm"),
        (DemoType(identifier: "HKQuantityTypeIdentifierWalkingDoubleSupportPercentage", group: "other", kind: "quantity", unit: "%", order: 34), "%"),
        (DemoType(identifier: "HKQuantityTypeIdentifierPhysicalEffort", group: "other", kind: "quantity", unit: "kcal/hr·kg", order: 35), "kcal/hr·kg"),
        (DemoType(identifier: "HKCategoryTypeIdentifierAppleStandHour", group: "other", kind: "category", unit: nil, order: 36), ""),
    ]

    /// Every sample of the simulated days that the export holds, day by day: the simulator's
    /// (what healthd sends) and the extra types, drawn from a generator of their own so the
    /// simulator's samples stay `DemoGenerator.samples()`'s.
    public static func forEachDay(_ options: DemoGenerator.Options, _ body: (CivilDate, [DemoSample]) throws -> Void) rethrows {
        var simulator = DemoSimulator(seed: options.seed)
        for day in 0..<options.days {
            let date = options.start.adding(days: day)
            try body(date, simulator.samples(for: date) + extras(date, seed: options.seed, phone: simulator.phone, watch: simulator.watch))
        }
    }

    /// The extra types' samples of one day, from 07:00 to 23:00 local time.
    static func extras(_ date: CivilDate, seed: UInt64, phone: String, watch: String) -> [DemoSample] {
        var random = SeededRandom(seed: seed &+ 0x9E37_79B9_7F4A_7C15 &* UInt64(truncatingIfNeeded: date.daysSinceEpoch))
        var out: [DemoSample] = []
        out.reserveCapacity(700)
        func add(_ index: Int, _ source: String, _ start: Int64, _ minutes: Double, _ value: String, name: String? = nil) {
            let end = start + Int64(minutes * 60_000)
            out.append(DemoSample(uuid: random.uuid(), type: extraTypes[index].type, source: source, start: start, end: end,
                                  written: end + 60_000, value: value, name: name))
        }
        var t = CentralEuropeanTime.instant(date, minutes: 420)
        let night = CentralEuropeanTime.instant(date, minutes: 1380)
        while t < night {
            add(0, watch, t, 3, DemoNumber.text(random.double(38...78), decimals: 3))
            if random.chance(0.12) { add(1, phone, t, 3, DemoNumber.text(random.double(55...82), decimals: 3)) }
            if random.chance(0.19) {
                add(2, phone, t, 0.5, DemoNumber.text(random.double(3.6...5.4), decimals: 2))
                add(3, phone, t, 0.5, DemoNumber.text(random.double(62...78), decimals: 1))
                add(4, phone, t, 0.5, DemoNumber.text(random.double(0.26...0.32), decimals: 3))
            }
            if random.chance(0.16) { add(5, watch, t, 3, DemoNumber.text(random.double(1.2...6.5), decimals: 1)) }
            t += 180_000
        }
        for hour in 7..<23 {
            let stood = random.chance(0.75)
            add(6, watch, CentralEuropeanTime.instant(date, minutes: Double(hour * 60)), 60, stood ? "0" : "1", name: stood ? "Stood" : "Idle")
        }
        return out
    }

    /// The routes of the simulated days' outdoor workouts (a first pass over the simulation:
    /// an archive lists its files before it is written).
    public static func routes(_ options: DemoGenerator.Options) -> [Route] {
        var simulator = DemoSimulator(seed: options.seed)
        var out: [Route] = []
        for day in 0..<options.days {
            for sample in simulator.samples(for: options.start.adding(days: day)) {
                if let route = route(of: sample, watch: simulator.watch) { out.append(route) }
            }
        }
        return out
    }

    /// A workout's route, for the watch's workouts that cover a distance.
    static func route(of s: DemoSample, watch: String) -> Route? {
        guard s.type == .workout, s.source == watch, let d = s.distanceMeters.flatMap(Double.init), d > 0 else { return nil }
        let local = s.start + Int64(CentralEuropeanTime.offsetMinutes(atMilliseconds: s.start)) * 60_000
        let inDay = Int(local - CivilDate.floorDivide(local, 86_400_000) * 86_400_000) / 60_000
        let hour = inDay / 60 % 12 == 0 ? 12 : inDay / 60 % 12
        let name = "route_\(CentralEuropeanTime.localDate(atMilliseconds: s.start))_\(hour).\(CivilDate.digits(inDay % 60, 2))\(inDay >= 720 ? "pm" : "am").gpx"
        return Route(path: "workout-routes/" + name, start: s.start, end: s.end, distance: d, seed: UInt64(truncatingIfNeeded: s.start))
    }

    /// A route file's bytes: a point every 10 seconds along a winding path from the Tiergarten,
    /// with Apple's extensions (speed, course, hAcc, vAcc).
    public static func gpx(_ route: Route) -> [UInt8] {
        var random = SeededRandom(seed: route.seed)
        let seconds = max(10, Int((route.end - route.start) / 1000))
        let speed = route.distance / Double(seconds)
        var lat = 52.5145 + random.double(-0.01...0.01), lon = 13.3501 + random.double(-0.01...0.01)
        var course = random.double(0...360)
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
              <metadata>
                <time>\(utc(route.end))</time>
              </metadata>
              <trk>
                <name>Route</name>
                <trkseg>

            """
        for t in stride(from: 0, through: seconds, by: 10) {
            let ele = 34 + 6 * sin(Double(t) / 300)
            out += "      <trkpt lon=\"\(DemoNumber.text(lon, decimals: 6))\" lat=\"\(DemoNumber.text(lat, decimals: 6))\"><ele>\(DemoNumber.text(ele, decimals: 6))</ele>"
                + "<time>\(utc(route.start + Int64(t) * 1000))</time><extensions><speed>\(DemoNumber.text(speed * random.double(0.9...1.1), decimals: 6))</speed>"
                + "<course>\(DemoNumber.text(course, decimals: 6))</course><hAcc>\(DemoNumber.text(random.double(2...9), decimals: 6))</hAcc>"
                + "<vAcc>\(DemoNumber.text(random.double(1.5...6), decimals: 6))</vAcc></extensions></trkpt>\n"
            course = (course + random.double(-20...20) + 360).truncatingRemainder(dividingBy: 360)
            let step: Double = speed * 10 / 6_371_008.8 * 180 / Double.pi
            let heading: Double = course * Double.pi / 180
            lat += step * cos(heading)
            lon += step * sin(heading) / cos(lat * Double.pi / 180)
        }
        out += "    </trkseg>\n  </trk>\n</gpx>\n"
        return Array(out.utf8)
    }

    /// `2019-06-11T22:00:42Z`
    static func utc(_ ms: Int64) -> String {
        let text = DemoTimestamp.text(CivilDate.floorDivide(ms, 1000) * 1000, offsetMinutes: 0)
        return String(text.prefix(19)) + "Z"
    }

    /// `2019-06-11 15:00:42 +0200`: how the export writes a time, to the second, in the zone's offset of that date.
    static func exportTime(_ ms: Int64) -> String {
        let offset = CentralEuropeanTime.offsetMinutes(atMilliseconds: ms)
        let text = DemoTimestamp.text(CivilDate.floorDivide(ms, 1000) * 1000, offsetMinutes: offset)
        return text.prefix(10) + " " + text.dropFirst(11).prefix(8) + " +" + CivilDate.digits(offset / 60, 2) + CivilDate.digits(offset % 60, 2)
    }

    /// Text as an XML attribute value.
    static func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

/// `export.xml` of the simulated person, produced block by block.
public final class AppleExportDocument {
    private let options: DemoGenerator.Options
    private let malformed: Bool
    private var simulator: DemoSimulator
    private var day = 0
    private var state = 0
    private var recordsWritten = 0
    /// Records written so far (the malformed one included).
    public var records: Int { recordsWritten }
    /// Workouts and activity summaries written so far.
    public private(set) var workouts = 0
    public private(set) var activitySummaries = 0

    /// The document of `options`' days; `malformed` puts one Record the app could not have
    /// written (attribute names with spaces, as a 2015 export had) in the first block.
    public init(_ options: DemoGenerator.Options, malformed: Bool = false) {
        self.options = options
        self.malformed = malformed
        simulator = DemoSimulator(seed: options.seed)
    }

    /// The next chunk of the document; nil at its end.
    public func next() -> [UInt8]? {
        switch state {
        case 0:
            state = 1
            return Array(header().utf8)
        case 1:
            guard day < options.days else {
                state = 2
                return Array("</HealthData>\n".utf8)
            }
            let count = min(DemoAppleExport.blockDays, options.days - day)
            let block = block(days: day..<(day + count))
            day += count
            return Array(block.utf8)
        default:
            return nil
        }
    }

    private func header() -> String {
        let exported = CentralEuropeanTime.instant(options.start.adding(days: options.days), minutes: 480)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!-- HealthKit Export Version: 14 -->
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
            <!ATTLIST HealthData
              locale CDATA #REQUIRED
            >
            <!ELEMENT ExportDate EMPTY>
            <!ATTLIST ExportDate
              value CDATA #REQUIRED
            >
            ]>
            <HealthData locale="en_DE">
             <ExportDate value="\(DemoAppleExport.exportTime(exported))"/>
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-05-17" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>

            """
    }

    private struct DaySummary {
        var energy = 0.0
        var exercise = 0.0
        var standHours: Set<Int64> = []
    }

    private func block(days: Range<Int>) -> String {
        var samples: [DemoSample] = []
        var summaries: [(CivilDate, DaySummary)] = []
        for d in days {
            let date = options.start.adding(days: d)
            let made = simulator.samples(for: date)
                + DemoAppleExport.extras(date, seed: options.seed, phone: simulator.phone, watch: simulator.watch)
            var summary = DaySummary()
            for s in made where CentralEuropeanTime.localDate(atMilliseconds: s.start) == date {
                if s.type == .activeEnergy, s.source == simulator.watch || s.source == simulator.phone { summary.energy += Double(s.value ?? "0") ?? 0 }
                if s.type == .exercise, s.source == simulator.watch { summary.exercise += Double(s.value ?? "0") ?? 0 }
                if s.type == .stand { summary.standHours.insert(s.start / 3_600_000) }
            }
            summaries.append((date, summary))
            samples.append(contentsOf: made)
        }
        samples.sort { a, b in a.type.order != b.type.order ? a.type.order < b.type.order : a.start != b.start ? a.start < b.start : a.uuid < b.uuid }
        var out = ""
        out.reserveCapacity(samples.count * 420)
        var workouts: [DemoSample] = []
        for s in samples {
            if s.type == .workout {
                workouts.append(s)
                continue
            }
            if malformed && recordsWritten == 100 {
                out += " <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Demo’s iPhone\" Demo Note=\"written by hand\" unit=\"count\" "
                    + "startDate=\"\(DemoAppleExport.exportTime(s.start))\" endDate=\"\(DemoAppleExport.exportTime(s.end))\" value=\"1\"/>\n"
                recordsWritten += 1
            }
            record(s, into: &out)
            recordsWritten += 1
        }
        for w in workouts { workout(w, into: &out) }
        for (date, summary) in summaries {
            out += " <ActivitySummary dateComponents=\"\(date)\" activeEnergyBurned=\"\(DemoNumber.text(summary.energy, decimals: 3))\" activeEnergyBurnedGoal=\"500\" "
                + "activeEnergyBurnedUnit=\"kcal\" appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"\(DemoNumber.text(summary.exercise, decimals: 0))\" "
                + "appleExerciseTimeGoal=\"30\" appleStandHours=\"\(summary.standHours.count)\" appleStandHoursGoal=\"12\"/>\n"
            activitySummaries += 1
        }
        return out
    }

    private func sourceName(_ source: String) -> String {
        switch source {
        case simulator.phone: "Demo’s iPhone"
        case simulator.watch: "Demo’s Apple Watch"
        case simulator.scale: "Health Mate"
        case simulator.cuff: "OMRON connect"
        case simulator.strava: "Strava"
        default: source
        }
    }

    private func device(_ source: String) -> String {
        switch source {
        case simulator.phone: " sourceVersion=\"17.4\" device=\"&lt;&lt;HKDevice: 0x2834c1a40&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.4&gt;\""
        case simulator.watch: " sourceVersion=\"10.4\" device=\"&lt;&lt;HKDevice: 0x2834c2b10&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.4&gt;\""
        default: " sourceVersion=\"7.1\""
        }
    }

    /// The unit the app writes a type in, and the value in it.
    private func written(_ s: DemoSample) -> (unit: String?, value: String) {
        let value = s.value ?? ""
        switch s.type {
        case .distance: return ("km", ((Double(value) ?? 0) / 1000).description)
        case .height: return ("cm", ((Double(value) ?? 0) * 100).description)
        case .bodyFat, .oxygen: return ("%", value)
        case .vo2Max: return ("mL/min·kg", value)
        // A stage the app has no name for is written as its number, as iOS 8 wrote every stage.
        case .sleep: return (nil, DemoAppleExport.sleepNames[Int(value) ?? -1].map { "HKCategoryValueSleepAnalysis" + $0 } ?? value)
        case DemoAppleExport.extraTypes[6].type: return (nil, "HKCategoryValueAppleStandHour" + (s.name ?? value))
        default: return (s.type.unit, value)
        }
    }

    private func record(_ s: DemoSample, into out: inout String) {
        let (unit, value) = written(s)
        out += " <Record type=\"\(s.type.identifier)\" sourceName=\"\(DemoAppleExport.escaped(sourceName(s.source)))\"\(device(s.source))"
        if let unit { out += " unit=\"\(DemoAppleExport.escaped(unit))\"" }
        out += " creationDate=\"\(DemoAppleExport.exportTime(s.written))\" startDate=\"\(DemoAppleExport.exportTime(s.start))\" endDate=\"\(DemoAppleExport.exportTime(s.end))\" value=\"\(value)\""
        switch s.type {
        case .heartRate:
            out += ">\n  <MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(s.start % 3)\"/>\n </Record>\n"
        case .hrv:
            out += ">\n  <HeartRateVariabilityMetadataList>\n"
            for beat in 0..<4 {
                let t = s.start + Int64(beat) * 870 + 120
                let local = t + Int64(CentralEuropeanTime.offsetMinutes(atMilliseconds: t)) * 60_000
                let inDay = Int(local - CivilDate.floorDivide(local, 86_400_000) * 86_400_000)
                let hour = inDay / 3_600_000
                out += "   <InstantaneousBeatsPerMinute bpm=\"\(62 + beat)\" time=\"\(hour % 12 == 0 ? 12 : hour % 12):\(CivilDate.digits(inDay / 60_000 % 60, 2)):"
                    + "\(CivilDate.digits(inDay / 1000 % 60, 2)).\(CivilDate.digits(inDay % 1000 / 10, 2)) \(hour >= 12 ? "PM" : "AM")\"/>\n"
            }
            out += "  </HeartRateVariabilityMetadataList>\n </Record>\n"
        default:
            out += "/>\n"
        }
    }

    private func workout(_ w: DemoSample, into out: inout String) {
        let name = DemoAppleExport.activityNames[w.activityType ?? 3000] ?? "Other"
        let minutes = (Double(w.durationSeconds ?? "0") ?? 0) / 60
        out += " <Workout workoutActivityType=\"HKWorkoutActivityType\(name)\" duration=\"\(minutes.description)\" durationUnit=\"min\""
        if let d = w.distanceMeters.flatMap(Double.init) { out += " totalDistance=\"\((d / 1000).description)\" totalDistanceUnit=\"km\"" }
        if let e = w.activeEnergyKilocalories { out += " totalEnergyBurned=\"\(e)\" totalEnergyBurnedUnit=\"kcal\"" }
        out += " sourceName=\"\(DemoAppleExport.escaped(sourceName(w.source)))\"\(device(w.source)) creationDate=\"\(DemoAppleExport.exportTime(w.written))\""
            + " startDate=\"\(DemoAppleExport.exportTime(w.start))\" endDate=\"\(DemoAppleExport.exportTime(w.end))\">\n"
            + "  <MetadataEntry key=\"HKIndoorWorkout\" value=\"0\"/>\n"
        if let route = DemoAppleExport.route(of: w, watch: simulator.watch) {
            out += "  <WorkoutRoute sourceName=\"Demo’s Apple Watch\" sourceVersion=\"10.4\" creationDate=\"\(DemoAppleExport.exportTime(w.written))\""
                + " startDate=\"\(DemoAppleExport.exportTime(w.start))\" endDate=\"\(DemoAppleExport.exportTime(w.end))\">\n"
                + "   <FileReference path=\"/\(route.path)\"/>\n  </WorkoutRoute>\n"
        }
        out += " </Workout>\n"
        workouts += 1
    }
}

extension DemoAppleExport {
    /// The export's names of the sleep values (`HKCategoryValueSleepAnalysis…`).
    static let sleepNames: [Int: String] = [0: "InBed", 1: "AsleepUnspecified", 2: "Awake", 3: "AsleepCore", 4: "AsleepDeep", 5: "AsleepREM"]
    /// The export's names of the activity types the demo records (`HKWorkoutActivityType…`).
    static let activityNames: [Int: String] = [37: "Running", 13: "Cycling", 52: "Walking", 50: "TraditionalStrengthTraining", 57: "Yoga",
                                               63: "HighIntensityIntervalTraining", 14: "Dance", 15: "DanceInspiredTraining",
                                               30: "MixedMetabolicCardioTraining"]
}
