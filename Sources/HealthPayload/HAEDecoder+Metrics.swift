import Hashing

/// Metrics: `{name, units, data: [points]}`, each point one sample (blood pressure two, a
/// summarized night one per sleep stage).
extension HAEWalker {
    /// What a metric's points become, decided once from its name and units.
    struct MetricPlan {
        /// The metric's name as written.
        var name: String
        /// The catalog type it becomes; nil outside the catalog (type `hae:NAME`).
        var metric: HAEMetric?
        /// Its `units` as written.
        var units: String?
        /// Into the catalog's unit (sleep: the stage amounts of a night into minutes).
        var conversion = CatalogUnits.Conversion.scale(1)
        /// Set when no point of the metric can be stored: each is quarantined with it.
        var problem: StrideePayloadError?
    }

    /// One element of `data.metrics`. Its `data` array is read after its other members (the
    /// app writes them in any order), by a second cursor: the first only steps over it.
    mutating func metric(_ path: String, _ cursor: inout JSONCursor) throws(StrideePayloadError) {
        cursor.skipWhitespace()
        let start = cursor.offset
        guard cursor.enter(UInt8(ascii: "{")) else {
            position += 1
            let range = try cursor.value(depth: 3, into: &tape)
            return quarantine(path, "not an object", range)
        }
        var name = Result<String, StrideePayloadError>.failure(StrideePayloadError(path: path + ".name", "missing"))
        var units = Result<String?, StrideePayloadError>.success(nil)
        var data: Range<Int>?
        var dataProblem: String? = "missing"
        var first = true
        while let key = try cursor.nextKey(&first, depth: 3, tape: &tape) {
            if reader.stringEquals(key, Array("data".utf8)) {
                cursor.skipWhitespace()
                if cursor.offset < b.count, b[cursor.offset] == UInt8(ascii: "[") {
                    data = try cursor.skipContainer()
                    dataProblem = nil
                } else {
                    try cursor.value(depth: 3, into: &tape)
                    data = nil
                    dataProblem = tape[0].kind == .null ? nil : "not an array"
                }
                continue
            }
            try cursor.value(depth: 3, into: &tape)
            let node = tape[0]
            if reader.stringEquals(key, Array("name".utf8)) {
                name = Result { () throws(StrideePayloadError) in try reader.string(node, path + ".name") }
            } else if reader.stringEquals(key, Array("units".utf8)) {
                units = Result { () throws(StrideePayloadError) in try reader.optionalString(node, path + ".units") }
            }
        }
        if let dataProblem {
            position += 1
            return quarantine(path + ".data", dataProblem, start..<cursor.offset)
        }
        guard let data else { return }
        let plan = self.plan(path, name, units)
        var points = JSONCursor(b, at: data.lowerBound)
        _ = points.enter(UInt8(ascii: "["))
        var index = 0
        var firstPoint = true
        while try points.nextElement(&firstPoint) {
            let range = try points.value(depth: 5, into: &tape)
            position += 1
            point(plan, "\(path).data[\(index)]", range)
            index += 1
        }
        guard points.offset == data.upperBound else { throw points.syntaxError("unexpected content in an array", at: points.offset) }
    }

    /// How a metric's points are read: its catalog type and unit conversion, or why none of
    /// them can be stored.
    func plan(_ path: String, _ name: Result<String, StrideePayloadError>, _ units: Result<String?, StrideePayloadError>) -> MetricPlan {
        let written: String
        switch name {
        case .success(let text): written = text
        case .failure(let error): return MetricPlan(name: "", problem: error)
        }
        var plan = MetricPlan(name: written, metric: HAEMetric.known[written])
        switch units {
        case .success(let text): plan.units = text
        case .failure(let error): plan.problem = error
        }
        if plan.metric == nil, let excess = TextLimit.excess(byteCount: written.utf8.count + 4) {
            plan.problem = StrideePayloadError(path: path + ".name", "type hae:NAME is \(excess)")
        }
        guard let metric = plan.metric else { return plan }
        let target = metric.unit ?? "min"
        // A night's stages are hours unless the metric says otherwise.
        let unit = metric.shape == .sleep ? (plan.units ?? "hr") : plan.units
        if let conversion = CatalogUnits.conversion(from: unit, to: target, percentIsHundredths: true) {
            plan.conversion = conversion
        } else if plan.problem == nil {
            plan.problem = StrideePayloadError(path: path + ".units",
                                               "\"\(PayloadDecoder.snippet(unit ?? ""))\" of \(written) cannot be converted to \(target)")
        }
        return plan
    }

