import Hashing

/// Workouts (`data.workouts`), export versions 2 and 1: one workout sample each, in healthd's
/// shape, with the heart rate (`heartRateData`), power and cadence series as streams and the
/// `route` (`latitude`/`longitude` in version 2, `lat`/`lon` in version 1) as the route.
extension HAEWalker {
    /// The members of a workout the decoder reads; the others are kept under the sample's `hae`.
    enum WorkoutKey: Int, CaseIterable {
        case id, name, start, end, duration, distance, activeEnergyBurned, activeEnergy, source
        case heartRateData, cyclingPower, cyclingCadence, runningPower, route
        static let table = KeyTable(allCases.map { "\($0)" })

        /// The stream a series member becomes, with its plausible values.
        var stream: (name: String, range: PlausibleRange)? {
            switch self {
            case .heartRateData: ("heart_rate", .heartRate)
            case .cyclingPower: ("cycling_power", Plausibility.powerAndCadence)
            case .cyclingCadence: ("cycling_cadence", Plausibility.powerAndCadence)
            case .runningPower: ("running_power", Plausibility.powerAndCadence)
            default: nil
            }
        }
    }

    /// What a workout's members said, gathered while walking it.
    struct WorkoutParts {
        var header: [WorkoutKey: JSONNode] = [:]
        /// `start`/`end` as written, for a version 1 workout's name-based uuid.
        var written: [WorkoutKey: [UInt8]] = [:]
        var distance: Double?
        var energy: Double?
        var streams: [(name: String, stream: WorkoutStream)] = []
        var route = WorkoutRoute()
        /// The members kept under `hae`, as `"key":value` texts.
        var kept: [Range<Int>] = []
        /// The first problem met: the workout is then quarantined once the walk is past it.
        var problem: StrideePayloadError?
    }

    /// One element of `data.workouts`.
    mutating func workout(_ path: String, _ cursor: inout JSONCursor) throws(StrideePayloadError) {
        cursor.skipWhitespace()
        let start = cursor.offset
        position += 1
        guard cursor.enter(UInt8(ascii: "{")) else {
            let range = try cursor.value(depth: 3, into: &tape)
            return quarantine(path, "not an object", range)
        }
        var parts = WorkoutParts()
        var first = true
        while let key = try cursor.nextKey(&first, depth: 3, tape: &tape) {
            let known = reader.index(of: key, in: WorkoutKey.table).flatMap(WorkoutKey.init(rawValue:))
            if let known, let stream = known.stream {
                let series = try series(&cursor, "\(path).\(known)", stream.range, into: &parts.problem)
                if !series.isEmpty { parts.streams.append((stream.name, series)) }
            } else if known == .route {
                parts.route = try route(&cursor, path + ".route", into: &parts.problem)
            } else {
                let range = try cursor.value(depth: 3, into: &tape)
                read(known, path, into: &parts)
                parts.kept.append(key.start..<range.upperBound)
            }
        }
        let whole = start..<cursor.offset
        if let problem = parts.problem { return quarantine(problem, whole) }
        do throws(StrideePayloadError) {
            let made = try workout(from: parts, path)
            cover(made.start, made.end)
            workouts.append(made)
        } catch {
            quarantine(error, whole)
        }
    }

    /// A header member (on `tape`): what the workout needs of it noted, any member checked to
    /// cast to jsonb (it is kept under `hae`).
    mutating func read(_ key: WorkoutKey?, _ path: String, into parts: inout WorkoutParts) {
        guard parts.problem == nil else { return }
        do throws(StrideePayloadError) {
            let node = tape[0]
            let name = "\(path).\(key.map { "\($0)" } ?? "…")"
            try reader.checkJSONB(tape, 0..<tape.count, name)
            switch key {
            case .distance?: parts.distance = try quantity(node, name, to: "m")
            case .activeEnergyBurned?: parts.energy = try quantity(node, name, to: "kcal")
            // Version 1's total; version 2's `activeEnergy` is a series, kept as it is.
            case .activeEnergy? where node.kind == .object:
                if parts.energy == nil { parts.energy = try quantity(node, name, to: "kcal") }
            case .start?, .end?:
                let (_, text) = try instant(node, name)
                parts.written[key!] = text
                parts.header[key!] = node
            case let key?: parts.header[key] = node
            case nil: break
            }
        } catch {
            parts.problem = error
        }
    }

    /// `{qty, units}` in the catalog's unit; nil for `null`.
    func quantity(_ node: JSONNode, _ path: String, to unit: String) throws(StrideePayloadError) -> Double? {
        if node.kind == .null { return nil }
        guard node.kind == .object else { throw StrideePayloadError(path: path, "not an object {qty, units}") }
        var qty: JSONNode?, units: String?
        var k = 1
        while k < node.after {
            if reader.stringEquals(tape[k], Array("qty".utf8)) { qty = tape[k + 1] }
            if reader.stringEquals(tape[k], Array("units".utf8)) { units = try reader.optionalString(tape[k + 1], path + ".units") }
            k = tape[k + 1].after
        }
        guard let qty, qty.kind != .null else { return nil }
        let value = try reader.double(qty, path + ".qty")
        guard let conversion = CatalogUnits.conversion(from: units, to: unit) else {
            throw StrideePayloadError(path: path + ".units", "\"\(PayloadDecoder.snippet(units ?? ""))\" cannot be converted to \(unit)")
        }
        let converted = conversion.apply(value)
        if let reason = Plausibility.valueReason("", converted, Plausibility.workoutTotals) {
            throw StrideePayloadError(path: path, String(reason.dropFirst()))
        }
        return converted
    }

