import Hashing

/// A metric sample as the decoder keeps it until it is written out as a healthd-shaped object:
/// 80 bytes, so a 64 MiB body's half a million points cost tens of megabytes, not the hundreds
/// their JSON would (they are written out a chunk at a time: `HAEBody.samplesJSON`).
struct HAESample: Sendable {
    /// Its name-based uuid (`UUIDv5.value`).
    var uuid: (UInt64, UInt64)
    /// Start and end, microseconds since the epoch, and the offsets they are written in (seconds east).
    var start: Int64
    var end: Int64
    var startOffset: Int32
    var endOffset: Int32
    /// The value in the catalog's unit (a sleep stage's number); NaN for none.
    var value: Double
    /// Heart rate's `Min` and `Max`; NaN for none.
    var low: Double
    var high: Double
    /// Index into `HAEBody.specs`.
    var spec: UInt16
    /// A summarized bucket (or a summarized night's stage): never a twin of another way's sample.
    var bucketed: Bool
    /// Index into `HAEBody.sources`.
    var source: UInt32
    /// The body range of the point object whose members the columns do not carry are kept
    /// under the sample's `hae` key; empty when it has none.
    var extrasStart: Int32
    var extrasEnd: Int32
}

/// The type a decoded sample is written as: type, group, kind and unit, and which members of
/// its point the columns carry (the others are kept under `hae`).
struct HAESpec: Sendable {
    var type: String
    var group: String
    var kind: String
    var unit: String?
    /// Bits of `HAEDecoder.PointKey` consumed into columns.
    var consumed: UInt32
}

/// A workout of a Health Auto Export body: its sample (healthd's shape), its streams and route.
public struct HAEWorkout: Sendable {
    /// The workout's uuid, upper case: its `id`, or a name-based one (version 1 workouts).
    public var uuid: String
    /// The workout as a healthd sample object (kind workout; the app's members kept under `hae`).
    public var sampleJSON: [UInt8]
    public var start: Timestamp
    public var end: Timestamp
    /// Streams by their name in the warehouse (`heart_rate`, `cycling_power`, …), each sorted by time.
    public var streams: [(name: String, stream: WorkoutStream)]
    /// The route, sorted by time (empty: none).
    public var route: WorkoutRoute
}

/// A decoded Health Auto Export body (CONTRACT.md §9): metric samples to write out in chunks,
/// workouts, the other arrays kept verbatim, and what was quarantined, with reasons.
///
/// Every sample object it writes is valid for PostgreSQL by construction, as `PayloadDecoder`
/// guarantees for healthd's: a UUID, timestamps in the reference's shape with their ranges
/// checked, finite numbers within ±1e15, strings checked for `\u0000` and lone surrogates.
public struct HAEBody: Sendable {
    /// The body itself (members kept verbatim are copied out of it).
    public let body: [UInt8]
    /// The request's grouping; nil: points in time.
    public let aggregation: HAEAggregation?
    var samples: [HAESample] = []
    var specs: [HAESpec] = []
    var sources: [String] = []
    /// Points, workouts and records that broke the contract, in body order.
    public var quarantined: [QuarantinedSample] = []
    /// The workouts, in body order.
    public var workouts: [HAEWorkout] = []
    /// The other arrays' items: the array's name and the item's range in `body`.
    var records: [(kind: String, range: Range<Int>)] = []
    /// The earliest start and latest end of everything the body holds; nil when it holds nothing.
    public var window: (start: Timestamp, end: Timestamp)?

    /// Metric samples (sleep segments included) to store: `samplesJSON` writes them out.
    public var metricSampleCount: Int { samples.count }
    /// Metric samples left out as earlier copies of a uuid the body repeats (duplicates).
    public private(set) var repeatedSamples = 0
    /// Every sample the body made: metric samples (repeats included), workouts, quarantined.
    public var sampleCount: Int { samples.count + repeatedSamples + workouts.count + quarantined.count }
    /// Items of the other arrays, kept verbatim (`recordsJSON`).
    public var recordCount: Int { records.count }

    /// The source of a point or workout that names none (or an empty one).
    public static let defaultSource = "Health Auto Export"

    /// The namespace of the name-based uuids of Health Auto Export (a constant: never change it,
    /// or every re-sent bucket would be stored again beside itself).
    public static let namespace = UUIDv5.bytes("8E3C2B1A-6F4D-4E59-A7B0-3C1D2E4F5A6B")!

    /// A uuid repeated in the body is stored once, the later copy, and the repeat counts as a
    /// duplicate (§1), as `store_samples` does within one statement; a body is stored in
    /// chunks (`HAEStore.chunkSamples`), so the earlier copies are left out here, whatever
    /// chunk they would fall in.
    mutating func dropEarlierCopies() {
        struct Key: Hashable { let high: UInt64, low: UInt64 }
        var seen = Set<Key>(minimumCapacity: samples.count)
        var later = [Bool](repeating: true, count: samples.count)
        for i in samples.indices.reversed() {
            later[i] = seen.insert(Key(high: samples[i].uuid.0, low: samples[i].uuid.1)).inserted
        }
        guard seen.count < samples.count else { return }
        repeatedSamples += samples.count - seen.count
        samples = samples.indices.filter { later[$0] }.map { samples[$0] }
    }

    /// The metric samples `range` (indexes from 0) as one JSON array of healthd-shaped objects,
    /// ready for `store_samples`.
    public func samplesJSON(_ range: Range<Int>) -> [UInt8] {
        var w = JSONWriter(capacity: range.count * 360 + 2)
        var scratch: [UInt8] = []
        scratch.reserveCapacity(160)
        var tape: [JSONNode] = []
        body.withUnsafeBufferPointer { b in
            w.beginArray()
            for k in range { write(samples[k], to: &w, b, &scratch, &tape) }
            w.endArray()
        }
        return w.bytes
    }