    /// One point (on `tape`): its samples appended, or the point quarantined.
    mutating func point(_ plan: MetricPlan, _ path: String, _ range: Range<Int>) {
        if let problem = plan.problem { return quarantine(problem, range) }
        guard tape[0].kind == .object else { return quarantine(path, "not an object", range) }
        reader.resolve(tape, object: 0, PointKey.table, into: &slots)
        let made: [HAESample]
        do throws(StrideePayloadError) {
            switch plan.metric?.shape {
            case nil, .quantity?, .heartRate?: made = [try quantity(plan, path, range)]
            case .bloodPressure?: made = try bloodPressure(plan, path, range)
            case .sleep?: made = slots[PointKey.startDate.rawValue] >= 0 ? [try segment(plan, path, range)] : try night(plan, path, range)
            }
        } catch {
            return quarantine(error, range)
        }
        for sample in made {
            cover(Timestamp(microsecondsSinceEpoch: sample.start, offsetSeconds: sample.startOffset),
                  Timestamp(microsecondsSinceEpoch: sample.end, offsetSeconds: sample.endOffset))
        }
        samples += made
    }

    // MARK: Shapes

    /// `{date, qty}`, or heart rate's `{date, Min, Avg, Max}`; a metric outside the catalog
    /// with `qty` optional and its unit as written.
    mutating func quantity(_ plan: MetricPlan, _ path: String, _ range: Range<Int>) throws(StrideePayloadError) -> HAESample {
        let heart = plan.metric?.shape == .heartRate
        let (start, date) = try instant(.date, path)
        let end = try bucketEnd(start, path)
        let valueKey: PointKey = heart && slots[PointKey.Avg.rawValue] >= 0 ? .Avg : .qty
        var value = try number(valueKey, path, required: plan.metric != nil)
        var low = heart ? try number(.Min, path, required: false) : nil
        var high = heart ? try number(.Max, path, required: false) : nil
        if plan.metric != nil {
            value = value.map(plan.conversion.apply)
            low = low.map(plan.conversion.apply)
            high = high.map(plan.conversion.apply)
        }
        let type = plan.metric?.type ?? "hae:" + plan.name
        for (key, v) in [(valueKey, value), (.Min, low), (.Max, high)] as [(PointKey, Double?)] {
            if let v, let reason = plausibility(v, of: type) { throw StrideePayloadError(path: "\(path).\(key)", reason) }
        }
        let consumed = PointKey.mask(heart ? [.date, .qty, .Avg, .Min, .Max, .source] : [.date, .qty, .source])
        let spec = self.spec(type, plan.metric?.group ?? "other", "quantity", plan.metric?.unit ?? plan.units, consumed)
        let source = try self.source(.source, path)
        // Identity: metric, source, date as written and bucket; a point in time also its value.
        let valueText = aggregation == nil ? writtenText(valueKey) : nil
        let uuid = identity([plan.name], source, [date, aggregation.map { Array($0.rawValue.utf8) } ?? [], valueText ?? []])
        return HAESample(uuid: uuid, start: start.microsecondsSinceEpoch, end: end.microsecondsSinceEpoch,
                         startOffset: start.offsetSeconds, endOffset: end.offsetSeconds, value: value ?? .nan,
                         low: low ?? .nan, high: high ?? .nan, spec: spec, bucketed: aggregation != nil, source: source,
                         extrasStart: 0, extrasEnd: 0).keeping(try extras(consumed, range, path))
    }

    /// `{date, systolic, diastolic}`: a sample for each of the two present.
    mutating func bloodPressure(_ plan: MetricPlan, _ path: String, _ range: Range<Int>) throws(StrideePayloadError) -> [HAESample] {
        let (start, date) = try instant(.date, path)
        let end = try bucketEnd(start, path)
        let consumed = PointKey.mask([.date, .systolic, .diastolic, .source])
        let source = try self.source(.source, path)
        let keep = try extras(consumed, range, path)
        var made: [HAESample] = []
        for (key, type) in [(PointKey.systolic, plan.metric!.type), (.diastolic, HAEMetric.diastolicType)] {
            guard var value = try number(key, path, required: false) else { continue }
            value = plan.conversion.apply(value)
            if let reason = plausibility(value, of: type) { throw StrideePayloadError(path: "\(path).\(key)", reason) }
            let spec = self.spec(type, plan.metric!.group, "quantity", plan.metric!.unit, consumed)
            let valueText = aggregation == nil ? writtenText(key) : nil
            let uuid = identity([plan.name, "\(key)"], source, [date, aggregation.map { Array($0.rawValue.utf8) } ?? [], valueText ?? []])
            made.append(HAESample(uuid: uuid, start: start.microsecondsSinceEpoch, end: end.microsecondsSinceEpoch,
                                  startOffset: start.offsetSeconds, endOffset: end.offsetSeconds, value: value, low: .nan,
                                  high: .nan, spec: spec, bucketed: aggregation != nil, source: source, extrasStart: 0,
                                  extrasEnd: 0).keeping(keep))
        }
        if made.isEmpty { throw StrideePayloadError(path: path, "systolic and diastolic are both missing") }
        return made
    }

