/// Decodes Health Auto Export's JSON (CONTRACT.md §9, docs/health-auto-export.md): pure, no I/O.
///
/// A body is `{"data": {"metrics": […], "workouts": […], "symptoms": […], …}}`. Only its frame
/// can refuse it (`StrideePayloadError`, naming the JSON path: not JSON, no `data` object, a
/// member of `data` that is not an array); anything inside that breaks the contract — a point
/// without a date, a value outside its plausible range, a unit the catalog cannot convert, a
/// text over `TextLimit.maxBytes` — is quarantined with its reason and the rest kept.
///
/// The body is walked once without a node tape of the whole document (`JSONCursor`): each
/// point, workout member and record is parsed on its own reused tape, and each metric sample
/// is kept as 80 bytes (`HAESample`) until `HAEBody.samplesJSON` writes it out.
public enum HAEDecoder {
    /// The default largest body `serve` reads at `/hae` (`--max-hae-body`).
    public static let defaultMaxBodyBytes = 64 * 1_048_576

    /// One body → its samples, workouts, records and quarantine. `aggregation` is the request's
    /// `automation-aggregation` header (nil for a file, or a request without one: points in
    /// time); `now` (milliseconds since the epoch) decides which instants are plausible.
    public static func decode(_ body: [UInt8], aggregation header: String?,
                              now: Int64 = Plausibility.nowMilliseconds()) throws(StrideePayloadError) -> HAEBody {
        let aggregation = try HAEAggregation.parse(header: header)
        var result = HAEBody(body: body, aggregation: aggregation)
        try body.withUnsafeBufferPointer { (b) throws(StrideePayloadError) in
            var walker = HAEWalker(b, aggregation: aggregation, latest: Plausibility.latestMilliseconds(now: now))
            try walker.walk()
            walker.finish(into: &result)
        }
        result.dropEarlierCopies()
        return result
    }

    /// True when `body` is a JSON object holding `data` and no `schemaVersion`: Health Auto
    /// Export's shape rather than healthd's (how `ingest` tells a `.json` file's kind). Reads
    /// the top-level keys only, by their brackets; the decoder checks everything else.
    public static func isHAEBody(_ body: [UInt8]) -> Bool {
        body.withUnsafeBufferPointer { b in
            var cursor = JSONCursor(b, at: PayloadDecoder.bodyStart(b))
            guard cursor.enter(UInt8(ascii: "{")) else { return false }
            var tape: [JSONNode] = []
            var first = true, data = false
            let reader = StrideeFieldReader(b: b, latest: .max)
            while true {
                guard let key = try? cursor.nextKey(&first, depth: 1, tape: &tape) else { return data }
                cursor.skipWhitespace()
                if reader.stringEquals(key, Array("schemaVersion".utf8)) { return false }
                if reader.stringEquals(key, Array("data".utf8)) { data = true }
                guard cursor.offset < b.count else { return false }
                let c = b[cursor.offset]
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    guard (try? cursor.skipContainer()) != nil else { return false }
                } else {
                    guard (try? cursor.value(depth: 1, into: &tape)) != nil else { return false }
                }
            }
        }
    }

    /// Writes the members of the point object at `range` that `consumed` (bits of
    /// `HAEWalker.PointKey`) does not name, as an object: what a sample keeps under `hae`.
    static func writeExtras(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, consumed: UInt32, to w: inout JSONWriter,
                            tape: inout [JSONNode]) {
        // The point decoded fine once: it parses again.
        _ = try? JSONParser.parseValue(b, at: range.lowerBound, end: range.upperBound, depth: 0, into: &tape)
        let reader = StrideeFieldReader(b: b, latest: .max)
        w.beginObject()
        var k = 1
        while k < tape[0].after {
            let key = tape[k], value = tape[k + 1]
            let known = reader.index(of: key, in: HAEWalker.PointKey.table)
            if known.map({ consumed & (1 << UInt32($0)) == 0 }) ?? true {
                w.value { out in
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[key.start..<key.end]))
                    out.append(UInt8(ascii: ":"))
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: b[value.start..<value.end]))
                }
            }
            k = value.after
        }
        w.endObject()
    }
}

/// The walk of one body: the frame, then every metric, workout and record.
struct HAEWalker {
    /// The keys of a metric's point the decoder reads (bits of `HAESpec.consumed`).
    enum PointKey: Int, CaseIterable {
        case date, qty, source, Min, Avg, Max, systolic, diastolic, startDate, endDate, value
        case totalSleep, asleep, core, deep, rem, awake, inBed, sleepStart, sleepEnd, inBedStart, inBedEnd, sleepSource

        static let table = KeyTable(allCases.map { "\($0)" })

        /// The bits of `keys`.
        static func mask(_ keys: [PointKey]) -> UInt32 { keys.reduce(0) { $0 | 1 << UInt32($1.rawValue) } }
    }

    /// The arrays of `data` the contract names; any other member is kept as records too.
    enum DataKey: Int, CaseIterable {
        case metrics, workouts, symptoms, ecg, heartRateNotifications, stateOfMind, cycleTracking, medications
        static let table = KeyTable(allCases.map { "\($0)" })
    }