    /// `[{"kind": …, "item": …}, …]`: every item of the other arrays, its text as sent.
    public func recordsJSON() -> [UInt8] {
        var w = JSONWriter(capacity: records.reduce(2) { $0 + $1.range.count + 32 })
        body.withUnsafeBufferPointer { b in
            w.beginArray()
            for record in records {
                w.beginObject()
                w.field("kind", record.kind)
                w.key("item")
                w.raw(UnsafeBufferPointer(rebasing: b[record.range]))
                w.endObject()
            }
            w.endArray()
        }
        return w.bytes
    }

    private func write(_ s: HAESample, to w: inout JSONWriter, _ b: UnsafeBufferPointer<UInt8>, _ scratch: inout [UInt8],
                       _ tape: inout [JSONNode]) {
        let spec = specs[Int(s.spec)]
        let start = Timestamp(microsecondsSinceEpoch: s.start, offsetSeconds: s.startOffset)
        let end = Timestamp(microsecondsSinceEpoch: s.end, offsetSeconds: s.endOffset)
        let stage = spec.kind == "category" && !s.value.isNaN ? HAEMetric.stages.first { Double($0.value) == s.value }?.name : nil
        w.beginObject()
        w.key("uuid")
        w.value { out in
            out.append(UInt8(ascii: "\""))
            UUIDv5.appendText(s.uuid, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        // healthd's id: a SHA-256 fingerprint of the content (type, start, end, value, stage).
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: spec.type.utf8)
        for part in [start.millisecondsSinceEpoch, end.millisecondsSinceEpoch] {
            scratch.append(UInt8(ascii: "|"))
            scratch.append(contentsOf: String(part).utf8)
        }
        scratch.append(UInt8(ascii: "|"))
        if !s.value.isNaN { HAENumber.append(s.value, to: &scratch) }
        scratch.append(UInt8(ascii: "|"))
        if let stage { scratch.append(contentsOf: stage.utf8) }
        w.field("id", sha256Of: scratch)
        w.field("type", spec.type)
        w.field("group", spec.group)
        w.field("source", sources[Int(s.source)])
        w.field("start", stamp: start)
        w.field("end", stamp: end)
        w.field("kind", spec.kind)
        for (key, number) in [("value", s.value), ("Min", s.low), ("Max", s.high)] as [(StaticString, Double)] where !number.isNaN {
            w.key(key)
            w.value { HAENumber.append(number, to: &$0) }
        }
        if let unit = spec.unit { w.field("unit", unit) }
        if let stage { w.field("name", stage) }
        // What the sample sums: the request's grouping, or for a summarized night's stage the night.
        if s.bucketed { w.field("haeBucket", spec.kind == "category" ? "night" : aggregation?.rawValue ?? "night") }
        if s.extrasEnd > s.extrasStart {
            w.key("hae")
            HAEDecoder.writeExtras(b, Int(s.extrasStart)..<Int(s.extrasEnd), consumed: spec.consumed, to: &w, tape: &tape)
        }
        w.endObject()
    }
}

extension JSONWriter {
    /// A member whose value is an instant in the reference's shape (`Timestamp.appendReferenceText`).
    mutating func field(_ name: StaticString, stamp: Timestamp) {
        key(name)
        value { out in
            out.append(UInt8(ascii: "\""))
            stamp.appendReferenceText(to: &out)
            out.append(UInt8(ascii: "\""))
        }
    }

    /// A member whose value is the SHA-256 of `content` in hex: healthd's `id`, a fingerprint of
    /// a sample's content.
    mutating func field(_ name: StaticString, sha256Of content: [UInt8]) {
        key(name)
        value { out in
            out.append(UInt8(ascii: "\""))
            content.withUnsafeBytes { SHA256.appendHex(of: $0, to: &out) }
            out.append(UInt8(ascii: "\""))
        }
    }
}

/// Numbers as the decoder writes them: whole numbers as integers, others rounded to 15
/// significant digits, the digits PostgreSQL's `float8` → `numeric` cast keeps. So the text
/// written is the one `health_store.compact_payload` finds its column gives back, and a
/// converted value (1.2 mi = 1931.2128 m, not 1931.2128000000002) costs no payload bytes.
enum HAENumber {
    /// Powers of ten that doubles hold exactly.
    private static let powers: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { acc, _ in acc * 10 } }

    /// `v` (finite, |v| ≤ 1e15) with at most 15 significant digits.
    static func rounded(_ v: Double) -> Double {
        if v == v.rounded(.towardZero) { return v }
        var digits = 0, leading = true
        for c in v.description.utf8 {
            if c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { break }
            guard c &- UInt8(ascii: "0") < 10 else { continue }
            if leading && c == UInt8(ascii: "0") { continue }
            leading = false
            digits += 1
        }
        if digits <= 15 { return v }
        var exponent = 0, magnitude = abs(v)
        while magnitude >= 10 { magnitude /= 10; exponent += 1 }
        while magnitude < 1 { magnitude *= 10; exponent -= 1 }
        let k = 14 - exponent
        guard k >= 0, k <= 22 else { return v }
        return (v * powers[k]).rounded() / powers[k]
    }

    /// Appends `rounded(v)` as JSON: an integer when whole.
    static func append(_ v: Double, to out: inout [UInt8]) {
        let r = rounded(v)
        if r == r.rounded(.towardZero) && abs(r) < 1e15 {
            out.append(contentsOf: String(Int64(r)).utf8)
        } else {
            out.append(contentsOf: r.description.utf8)
        }
    }
}
