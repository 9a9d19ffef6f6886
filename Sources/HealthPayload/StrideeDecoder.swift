/// Decodes the two Stridee body formats (docs/stridee.md): pure, no I/O.
///
/// A body is accepted whole or refused with a `StrideePayloadError` naming the field, indexes
/// from 0: nothing of a refused body is meant to be stored. The decoders walk the body once
/// without a node tape of the whole document (`JSONCursor`), so a body at the 30 MiB limit
/// costs the body plus its decoded columns.
public enum StrideeDecoder {
    /// The largest `healthkit.v1` body the receiver reads (30 MiB, else `413`).
    public static let maxWorkoutBodyBytes = 30 * 1_048_576
    /// The largest `healthkit.wellness.v1` body the receiver reads (10 MiB, else `413`).
    public static let maxWellnessBodyBytes = 10 * 1_048_576
    /// The most items one wellness body may hold; more is `StrideePayloadError.Reason.tooManyItems` (`413`).
    public static let maxWellnessItems = 2000

    /// One `healthkit.v1` body → the workout with its streams and route. `now` (milliseconds
    /// since the epoch) decides which instants are plausible (`Plausibility`).
    public static func decodeWorkout(_ body: [UInt8], now: Int64 = Plausibility.nowMilliseconds()) throws(StrideePayloadError) -> StrideeWorkout {
        try body.withUnsafeBufferPointer { (b) throws(StrideePayloadError) -> StrideeWorkout in
            var decoder = StrideeWorkoutDecoder(b, latest: Plausibility.latestMilliseconds(now: now))
            return try decoder.decode()
        }
    }

    /// One `healthkit.wellness.v1` body → its items, in body order, one per identity (`kind`,
    /// `startTime`): of items sharing one, the later in the body is kept (as stored).
    public static func decodeWellness(_ body: [UInt8], now: Int64 = Plausibility.nowMilliseconds()) throws(StrideePayloadError) -> [WellnessItem] {
        try decodeWellnessCounting(body, now: now).items
    }

    /// `decodeWellness`, with how many items the body held before those of one identity became
    /// one (the rest are duplicates, for the metrics).
    public static func decodeWellnessCounting(_ body: [UInt8], now: Int64 = Plausibility.nowMilliseconds())
        throws(StrideePayloadError) -> (items: [WellnessItem], sent: Int) {
        try body.withUnsafeBufferPointer { (b) throws(StrideePayloadError) -> (items: [WellnessItem], sent: Int) in
            var decoder = StrideeWellnessDecoder(b, latest: Plausibility.latestMilliseconds(now: now))
            let items = try decoder.decode()
            return (items, decoder.sent)
        }
    }
}

extension StrideeDecoder {
    /// A cursor inside the body's top-level object: after an optional byte-order mark, once the
    /// body is known to be UTF-8 and to start with `{`.
    static func enterRootObject(_ b: UnsafeBufferPointer<UInt8>) throws(StrideePayloadError) -> JSONCursor {
        let start = PayloadDecoder.bodyStart(b)
        if let bad = UTF8Validation.firstInvalidOffset(b, in: start..<b.count) {
            throw StrideePayloadError(path: "", "the body is not valid UTF-8 (byte \(bad))")
        }
        var cursor = JSONCursor(b, at: start)
        cursor.skipWhitespace()
        guard cursor.offset < b.count else { throw cursor.syntaxError("the body is empty", at: cursor.offset) }
        if cursor.enter(UInt8(ascii: "{")) { return cursor }
        // Not an object: say so only for valid JSON; otherwise name the syntax error.
        var tape: [JSONNode] = []
        try cursor.value(depth: 0, into: &tape)
        try cursor.finish()
        throw StrideePayloadError(path: "", "the body is not a JSON object")
    }

    /// Checks a `format` member: absent, `null` or exactly `name`.
    static func checkFormat(_ reader: StrideeFieldReader, _ n: JSONNode, _ name: StaticString) throws(StrideePayloadError) {
        if n.kind == .null { return }
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        if reader.stringEquals(n, Array(expected)) { return }
        throw StrideePayloadError(.unsupportedFormat, path: "format", "\(reader.literal(n)) is not \"\(name)\"")
    }

    /// The order that sorts `times` ascending, stably; nil when they already are.
    static func stableOrder(_ times: [Int64], sorted: Bool) -> [Int]? {
        if sorted { return nil }
        return times.indices.sorted { times[$0] != times[$1] ? times[$0] < times[$1] : $0 < $1 }
    }

    /// The display name of a key node, for paths of keys the decoder does not know.
    static func keyName(_ reader: StrideeFieldReader, _ key: JSONNode) -> String {
        PayloadDecoder.snippet(JSONParser.decodeString(reader.b, key))
    }
}
