import Civil
/// Decodes one `healthkit.wellness.v1` body, a batch of daily summaries (docs/stridee.md): every
/// item checked, one bad item refuses the body.
///
/// Items are parsed one at a time on a reused tape; each keeps its exact bytes as `json`. Where
/// a top-level key repeats, the last occurrence counts (each is still checked).
struct StrideeWellnessDecoder {
    /// The body's keys.
    private enum BodyKey: Int, CaseIterable {
        case format, items
        static let table = KeyTable(allCases.map { "\($0)" })
    }

    /// Every item key this version checks: the common ones, then each kind's own.
    private enum Field: Int, CaseIterable {
        case kind, calendarDate, startTime, endTime, tzOffsetSeconds, `final`, id
        case steps, distanceMeters, activeKilocalories, basalKilocalories, flightsClimbed, exerciseMinutes
        case restingHeartRate, avgHeartRate, minHeartRate, maxHeartRate
        case stages, samples, vo2Max, weightKg, bodyFatPercent, bodyMassIndex, systolic, diastolic, celsius

        static let table = KeyTable(allCases.map { "\($0)" })
    }

    /// What a kind's own field must hold.
    private enum Rule {
        case number, nonNegative, percent, samples, percentSamples, stages
        /// A number within a plausible range (`Plausibility`).
        case plausible(PlausibleRange)
    }

    /// The seed's fields of each kind ("And then the kind's own fields").
    private static func fields(of kind: WellnessKind) -> [(Field, Rule)] {
        switch kind {
        case .daily:
            [(.steps, .nonNegative), (.distanceMeters, .nonNegative), (.activeKilocalories, .nonNegative),
             (.basalKilocalories, .nonNegative), (.flightsClimbed, .nonNegative), (.exerciseMinutes, .nonNegative),
             (.restingHeartRate, .plausible(.heartRate)), (.avgHeartRate, .plausible(.heartRate)),
             (.minHeartRate, .plausible(.heartRate)), (.maxHeartRate, .plausible(.heartRate))]
        case .sleep: [(.stages, .stages)]
        case .hrv, .respiration: [(.samples, .samples)]
        case .pulseOx: [(.samples, .percentSamples)]
        case .fitness: [(.vo2Max, .plausible(.positive))]
        case .bodyComposition: [(.weightKg, .plausible(.positive)), (.bodyFatPercent, .percent), (.bodyMassIndex, .plausible(.positive))]
        case .bloodPressure: [(.systolic, .plausible(.positive)), (.diastolic, .plausible(.positive))]
        case .skinTemperature: [(.celsius, .number)]
        }
    }

    /// Sleep stage names (seed: `stage` one of these).
    private static let stageNames = ["core", "deep", "rem", "awake", "inBed", "asleepUnspecified"]
    private static let stageTable = KeyTable(stageNames)
    private static let sampleTable = KeyTable(["t", "v"])
    private static let stageKeyTable = KeyTable(["stage", "start", "end"])
    /// The largest `tzOffsetSeconds`: 18 hours either way.
    private static let maxOffsetSeconds: Int32 = 18 * 3600

    private let b: UnsafeBufferPointer<UInt8>
    private let reader: StrideeFieldReader
    private var tape: [JSONNode] = []
    /// The items the body held, before those of one identity became one (set by `decode`).
    private(set) var sent = 0
    private var slots = [Int](repeating: -1, count: Field.allCases.count)
    private var entrySlots = [Int](repeating: -1, count: 3)

    /// A decoder over one body's bytes; instants from `latest` on are implausible.
    init(_ bytes: UnsafeBufferPointer<UInt8>, latest: Int64) {
        b = bytes
        reader = StrideeFieldReader(b: bytes, latest: latest)
        tape.reserveCapacity(256)
    }

    /// The items in body order, or the first problem met (`.tooManyItems` before any other).
    mutating func decode() throws(StrideePayloadError) -> [WellnessItem] {
        var cursor = try StrideeDecoder.enterRootObject(b)
        var items: [WellnessItem]?
        var isFirst = true
        while let keyNode = try cursor.nextKey(&isFirst, depth: 1, tape: &tape) {
            switch reader.index(of: keyNode, in: BodyKey.table).flatMap(BodyKey.init(rawValue:)) {
            case .items:
                items = try decodeItems(&cursor)
            case .format:
                try cursor.value(depth: 1, into: &tape)
                try StrideeDecoder.checkFormat(reader, tape[0], "healthkit.wellness.v1")
            case nil:
                // Not kept anywhere: only its syntax matters.
                try cursor.value(depth: 1, into: &tape)
            }
        }
        try cursor.finish()
        guard let items else { throw StrideePayloadError(path: "items", "missing") }
        sent = items.count
        return Self.onePerIdentity(items)
    }