    /// The workout's sample and the rest, from what its members said.
    func workout(from parts: WorkoutParts, _ path: String) throws(StrideePayloadError) -> HAEWorkout {
        guard let startNode = parts.header[.start] else { throw StrideePayloadError(path: path + ".start", "missing") }
        guard let endNode = parts.header[.end] else { throw StrideePayloadError(path: path + ".end", "missing") }
        let (start, _) = try instant(startNode, path + ".start")
        let (end, _) = try instant(endNode, path + ".end")
        guard end.microsecondsSinceEpoch >= start.microsecondsSinceEpoch else { throw StrideePayloadError(path: path + ".end", "is before start") }
        guard let nameNode = parts.header[.name] else { throw StrideePayloadError(path: path + ".name", "missing") }
        let name = try reader.string(nameNode, path + ".name")
        let uuid = try workoutUUID(parts, name, path)
        let source = try parts.header[.source].flatMap { (n) throws(StrideePayloadError) in try reader.optionalString(n, path + ".source") }
            ?? HAEBody.defaultSource
        var duration = Double(end.microsecondsSinceEpoch - start.microsecondsSinceEpoch) / 1e6
        if let node = parts.header[.duration], node.kind != .null { duration = try reader.double(node, path + ".duration") }
        if let reason = Plausibility.valueReason("", duration, Plausibility.workoutTotals) {
            throw StrideePayloadError(path: path + ".duration", String(reason.dropFirst()))
        }
        let json = workoutSample(parts, uuid: uuid, name: name, source: source, start: start, end: end, duration: duration)
        return HAEWorkout(uuid: uuid, sampleJSON: json, start: start, end: end, streams: parts.streams, route: parts.route)
    }

    /// `id` upper-cased; a workout without one (version 1) gets a name-based uuid of its name,
    /// start and end as written.
    func workoutUUID(_ parts: WorkoutParts, _ name: String, _ path: String) throws(StrideePayloadError) -> String {
        if let node = parts.header[.id], node.kind != .null {
            let text = try reader.string(node, path + ".id")
            guard UUIDText.isValid(text) else { throw StrideePayloadError(path: path + ".id", "\(reader.literal(node)) is not a UUID") }
            return text.uppercased()
        }
        var identity = Array(name.utf8)
        for key in [WorkoutKey.start, .end] {
            identity.append(0x1F)
            identity += parts.written[key] ?? []
        }
        var out: [UInt8] = []
        UUIDv5.appendText(identity.withUnsafeBytes { UUIDv5.value(namespace: HAEBody.namespace, name: $0) }, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The workout as a healthd sample object: `activityName` its name as sent, `activityType`
    /// Apple's raw value of that name (3000, other, when unknown), the members kept under `hae`.
    func workoutSample(_ parts: WorkoutParts, uuid: String, name: String, source: String, start: Timestamp, end: Timestamp,
                       duration: Double) -> [UInt8] {
        let activity = Self.activityType(name)
        var fingerprint = Array("\(HAEMetric.workoutType)|\(start.millisecondsSinceEpoch)|\(end.millisecondsSinceEpoch)|\(activity)|".utf8)
        HAENumber.append(duration, to: &fingerprint)
        var w = JSONWriter(capacity: 512 + parts.kept.reduce(0) { $0 + $1.count })
        w.beginObject()
        w.field("uuid", uuid)
        w.field("id", sha256Of: fingerprint)
        w.field("type", HAEMetric.workoutType)
        w.field("group", "workouts")
        w.field("source", source)
        w.field("start", stamp: start)
        w.field("end", stamp: end)
        w.field("kind", "workout")
        w.key("activityType")
        w.integer(activity)
        w.field("activityName", name)
        for (key, number) in [("durationSeconds", duration), ("distanceMeters", parts.distance), ("activeEnergyKilocalories", parts.energy)]
            as [(StaticString, Double?)] {
            guard let number else { continue }
            w.key(key)
            w.value { HAENumber.append(number, to: &$0) }
        }
        w.key("hae")
        w.beginObject()
        for member in parts.kept { w.value { $0.append(contentsOf: UnsafeBufferPointer(rebasing: b[member])) } }
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// Apple's `HKWorkoutActivityType` raw value of a workout name as the app writes it
    /// (`Running`, `Outdoor Run`, `Traditional Strength Training`, `HIIT`); 3000 (other) when unknown.
    static func activityType(_ name: String) -> Int {
        var words = name.split(separator: " ").map(String.init)
        if words.count > 1, ["Outdoor", "Indoor", "Pool", "Open"].contains(words[0]) {
            words.removeFirst(words[0] == "Open" && words.count > 2 && words[1] == "Water" ? 2 : 1)
        }
        let joined = words.joined()
        let synonyms = ["Run": "Running", "Walk": "Walking", "Cycle": "Cycling", "Bike": "Cycling", "Swim": "Swimming",
                        "Hike": "Hiking", "HIIT": "HighIntensityIntervalTraining", "StairStepper": "StairClimbing",
                        "Strength": "TraditionalStrengthTraining"]
        return WorkoutActivityTypes.activity(synonyms[joined] ?? joined).type
    }
}
