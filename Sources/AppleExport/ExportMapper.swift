import Hashing
import HealthPayload

/// An export element made into a healthd-shaped sample object (reference "The sample object"),
/// ready for `store_batch`.
struct MappedSample: Sendable {
    /// The sample object's JSON text.
    var json: [UInt8]
    /// Its name-based uuid.
    var uuid: String
    var start: ExportTimestamp
    var end: ExportTimestamp
}

/// Why an element could not become a sample or summary. The element was read (what cannot be
/// read at all never reaches the mapping), so it is quarantined, as a healthd sample refused for
/// the same reason would be.
struct MappingFailure: Error {
    var reason: String
    /// The element breaks a bound every way in applies (a text over `TextLimit`, a value or
    /// instant outside `Plausibility`, a number the rollups cannot sum), so no sample held from
    /// another way in can be its twin; false when what it holds could not be read (an attribute
    /// missing, a date or number that is not one, a unit with no conversion).
    var isBound = false

    init(_ reason: String) { self.reason = reason }

    /// A failure of a bound (`isBound`).
    static func bound(_ reason: String) -> MappingFailure {
        var failure = MappingFailure(reason)
        failure.isBound = true
        return failure
    }
}

/// The mapping of the Health app's export (docs/apple-export.md): records and workouts to samples
/// in healthd's shape (values of catalog types in the catalog's units, sleep stages by name,
/// everything else of the element kept under the payload's `healthExport` key), activity
/// summaries to their row.
///
/// Every object built is valid for PostgreSQL by construction, as `PayloadDecoder` guarantees
/// for what it passes: a UUID, timestamps in the reference's shape with their ranges checked
/// (`Timestamp`), finite numbers within the validator's bounds, strings from libxml2 (valid
/// UTF-8, no NUL) escaped by `JSONString`.
///
/// What healthd's validator quarantines fails here, and the element is quarantined: as a bound
/// (`MappingFailure.isBound`) a `type`, `sourceName`, `unit` or workout activity over
/// `TextLimit.maxBytes` (checked before anything reads the text), a value outside its type's
/// `Plausibility` range, an instant before 1970 or after the day after tomorrow; plainly what the
/// element holds but the warehouse cannot read (no type, a key a healthd sample of its kind
/// always carries missing — `SampleRequirement` —, a date or number that is not one, a unit with
/// no conversion).
struct ExportMapper: Sendable {
    let catalog: ExportCatalog
    /// The first implausible instant, milliseconds since the epoch (`Plausibility`).
    var latest = Plausibility.latestMilliseconds(now: Plausibility.nowMilliseconds())

    /// The namespace of the name-based uuids of export elements (a constant: never change it,
    /// or a second import of the same export would store everything again).
    static let namespace = UUIDv5.bytes("5B1F7A0C-3D2E-4F6A-9C8B-7E4D2A1B0C9F")!

    /// Attributes of a workout that become the sample's own keys rather than `healthExport` members.
    private static let workoutKeys: Set<String> = ["sourceName", "startDate", "endDate"]

    // MARK: Records