    /// The items with one per identity (`kind`, `startTime` as an instant), as they are stored:
    /// a later item of an identity takes the place of the earlier one.
    static func onePerIdentity(_ items: [WellnessItem]) -> [WellnessItem] {
        struct Identity: Hashable {
            var kind: WellnessKind
            var start: Int64
        }
        var position: [Identity: Int] = [:]
        var kept: [WellnessItem] = []
        kept.reserveCapacity(items.count)
        for item in items {
            let identity = Identity(kind: item.kind, start: item.start.microsecondsSinceEpoch)
            if let earlier = position[identity] {
                kept[earlier] = item
            } else {
                position[identity] = kept.count
                kept.append(item)
            }
        }
        return kept
    }

    /// The `items` array; more than `maxWellnessItems` is `.tooManyItems`, whatever else is wrong.
    private mutating func decodeItems(_ cursor: inout JSONCursor) throws(StrideePayloadError) -> [WellnessItem] {
        guard cursor.enter(UInt8(ascii: "[")) else {
            try cursor.value(depth: 1, into: &tape)
            throw StrideePayloadError(path: "items", "not an array")
        }
        var items: [WellnessItem] = []
        var isFirst = true
        while try cursor.nextElement(&isFirst) {
            if items.count == StrideeDecoder.maxWellnessItems { throw Self.tooMany }
            let range = try cursor.value(depth: 2, into: &tape)
            do {
                items.append(try decodeItem(index: items.count, range))
            } catch {
                // The limit decides the answer (413, the SDK pages) even when an item is bad too.
                var count = items.count + 1
                while (try? cursor.nextElement(&isFirst)) == true, (try? cursor.value(depth: 2, into: &tape)) != nil {
                    count += 1
                    if count > StrideeDecoder.maxWellnessItems { throw Self.tooMany }
                }
                throw error
            }
        }
        return items
    }

    private static var tooMany: StrideePayloadError {
        StrideePayloadError(.tooManyItems, path: "items", "more than \(StrideeDecoder.maxWellnessItems) items; send at most \(StrideeDecoder.maxWellnessItems) in one body")
    }