    let b: UnsafeBufferPointer<UInt8>
    let reader: StrideeFieldReader
    let aggregation: HAEAggregation?
    var tape: [JSONNode] = []
    var slots: [Int] = Array(repeating: -1, count: PointKey.allCases.count)
    /// Points, workouts and records met so far: the next quarantined one's position is this + 1.
    var position = 0
    var samples: [HAESample] = []
    var specs: [HAESpec] = []
    var specIndex: [String: UInt16] = [:]
    var sources: [String] = []
    var sourceIndex: [String: UInt32] = [:]
    /// The last source's bytes and index: consecutive points nearly always share one.
    var lastSource: (range: Range<Int>, index: UInt32)?
    var quarantined: [QuarantinedSample] = []
    var workouts: [HAEWorkout] = []
    var records: [(kind: String, range: Range<Int>)] = []
    var earliest: Timestamp?
    var latestEnd: Timestamp?
    /// Scratch for the names of name-based uuids.
    var name: [UInt8] = []

    init(_ b: UnsafeBufferPointer<UInt8>, aggregation: HAEAggregation?, latest: Int64) {
        self.b = b
        reader = StrideeFieldReader(b: b, latest: latest)
        self.aggregation = aggregation
        tape.reserveCapacity(64)
        name.reserveCapacity(256)
    }

    /// The frame: a JSON object with a `data` object; other top-level members are ignored.
    mutating func walk() throws(StrideePayloadError) {
        var cursor = try StrideeDecoder.enterRootObject(b)
        var sawData = false
        var first = true
        while let key = try cursor.nextKey(&first, depth: 1, tape: &tape) {
            guard reader.stringEquals(key, Array("data".utf8)) else {
                try cursor.value(depth: 1, into: &tape)
                continue
            }
            guard cursor.enter(UInt8(ascii: "{")) else {
                try cursor.value(depth: 1, into: &tape)
                throw StrideePayloadError(path: "data", "not an object: the body must be {\"data\": {…}}")
            }
            sawData = true
            try walkData(&cursor)
        }
        try cursor.finish()
        if !sawData { throw StrideePayloadError(path: "data", "missing: the body must be {\"data\": {…}}") }
    }

    /// The members of `data`: each an array (or `null`, none).
    mutating func walkData(_ cursor: inout JSONCursor) throws(StrideePayloadError) {
        var first = true
        while let key = try cursor.nextKey(&first, depth: 2, tape: &tape) {
            let known = reader.index(of: key, in: DataKey.table).flatMap(DataKey.init(rawValue:))
            let kind = known.map { "\($0)" } ?? JSONParser.decodeString(b, key)
            let path = "data." + (known.map { "\($0)" } ?? PayloadDecoder.snippet(kind))
            cursor.skipWhitespace()
            guard cursor.enter(UInt8(ascii: "[")) else {
                let range = try cursor.value(depth: 2, into: &tape)
                if tape[0].kind == .null { continue }
                // A member the contract does not name is kept whatever it is; a named one is an array.
                guard known == nil else { throw StrideePayloadError(path: path, "not an array") }
                record(kind, path, range, checkedOn: tape)
                continue
            }
            var index = 0
            var firstElement = true
            while try cursor.nextElement(&firstElement) {
                let elementPath = "\(path)[\(index)]"
                switch known {
                case .metrics: try metric(elementPath, &cursor)
                case .workouts: try workout(elementPath, &cursor)
                default:
                    let range = try cursor.value(depth: 3, into: &tape)
                    record(kind, elementPath, range, checkedOn: tape)
                }
                index += 1
            }
        }
    }

    /// An item of the other arrays, kept as sent; one PostgreSQL's jsonb cannot hold
    /// (`\u0000`, an unpaired surrogate, a number beyond numeric) is quarantined instead.
    mutating func record(_ kind: String, _ path: String, _ range: Range<Int>, checkedOn nodes: [JSONNode]) {
        position += 1
        if let excess = TextLimit.excess(kind) { return quarantine(path, "the array's name is \(excess)", range) }
        do throws(StrideePayloadError) {
            try reader.checkJSONB(nodes, 0..<nodes.count, path)
        } catch {
            return quarantine(error, range)
        }
        records.append((kind, range))
    }

    /// Keeps a point, workout or record apart with its reason (`position` already counts it).
    mutating func quarantine(_ path: String, _ problem: String, _ range: Range<Int>) {
        quarantine(StrideePayloadError(path: path, problem), range)
    }

    mutating func quarantine(_ error: StrideePayloadError, _ range: Range<Int>) {
        quarantined.append(QuarantinedSample(position: position, reason: error.description,
                                             raw: String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)))
    }

    /// Widens the body's window to `start`…`end`.
    mutating func cover(_ start: Timestamp, _ end: Timestamp) {
        if earliest.map({ start.microsecondsSinceEpoch < $0.microsecondsSinceEpoch }) ?? true { earliest = start }
        if latestEnd.map({ end.microsecondsSinceEpoch > $0.microsecondsSinceEpoch }) ?? true { latestEnd = end }
    }

    /// Hands what the walk found to `body`.
    func finish(into body: inout HAEBody) {
        body.samples = samples
        body.specs = specs
        body.sources = sources
        body.quarantined = quarantined
        body.workouts = workouts
        body.records = records
        if let earliest, let latestEnd { body.window = (earliest, latestEnd) }
    }
}