    func record(_ r: ExportRecord) -> Result<MappedSample, MappingFailure> {
        let a = r.attributes
        guard let type = a["type"], !type.isEmpty else { return .failure(MappingFailure("it has no type")) }
        if let excess = TextLimit.excess(type) { return .failure(.bound("type is \(excess)")) }
        let source: String, start: ExportTimestamp, end: ExportTimestamp
        switch sourceAndSpan(a) {
        case .success(let found): (source, start, end) = found
        case .failure(let failure): return .failure(failure)
        }
        let entry = catalog[type]
        let written = Self.writtenValue(a, rule: entry?.rule), unit = a["unit"]
        let uuid = Self.uuid([type, source, a["startDate"]!, a["endDate"]!, written ?? "", unit ?? ""])

        let typed: TypedValue
        switch Self.typedValue(type, entry, written: written, unit: unit) {
        case .success(let value): typed = value
        case .failure(let failure): return .failure(failure)
        }
        let (kind, value, textValue, name) = (typed.kind, typed.value, typed.text, typed.name)

        var w = JSONWriter(capacity: 640)
        w.beginObject()
        w.field("uuid", uuid)
        w.field("id", Self.fingerprint(type, start, end, value.map { $0.description } ?? textValue ?? "", name ?? ""))
        w.field("type", type)
        w.field("group", entry?.group ?? "other")
        w.field("source", source)
        w.field("start", start.text)
        w.field("end", end.text)
        w.field("kind", kind)
        if let value {
            w.key("value")
            if typed.integral { w.integer(Int(value)) } else { w.storedNumber(value) }
        } else if let textValue {
            w.field("value", textValue)
        }
        if let unit = typed.unit { w.field("unit", unit) }
        if let name { w.field("name", name) }
        let created = Self.createdSeconds(a["creationDate"], end: end)
        let sharedMetadata = Self.isShared(r.metadata)
        Self.writeShared(a.pairs.filter { Self.sharedKeys.contains($0.name) }, metadata: sharedMetadata ? r.metadata : [],
                         created: created, to: &w)
        w.key("healthExport")
        w.beginObject()
        let sourceIsOwn = a["sourceName"] == nil
        for (key, text) in a.pairs {
            if key == "type" || key == "sourceName" || key == "startDate" || key == "endDate" || (sourceIsOwn && key == "source") { continue }
            if Self.sharedKeys.contains(key) || (key == "creationDate" && created != nil) { continue }
            w.member(key, text)
        }
        if !sharedMetadata { Self.writeMetadata(r.metadata, to: &w) }
        if !r.beats.isEmpty {
            w.key("beats")
            w.beginArray()
            for beat in r.beats {
                w.beginObject()
                if let bpm = ExportNumber.parse(beat.bpm), Self.rangeReason(bpm) == nil { w.field("bpm", bpm) } else { w.field("bpm", beat.bpm) }
                w.field("time", beat.time)
                if let seconds = ExportNumber.secondsOfDay(beat.time) { w.field("secondsOfDay", seconds) }
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        w.endObject()
        return .success(MappedSample(json: w.bytes, uuid: uuid, start: start, end: end))
    }

    /// A record's value as written: its `value`, else — exports before iOS 9 wrote a reading as
    /// `min`, `max` and `average` over `recordCount` readings, no `value` — the `average` of a
    /// type that is not summed (a heart rate: the rule reading takes it as the record's reading;
    /// all three stay in `healthExport`).
    static func writtenValue(_ a: ElementAttributes, rule: String?) -> String? {
        if let value = a["value"] { return value }
        guard rule != "total", a["recordCount"] != nil else { return nil }
        return a["average"]
    }

    /// The members of a record's `healthExport` block that many records share: its source's device
    /// description, the source's version and the unit written.
    static let sharedKeys: Set<String> = ["device", "sourceVersion", "unit"]

    /// Metadata keys whose values are one of a few (a motion context, whether entered by hand, a
    /// time zone, a meal time): a record's metadata made of these alone is shared with many
    /// records too (the heart rate's motion context: 197,000 of a year's records) and held with
    /// the other shared members. Metadata with any other key (an identifier, a date, a reading)
    /// stays in the record's block.
    static let sharedMetadataKeys: Set<String> = [
        "HKMetadataKeyHeartRateMotionContext", "HKWasUserEntered", "HKTimeZone", "HKIndoorWorkout",
        "HKBloodGlucoseMealTime", "HKMetadataKeyDevicePlacementSide", "HKMetadataKeyAppleDeviceCalibrated",
        "HKVO2MaxTestType", "HKSleepingWristTemperatureSourceType", "HKMetadataKeyUserMotionContext",
        "HKSwimmingLocationType", "HKWeatherCondition",
    ]

    /// Whether a record's metadata is held with its shared members (`sharedMetadataKeys`).
    static func isShared(_ metadata: [(key: String, value: String)]) -> Bool {
        !metadata.isEmpty && metadata.allSatisfy { sharedMetadataKeys.contains($0.key) }
    }

    /// What the write path stores apart from a record's payload (docs/apple-export.md, "Storage"):
    /// its shared members (`exportShared`, with `metadata` when `isShared`; held once per person
    /// in `health_store.export_contexts` under `exportContext`, `contextNumber`) and its creation
    /// date as seconds after its end (`exportCreated`, `createdSeconds`). `health_store.samples`
    /// puts both back into the `healthExport` block.
    /// `shared`: the record's members of `sharedKeys`, in the order written.
    static func writeShared(_ shared: [(name: String, value: String)], metadata: [(key: String, value: String)], created: Int?,
                            to w: inout JSONWriter) {
        if !shared.isEmpty || !metadata.isEmpty {
            var members = JSONWriter(capacity: 256)
            members.beginObject()
            for (key, text) in shared { members.member(key, text) }
            writeMetadata(metadata, to: &members)
            members.endObject()
            w.key("exportContext")
            w.integer(contextNumber(members.bytes))
            w.key("exportShared")
            members.bytes.withUnsafeBufferPointer { w.raw($0) }
        }
        if let created {
            w.key("exportCreated")
            w.integer(created)
        }
    }

    /// The number an export context is held under (`health_store.export_contexts.context`): the
    /// first eight bytes of the SHA-256 of its members as written, so that the write path stores
    /// a record's without looking it up.
    static func contextNumber(_ members: [UInt8]) -> Int {
        SHA256.hash(members).prefix(8).reduce(0) { $0 << 8 | Int($1) }
    }

    /// A record's creation date as whole seconds after its end, when the export's text of the end
    /// moved by them, in the end's offset, is the text written (what `health_store.export_stamp_text`
    /// gives back); nil otherwise, and the payload keeps the text.
    static func createdSeconds(_ written: String?, end: ExportTimestamp) -> Int? {
        guard let written, let created = ExportTimestamp(written) else { return nil }
        let delta = created.milliseconds - end.milliseconds
        guard delta % 1000 == 0, abs(delta) <= 20_000 * 86_400_000 else { return nil }
        guard Array(written.utf8) == ExportTimestamp.exportText(milliseconds: created.milliseconds, offsetMinutes: end.offsetMinutes)
        else { return nil }
        return Int(delta / 1000)
    }

    /// A record's typed part: what healthd would send as `kind`, `value`, `unit` and `name`.
    struct TypedValue {
        var kind: String
        var value: Double?
        /// A value outside the catalog that is not a number, kept as text.
        var text: String?
        var unit: String?
        var name: String?
        /// The value is written as an integer (a sleep stage).
        var integral = false
    }

    /// The typed part by the type's kind: a catalog quantity converted to the catalog's unit, a
    /// sleep stage by name, a type outside the catalog kept as written; a unit within
    /// `TextLimit`, the keys its kind always carries present (a quantity's value and unit, a
    /// category's value), the value within the validator's number bounds and its type's
    /// plausible range.
    static func typedValue(_ type: String, _ entry: ExportCatalog.Entry?, written: String?,
                           unit: String?) -> Result<TypedValue, MappingFailure> {
        // A text that reaches an index (contract §1): bounded before anything reads it, a
        // conversion too, whatever the type.
        if let unit, let excess = TextLimit.excess(unit) { return .failure(.bound("unit is \(excess)")) }
        var typed: TypedValue
        if let entry, entry.kind == "quantity", let catalogUnit = entry.unit {
            typed = TypedValue(kind: "quantity", unit: catalogUnit)
            if let written {
                guard let number = ExportNumber.parse(written) else {
                    return .failure(MappingFailure("value \"\(snippet(written))\" is not a number"))
                }
                guard let conversion = CatalogUnits.conversion(from: unit, to: catalogUnit) else {
                    return .failure(MappingFailure("unit \"\(snippet(unit ?? ""))\" of \(type) cannot be converted to \(catalogUnit)"))
                }
                typed.value = conversion.apply(number)
            }
        } else if let entry, entry.kind == "category", entry.rule == "sleep" {
            typed = TypedValue(kind: "category", integral: true)
            if let written {
                guard let stage = sleepStage(written) else {
                    return .failure(MappingFailure("value \"\(snippet(written))\" is not a sleep stage"))
                }
                typed.value = stage.value.map(Double.init)
                typed.name = stage.name
            }
        } else if let entry, entry.kind == "workout" {
            return .failure(MappingFailure("a Record of the workout type \(type)"))
        } else {
            // Outside the catalog: kept as written, like healthd's types this version does not know.
            typed = TypedValue(kind: type.hasPrefix("HKCategoryTypeIdentifier") ? "category" : "quantity")
            if let written {
                if let number = ExportNumber.parse(written) { typed.value = number } else { typed.text = written }
            }
            if let unit, !unit.isEmpty { typed.unit = unit }
        }
        // What a healthd sample of its kind always carries (a quantity its value and unit, a
        // category its value), by the healthd decoder's own rule: the value as written (a sleep
        // stage this version has no name for is one), the unit as the sample holds it. But a
        // category outside the catalog may have none: the Health app writes no value where none
        // applies (a mindful session, a heart-rate notification), and such a record is kept.
        let valueless = entry == nil && typed.kind == "category"
        let missing = SampleRequirement.missingReason(kind: typed.kind) { key in
            key == "value" ? written != nil || valueless : key == "unit" ? typed.unit != nil : true
        }
        if let missing { return .failure(MappingFailure(missing)) }
        if let value = typed.value, let reason = rangeReason(value) { return .failure(.bound("value \(reason)")) }
        if let value = typed.value, typed.kind == "quantity", let range = Plausibility.range(of: type),
           let reason = Plausibility.valueReason("value", value, range, of: type) {
            return .failure(.bound(reason))
        }
        return .success(typed)
    }

    /// Sleep stages by name (the iOS 16 names and the older `…Asleep`) or by their raw value
    /// (iOS 8 wrote the number), with healthd's names. A number with no name is kept without
    /// one (healthd sends such a stage unnamed); a name this version does not know keeps
    /// neither value nor name (it is in the payload as written, and counts in no stage but
    /// `daily_sleep.unknown_min`).
    static func sleepStage(_ written: String) -> (value: Int?, name: String?)? {
        let names = ["inBed", "asleepUnspecified", "awake", "asleepCore", "asleepDeep", "asleepREM"]
        if let raw = Int32(written) { return (Int(raw), raw >= 0 && raw < names.count ? names[Int(raw)] : nil) }
        let prefix = "HKCategoryValueSleepAnalysis"
        guard written.hasPrefix(prefix) else { return nil }
        switch written.dropFirst(prefix.count) {
        case "InBed": return (0, names[0])
        case "AsleepUnspecified", "Asleep": return (1, names[1])
        case "Awake": return (2, names[2])
        case "AsleepCore": return (3, names[3])
        case "AsleepDeep": return (4, names[4])
        case "AsleepREM": return (5, names[5])
        default: return (nil, nil)
        }
    }

    // MARK: Workouts

    func workout(_ x: ExportWorkout) -> Result<MappedSample, MappingFailure> {
        let a = x.attributes
        guard let activityText = a["workoutActivityType"] else { return .failure(MappingFailure("it has no workoutActivityType")) }
        if let excess = TextLimit.excess(activityText) { return .failure(.bound("workoutActivityType is \(excess)")) }
        let source: String, start: ExportTimestamp, end: ExportTimestamp
        switch sourceAndSpan(a) {
        case .success(let found): (source, start, end) = found
        case .failure(let failure): return .failure(failure)
        }
        let type = "HKWorkoutTypeIdentifier"
        let activity = WorkoutActivityTypes.activity(activityText)
        let uuid = Self.uuid([type + "/" + activityText, source, a["startDate"]!, a["endDate"]!, a["duration"] ?? "", a["durationUnit"] ?? ""])

        let duration: Double
        switch Self.duration(a, default: Double(end.milliseconds - start.milliseconds) / 1000) {
        case .success(let seconds): duration = seconds
        case .failure(let f): return .failure(f)
        }
        let distance: Double?, energy: Double?
        switch Self.total(a["totalDistance"], a["totalDistanceUnit"], statistic: x.statistics.first {
            $0["type"]?.hasPrefix("HKQuantityTypeIdentifierDistance") == true && $0["sum"] != nil
        }, to: "m", what: "totalDistance") {
        case .success(let v): distance = v
        case .failure(let f): return .failure(f)
        }
        switch Self.total(a["totalEnergyBurned"], a["totalEnergyBurnedUnit"], statistic: x.statistics.first {
            $0["type"] == "HKQuantityTypeIdentifierActiveEnergyBurned" && $0["sum"] != nil
        }, to: "kcal", what: "totalEnergyBurned") {
        case .success(let v): energy = v
        case .failure(let f): return .failure(f)
        }
        for (what, v) in [("duration", Optional(duration)), ("distance", distance), ("energy", energy)] {
            if let v, let reason = Self.rangeReason(v) { return .failure(.bound("\(what) \(reason)")) }
            if let v, let reason = Plausibility.valueReason(what, v, Plausibility.workoutTotals) { return .failure(.bound(reason)) }
        }

        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.field("uuid", uuid)
        w.field("id", Self.fingerprint(type, start, end, String(activity.type), duration.description))
        w.field("type", type)
        w.field("group", catalog[type]?.group ?? "workouts")
        w.field("source", source)
        w.field("start", start.text)
        w.field("end", end.text)
        w.field("kind", "workout")
        w.key("activityType")
        w.integer(activity.type)
        if let name = activity.name { w.field("activityName", name) }
        w.field("durationSeconds", duration)
        if let distance { w.field("distanceMeters", distance) }
        if let energy { w.field("activeEnergyKilocalories", energy) }
        w.key("healthExport")
        w.beginObject()
        for (key, text) in a.pairs where !Self.workoutKeys.contains(key) { w.member(key, text) }
        Self.writeMetadata(x.metadata, to: &w)
        for (key, list) in [("events", x.events), ("statistics", x.statistics), ("activities", x.activities), ("routes", x.routes)] where !list.isEmpty {
            w.key(key)
            w.beginArray()
            for element in list {
                w.beginObject()
                for (name, text) in element.pairs { w.member(name, text) }
                w.endObject()
            }
            w.endArray()
        }
        if !x.routeFiles.isEmpty {
            w.key("routeFiles")
            w.beginArray()
            for file in x.routeFiles { w.string(file) }
            w.endArray()
        }
        w.endObject()
        w.endObject()
        return .success(MappedSample(json: w.bytes, uuid: uuid, start: start, end: end))
    }

    /// A workout's `duration` in seconds (`durationUnit`, minutes when absent), else `fallback`.
    private static func duration(_ a: ElementAttributes, default fallback: Double) -> Result<Double, MappingFailure> {
        guard let text = a["duration"] else { return .success(fallback) }
        guard let d = ExportNumber.parse(text) else { return .failure(MappingFailure("duration \"\(snippet(text))\" is not a number")) }
        let seconds: [String: Double] = ["s": 1, "min": 60, "hr": 3600, "h": 3600, "ms": 0.001]
        guard let factor = seconds[a["durationUnit"] ?? "min"] else {
            return .failure(MappingFailure("durationUnit \"\(snippet(a["durationUnit"] ?? ""))\" is not a unit of time"))
        }
        return .success(d * factor)
    }

    /// A workout total from its attribute (with unit), else from its `WorkoutStatistics` sum
    /// (iOS 16 writes totals only there); zero is no total, as healthd sends none then.
    private static func total(_ written: String?, _ unit: String?, statistic: ElementAttributes?, to catalogUnit: String,
                              what: String) -> Result<Double?, MappingFailure> {
        let (text, textUnit, name) = written.map { ($0, unit, what) } ?? (statistic?["sum"], statistic?["unit"], "WorkoutStatistics sum")
        guard let text else { return .success(nil) }
        guard let number = ExportNumber.parse(text) else { return .failure(MappingFailure("\(name) \"\(snippet(text))\" is not a number")) }
        guard let conversion = CatalogUnits.conversion(from: textUnit, to: catalogUnit) else {
            return .failure(MappingFailure("\(name) unit \"\(snippet(textUnit ?? ""))\" cannot be converted to \(catalogUnit)"))
        }
        let value = conversion.apply(number)
        return .success(value == 0 ? nil : value)
    }

    // MARK: Activity summaries

    /// `{"day": …, "active_energy_kcal": …, …, "summary": {attributes}}` for
    /// `health_store.store_activity_summaries`.
    func activitySummary(_ s: ExportActivitySummary) -> Result<[UInt8], MappingFailure> {
        let a = s.attributes
        guard let day = a["dateComponents"], day.utf8.count == 10,
              let midnight = ExportTimestamp(day + " 00:00:00 +0000") else {
            return .failure(MappingFailure("dateComponents \"\(Self.snippet(a["dateComponents"] ?? ""))\" is not a date"))
        }
        if let reason = Plausibility.instantReason(milliseconds: midnight.milliseconds, latest: latest) {
            return .failure(.bound("dateComponents \"\(day)\" \(reason)"))
        }
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.field("day", day)
        let energyUnit = a["activeEnergyBurnedUnit"]
        for (key, attribute, unit, catalogUnit) in [
            ("active_energy_kcal", "activeEnergyBurned", energyUnit, "kcal"), ("active_energy_goal_kcal", "activeEnergyBurnedGoal", energyUnit, "kcal"),
            ("exercise_min", "appleExerciseTime", nil, "min"), ("exercise_goal_min", "appleExerciseTimeGoal", nil, "min"),
            ("stand_hours", "appleStandHours", nil, "count"), ("stand_goal_hours", "appleStandHoursGoal", nil, "count"),
        ] {
            guard let text = a[attribute] else { continue }
            guard let number = ExportNumber.parse(text), let conversion = CatalogUnits.conversion(from: unit, to: catalogUnit) else {
                return .failure(MappingFailure("\(attribute) \"\(Self.snippet(text))\" \(unit.map { "(\($0)) " } ?? "")is not a number the warehouse reads"))
            }
            let value = conversion.apply(number)
            if let reason = Self.rangeReason(value) { return .failure(.bound("\(attribute) \(reason)")) }
            w.key(key)
            w.number(value)
        }
        w.key("summary")
        w.beginObject()
        for (key, text) in a.pairs { w.member(key, text) }
        w.endObject()
        w.endObject()
        return .success(w.bytes)
    }

    // MARK: Shared

    /// `sourceName` (or iOS 8's `source`) within `TextLimit`, and `startDate` and `endDate`
    /// read, each a plausible instant.
    private func sourceAndSpan(_ a: ElementAttributes) -> Result<(String, ExportTimestamp, ExportTimestamp), MappingFailure> {
        let name = a["sourceName"] != nil ? "sourceName" : "source"
        guard let source = a[name] else { return .failure(MappingFailure("it has no sourceName")) }
        if let excess = TextLimit.excess(source) { return .failure(.bound("\(name) is \(excess)")) }
        var stamps: [ExportTimestamp] = []
        for name in ["startDate", "endDate"] {
            guard let text = a[name] else { return .failure(MappingFailure("it has no \(name)")) }
            guard let stamp = ExportTimestamp(text) else {
                return .failure(MappingFailure("\(name) \"\(Self.snippet(text))\" is not a date like 2019-06-11 15:00:00 +0100"))
            }
            if let reason = Plausibility.instantReason(milliseconds: stamp.milliseconds, latest: latest) {
                return .failure(.bound("\(name) \"\(Self.snippet(text))\" \(reason)"))
            }
            stamps.append(stamp)
        }
        if let reason = Plausibility.spanReason(start: stamps[0].milliseconds, end: stamps[1].milliseconds, ("startDate", "endDate")) {
            return .failure(.bound(reason))
        }
        return .success((source, stamps[0], stamps[1]))
    }

    /// The validator's bounds for a number the rollups sum (`SampleValidator.doubleReason`).
    static func rangeReason(_ v: Double) -> String? {
        if !v.isFinite { return "is not finite" }
        if abs(v) > 1e15 { return "\(v) is beyond ±1e15 in magnitude, more than the daily rollups sum" }
        if v != 0 && abs(v) < 1e-300 { return "\(v) is below 1e-300 in magnitude, which PostgreSQL double precision rejects" }
        return nil
    }

    private static func writeMetadata(_ metadata: [(key: String, value: String)], to w: inout JSONWriter) {
        guard !metadata.isEmpty else { return }
        w.key("metadata")
        w.beginObject()
        for (key, value) in metadata { w.member(key, value) }
        w.endObject()
    }

    /// The name-based uuid of an element: its parts as written, joined by the unit separator.
    static func uuid(_ parts: [String]) -> String {
        var name: [UInt8] = []
        for (i, part) in parts.enumerated() {
            if i > 0 { name.append(0x1F) }
            name.append(contentsOf: part.utf8)
        }
        return UUIDv5.make(namespace: namespace, name: name)
    }

    /// healthd's `id`: a SHA-256 fingerprint of the content (type, start, end, value), 64 hex.
    private static func fingerprint(_ type: String, _ start: ExportTimestamp, _ end: ExportTimestamp, _ value: String, _ name: String) -> String {
        SHA256.hex(Array("\(type)|\(start.milliseconds)|\(end.milliseconds)|\(value)|\(name)".utf8))
    }

    /// At most 40 characters of `text`, for a reason.
    static func snippet(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}