    /// One item, on `tape` (its object is `tape[0]`, its bytes `range`).
    private mutating func decodeItem(index: Int, _ range: Range<Int>) throws(StrideePayloadError) -> WellnessItem {
        guard tape[0].kind == .object else { throw StrideePayloadError(path: "items[\(index)]", "not an object") }
        reader.resolve(tape, object: 0, Field.table, into: &slots)
        func node(_ field: Field) -> JSONNode? {
            let slot = slots[field.rawValue]
            return slot < 0 ? nil : tape[slot]
        }
        func required(_ field: Field) throws(StrideePayloadError) -> JSONNode {
            guard let n = node(field) else { throw StrideePayloadError(path: "items[\(index)].\(field)", "missing") }
            return n
        }

        let kindNode = try required(.kind)
        let kindText = try reader.string(kindNode, "items[\(index)].kind")
        guard let kind = WellnessKind(rawValue: kindText) else {
            throw StrideePayloadError(path: "items[\(index)]", "`\(PayloadDecoder.snippet(kindText))` is not a kind Apple Health sends")
        }
        let calendarDate = try date(try required(.calendarDate), "items[\(index)].calendarDate")
        let start = try reader.timestamp(try required(.startTime), "items[\(index)].startTime")
        let end = try reader.optionalTimestamp(node(.endTime), "items[\(index)].endTime")
        if let end, end.microsecondsSinceEpoch < start.microsecondsSinceEpoch {
            throw StrideePayloadError(path: "items[\(index)].endTime", "\(end) is before startTime \(start)")
        }
        var offset: Int32?
        if let n = node(.tzOffsetSeconds), n.kind != .null {
            let value = try reader.int32(n, "items[\(index)].tzOffsetSeconds")
            guard value.magnitude <= Self.maxOffsetSeconds.magnitude else {
                throw StrideePayloadError(path: "items[\(index)].tzOffsetSeconds", "\(value) is outside [-\(Self.maxOffsetSeconds), \(Self.maxOffsetSeconds)]")
            }
            offset = value
        }
        let isFinal = try reader.bool(node(.final), absent: true, "items[\(index)].final")
        let id = try reader.optionalString(node(.id), "items[\(index)].id")

        for (field, rule) in Self.fields(of: kind) {
            let slot = slots[field.rawValue]
            guard slot >= 0, tape[slot].kind != .null else { continue }
            try check(slot, rule, "items[\(index)].\(field)")
        }
        // The item is stored whole as jsonb, unknown fields and all.
        try reader.checkJSONB(tape, 0..<tape.count, "items[\(index)]")

        return WellnessItem(kind: kind, calendarDate: calendarDate, start: start, end: end, tzOffsetSeconds: offset,
                            isFinal: isFinal, id: id, json: String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self))
    }

    /// Checks a kind's own field at `tape[slot]` against its rule.
    private mutating func check(_ slot: Int, _ rule: Rule, _ path: @autoclosure () -> String) throws(StrideePayloadError) {
        let n = tape[slot]
        switch rule {
        case .number: _ = try reader.double(n, path())
        case .nonNegative: _ = try reader.nonNegative(n, path())
        case .plausible(let range): _ = try reader.double(n, plausible: range, path())
        case .percent: _ = try reader.double(n, in: 0...100, path())
        case .samples, .percentSamples:
            guard n.kind == .array else { throw StrideePayloadError(path: path(), "not an array") }
            var k = slot + 1
            var entry = 0
            while k < n.after {
                let e = tape[k]
                guard e.kind == .object else { throw StrideePayloadError(path: "\(path())[\(entry)]", "not an object") }
                reader.resolve(tape, object: k, Self.sampleTable, into: &entrySlots)
                guard entrySlots[0] >= 0 else { throw StrideePayloadError(path: "\(path())[\(entry)].t", "missing") }
                _ = try reader.timestamp(tape[entrySlots[0]], "\(path())[\(entry)].t")
                guard entrySlots[1] >= 0 else { throw StrideePayloadError(path: "\(path())[\(entry)].v", "missing") }
                if case .percentSamples = rule {
                    _ = try reader.double(tape[entrySlots[1]], in: 0...100, "\(path())[\(entry)].v")
                } else {
                    // HRV (SDNN, ms) and respiration (breaths a minute) are never negative.
                    _ = try reader.nonNegative(tape[entrySlots[1]], "\(path())[\(entry)].v")
                }
                k = e.after
                entry += 1
            }
        case .stages:
            guard n.kind == .array else { throw StrideePayloadError(path: path(), "not an array") }
            var k = slot + 1
            var entry = 0
            while k < n.after {
                let e = tape[k]
                guard e.kind == .object else { throw StrideePayloadError(path: "\(path())[\(entry)]", "not an object") }
                reader.resolve(tape, object: k, Self.stageKeyTable, into: &entrySlots)
                guard entrySlots[0] >= 0 else { throw StrideePayloadError(path: "\(path())[\(entry)].stage", "missing") }
                let stage = tape[entrySlots[0]]
                guard stage.kind == .string else { throw StrideePayloadError(path: "\(path())[\(entry)].stage", "not a string") }
                guard reader.index(of: stage, in: Self.stageTable) != nil else {
                    let text = PayloadDecoder.snippet(JSONParser.decodeString(b, stage))
                    throw StrideePayloadError(path: "\(path())[\(entry)].stage", "`\(text)` is not one of \(Self.stageNames.joined(separator: ", "))")
                }
                guard entrySlots[1] >= 0 else { throw StrideePayloadError(path: "\(path())[\(entry)].start", "missing") }
                let start = try reader.timestamp(tape[entrySlots[1]], "\(path())[\(entry)].start")
                guard entrySlots[2] >= 0 else { throw StrideePayloadError(path: "\(path())[\(entry)].end", "missing") }
                let end = try reader.timestamp(tape[entrySlots[2]], "\(path())[\(entry)].end")
                guard end.microsecondsSinceEpoch >= start.microsecondsSinceEpoch else {
                    throw StrideePayloadError(path: "\(path())[\(entry)].end", "\(end) is before start \(start)")
                }
                k = e.after
                entry += 1
            }
        }
    }

    /// A `YYYY-MM-DD` string naming a real date (years 0001–9999).
    private func date(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> String {
        let text = n.kind == .string ? JSONParser.decodeString(b, n) : ""
        guard let (year, month, day) = CivilDate.parts(text) else { throw StrideePayloadError(path: path(), "not a date like 2026-10-01") }
        guard let date = CivilDate(year: year, month: month, day: day) else { throw StrideePayloadError(path: path(), "\(text) is not a real date") }
        if let reason = Plausibility.instantReason(milliseconds: Int64(date.daysSinceEpoch) * 86_400_000, latest: reader.latest) {
            throw StrideePayloadError(path: path(), "\(text) \(reason)")
        }
        return text
    }
}