    /// The end of the bucket starting at `start` (the point itself without an aggregation): an
    /// end after the day after tomorrow is as implausible as a healthd sample's (a bucket of
    /// the week, month or year still under way is sent again once it is over).
    func bucketEnd(_ start: Timestamp, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Timestamp {
        guard let aggregation else { return start }
        let end = aggregation.end(of: start)
        if let reason = Plausibility.instantReason(microseconds: end.microsecondsSinceEpoch, latest: reader.latest) {
            throw StrideePayloadError(path: path() + ".date", "the bucket's end (\(aggregation.rawValue)) \(reason)")
        }
        return end
    }

    /// A sleep segment `{startDate, endDate, value}`: one sleep sample of its stage.
    mutating func segment(_ plan: MetricPlan, _ path: String, _ range: Range<Int>) throws(StrideePayloadError) -> HAESample {
        let (start, startText) = try instant(.startDate, path)
        let (end, endText) = try instant(.endDate, path)
        guard end.microsecondsSinceEpoch >= start.microsecondsSinceEpoch else {
            throw StrideePayloadError(path: path + ".endDate", "is before startDate")
        }
        let valueIndex = slots[PointKey.value.rawValue]
        guard valueIndex >= 0 else { throw StrideePayloadError(path: path + ".value", "missing") }
        let text = try reader.string(tape[valueIndex], path + ".value")
        guard let stage = HAEMetric.stage(segment: text) else {
            throw StrideePayloadError(path: path + ".value", "\"\(PayloadDecoder.snippet(text))\" is not a sleep stage (In Bed, Asleep, Unspecified, Awake, Core, Deep, REM)")
        }
        let consumed = PointKey.mask([.startDate, .endDate, .value, .qty, .source])
        let spec = self.spec(HAEMetric.sleepType, "sleep", "category", nil, consumed)
        let source = try self.source(.source, path)
        let uuid = identity([plan.name], source, [startText, endText, writtenText(.value) ?? []])
        return HAESample(uuid: uuid, start: start.microsecondsSinceEpoch, end: end.microsecondsSinceEpoch,
                         startOffset: start.offsetSeconds, endOffset: end.offsetSeconds, value: Double(stage), low: .nan,
                         high: .nan, spec: spec, bucketed: false, source: source, extrasStart: 0,
                         extrasEnd: 0).keeping(try extras(consumed, range, path))
    }

    // MARK: Reading a point's members

    /// The instant a date member names, and its text as written; plausible (`Plausibility`).
    func instant(_ key: PointKey, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> (Timestamp, [UInt8]) {
        let index = slots[key.rawValue]
        guard index >= 0 else { throw StrideePayloadError(path: "\(path()).\(key)", "missing") }
        return try instant(tape[index], "\(path()).\(key)")
    }

    /// The instant a date node names (`2024-02-06 14:30:00 -0800`), and its text as written.
    func instant(_ node: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> (Timestamp, [UInt8]) {
        guard node.kind == .string else { throw StrideePayloadError(path: path(), "not a string") }
        let text = node.stringFlags.contains(.escaped) ? Array(JSONParser.decodeString(b, node).utf8)
            : Array(UnsafeBufferPointer(rebasing: b[node.contentRange]))
        guard let stamp = text.withUnsafeBufferPointer({ Timestamp(written: $0) }) else {
            throw StrideePayloadError(path: path(), "\(reader.literal(node)) is not a date like 2024-02-06 14:30:00 -0800")
        }
        if let reason = Plausibility.instantReason(microseconds: stamp.microsecondsSinceEpoch, latest: reader.latest) {
            throw StrideePayloadError(path: path(), "\(reader.literal(node)) \(reason)")
        }
        return (stamp, text)
    }

    /// A number member (finite, |x| ≤ 1e15); nil when absent or `null` and not `required`.
    func number(_ key: PointKey, _ path: @autoclosure () -> String, required: Bool) throws(StrideePayloadError) -> Double? {
        let index = slots[key.rawValue]
        guard index >= 0, tape[index].kind != .null else {
            if required { throw StrideePayloadError(path: "\(path()).\(key)", "missing") }
            return nil
        }
        return try reader.double(tape[index], "\(path()).\(key)")
    }

    /// The text of a member as written (a number's digits, a string's contents), for an identity.
    func writtenText(_ key: PointKey) -> [UInt8]? {
        let index = slots[key.rawValue]
        guard index >= 0 else { return nil }
        let node = tape[index]
        return Array(UnsafeBufferPointer(rebasing: b[node.kind == .string ? node.contentRange : node.start..<node.end]))
    }

    /// Why a value is implausible for its type (`Plausibility`), or nil.
    func plausibility(_ value: Double, of type: String) -> String? {
        guard let range = Plausibility.range(of: type) else { return nil }
        return Plausibility.valueReason("", value, range, of: type).map { String($0.dropFirst()) }
    }

    /// The source member (or `Health Auto Export` without one), interned: its index in `sources`.
    mutating func source(_ key: PointKey, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> UInt32 {
        let index = slots[key.rawValue]
        guard index >= 0, tape[index].kind != .null else { return intern(HAEBody.defaultSource) }
        let node = tape[index]
        if !node.stringFlags.contains(.escaped), node.kind == .string, let last = lastSource, last.range.count == node.contentRange.count,
           memoryEquals(b, last.range.lowerBound, b, node.contentRange.lowerBound, last.range.count) {
            return last.index
        }
        let text = try reader.string(node, "\(path()).\(key)")
        // An empty name is none.
        let interned = intern(text.isEmpty ? HAEBody.defaultSource : text)
        if !node.stringFlags.contains(.escaped) { lastSource = (node.contentRange, interned) }
        return interned
    }

    mutating func intern(_ source: String) -> UInt32 {
        if let found = sourceIndex[source] { return found }
        let index = UInt32(sources.count)
        sources.append(source)
        sourceIndex[source] = index
        return index
    }

    /// The spec index of a type written this way (made on first use).
    mutating func spec(_ type: String, _ group: String, _ kind: String, _ unit: String?, _ consumed: UInt32) -> UInt16 {
        let key = "\(type)\u{1F}\(unit ?? "\u{0}")\u{1F}\(consumed)"
        if let found = specIndex[key] { return found }
        let index = UInt16(specs.count)
        specs.append(HAESpec(type: type, group: group, kind: kind, unit: unit, consumed: consumed))
        specIndex[key] = index
        return index
    }

    /// The range of the point when it has members `consumed` does not name (kept under `hae`),
    /// else an empty one; such a point must then cast to jsonb whole.
    func extras(_ consumed: UInt32, _ range: Range<Int>, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Range<Int> {
        var k = 1
        while k < tape[0].after {
            let known = reader.index(of: tape[k], in: PointKey.table)
            if known.map({ consumed & (1 << UInt32($0)) == 0 }) ?? true {
                try reader.checkJSONB(tape, 0..<tape.count, path())
                return range
            }
            k = tape[k + 1].after
        }
        return 0..<0
    }

    /// The name-based uuid of a sample: the metric's name parts, its source and `rest`, joined
    /// by the unit separator.
    mutating func identity(_ metric: [String], _ source: UInt32, _ rest: [[UInt8]]) -> (UInt64, UInt64) {
        name.removeAll(keepingCapacity: true)
        name.append(contentsOf: metric.joined(separator: "/").utf8)
        name.append(0x1F)
        name.append(contentsOf: sources[Int(source)].utf8)
        for part in rest {
            name.append(0x1F)
            name.append(contentsOf: part)
        }
        return name.withUnsafeBytes { UUIDv5.value(namespace: HAEBody.namespace, name: $0) }
    }
}

extension HAESample {
    /// The sample with its point's extra members kept (`range` empty: none).
    func keeping(_ range: Range<Int>) -> HAESample {
        var copy = self
        copy.extrasStart = Int32(range.lowerBound)
        copy.extrasEnd = Int32(range.upperBound)
        return copy
    }
}
