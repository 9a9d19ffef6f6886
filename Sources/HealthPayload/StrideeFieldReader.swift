/// Typed reading of one value node for the Stridee decoders, with errors that name the field.
///
/// `path` is an autoclosure: the field's name is only built when something is wrong. Every
/// string is at most `TextLimit.maxBytes` once decoded, and every timestamp a plausible
/// instant (`Plausibility`: from 1970-01-01 to before `latest`).
struct StrideeFieldReader {
    /// The bound on any number the warehouse stores (it may be summed).
    static let numberBound = 1e15

    /// The whole body the nodes point into.
    let b: UnsafeBufferPointer<UInt8>
    /// The first implausible instant, milliseconds since the epoch (`Plausibility.latestMilliseconds`).
    let latest: Int64

    /// The text of a node as written, shortened and escaped for a message.
    func literal(_ n: JSONNode) -> String {
        PayloadDecoder.snippet(b, n.start..<n.end)
    }

    /// The decoded text of a string node; refuses `\u0000` and unpaired surrogates (PostgreSQL's
    /// `text` and `jsonb` reject both).
    func string(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> String {
        guard n.kind == .string else { throw StrideePayloadError(path: path(), "not a string") }
        try checkEscapes(n, path())
        let text = JSONParser.decodeString(b, n)
        if let excess = TextLimit.excess(text) { throw StrideePayloadError(path: path(), excess) }
        return text
    }

    /// Like `string`, with `null` read as absent.
    func optionalString(_ n: JSONNode?, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> String? {
        guard let n, n.kind != .null else { return nil }
        return try string(n, path())
    }

    /// A number node's value: finite, |x| ≤ 1e15, and not so close to zero that PostgreSQL's
    /// `double precision` input would call it out of range.
    func double(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double {
        guard n.kind == .number else { throw StrideePayloadError(path: path(), "not a number") }
        let info = n.numberInfo
        if info.contains(.outOfRange) {
            throw StrideePayloadError(path: path(), "\(literal(n)) is beyond PostgreSQL's numeric range")
        }
        let value = JSONNumber.doubleValue(b, n.start..<n.end)
        guard value.isFinite, value.magnitude <= Self.numberBound else {
            throw StrideePayloadError(path: path(), "\(literal(n)) is beyond ±1e15")
        }
        if info.contains(.tiny) {
            throw StrideePayloadError(path: path(), "\(literal(n)) is too close to zero (below 1e-300)")
        }
        return value
    }

    /// Like `double`, with `null` read as absent.
    func optionalDouble(_ n: JSONNode?, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double? {
        guard let n, n.kind != .null else { return nil }
        return try double(n, path())
    }

    /// A number in `range`, named in the message as `[low, high]`.
    func double(_ n: JSONNode, in range: ClosedRange<Double>, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double {
        let value = try double(n, path())
        guard range.contains(value) else {
            throw StrideePayloadError(path: path(), "\(literal(n)) is outside [\(Self.bound(range.lowerBound)), \(Self.bound(range.upperBound))]")
        }
        return value
    }

    /// A number that must not be negative.
    func nonNegative(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double {
        let value = try double(n, path())
        guard value >= 0 else { throw StrideePayloadError(path: path(), "\(literal(n)) is negative") }
        return value
    }

    /// A number within a plausible range (`Plausibility`): `-5 is outside its plausible range: ≥ 0`.
    func double(_ n: JSONNode, plausible range: PlausibleRange, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double {
        let value = try double(n, path())
        guard range.contains(value) else {
            throw StrideePayloadError(path: path(), "\(literal(n)) is outside its plausible range: \(range)")
        }
        return value
    }

    /// Like `double(_:plausible:_:)`, with `null` read as absent.
    func optionalDouble(_ n: JSONNode?, plausible range: PlausibleRange, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Double? {
        guard let n, n.kind != .null else { return nil }
        return try double(n, plausible: range, path())
    }

    /// An integer literal that fits `Int32`.
    func int32(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Int32 {
        guard n.kind == .number, n.numberInfo.contains(.integer) else { throw StrideePayloadError(path: path(), "not an integer") }
        guard let value = JSONNumber.int32Value(b, n.start..<n.end) else {
            throw StrideePayloadError(path: path(), "\(literal(n)) does not fit a 32-bit integer")
        }
        return value
    }

    /// A timestamp string (`Timestamp`'s shapes).
    func timestamp(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Timestamp {
        let parsed: Timestamp?
        if n.kind != .string {
            parsed = nil
        } else if n.stringFlags.contains(.escaped) {
            parsed = Timestamp(iso8601: JSONParser.decodeString(b, n))
        } else {
            parsed = Timestamp(iso8601UTF8: UnsafeBufferPointer(rebasing: b[n.contentRange]))
        }
        guard let parsed else { throw StrideePayloadError(path: path(), "not an ISO 8601 timestamp") }
        if let reason = Plausibility.instantReason(microseconds: parsed.microsecondsSinceEpoch, latest: latest) {
            throw StrideePayloadError(path: path(), "\(literal(n)) \(reason)")
        }
        return parsed
    }

    /// Like `timestamp`, with `null` read as absent.
    func optionalTimestamp(_ n: JSONNode?, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Timestamp? {
        guard let n, n.kind != .null else { return nil }
        return try timestamp(n, path())
    }

    /// True or false; `null` and absence read as `absent`.
    func bool(_ n: JSONNode?, absent: Bool, _ path: @autoclosure () -> String) throws(StrideePayloadError) -> Bool {
        guard let n, n.kind != .null else { return absent }
        switch n.kind {
        case .true: return true
        case .false: return false
        default: throw StrideePayloadError(path: path(), "not a boolean")
        }
    }

    /// True when a string node equals `text` once decoded.
    func stringEquals(_ n: JSONNode, _ text: [UInt8]) -> Bool {
        n.kind == .string && JSONParser.stringEquals(b, n, text)
    }

    /// The index in `table` of a string node's decoded text, or nil.
    func index(of n: JSONNode, in table: KeyTable) -> Int? {
        n.stringFlags.contains(.escaped) ? table.index(of: JSONParser.decodeString(b, n)) : table.index(of: b, n.contentRange)
    }

    /// The value slots of an object's known keys: `slots[k]` is the tape index of the value of
    /// key `k` of `table` (its last occurrence, as PostgreSQL's jsonb keeps the last), else -1.
    func resolve(_ tape: [JSONNode], object index: Int, _ table: KeyTable, into slots: inout [Int]) {
        for k in slots.indices { slots[k] = -1 }
        let object = tape[index]
        var k = index + 1
        while k < object.after {
            if let found = self.index(of: tape[k], in: table) { slots[found] = k + 1 }
            k = tape[k + 1].after
        }
    }

    /// Refuses what would make PostgreSQL's `::jsonb` cast of `tape[range]` fail: `\u0000` or an
    /// unpaired surrogate in a string or key, a number outside numeric's range.
    func checkJSONB(_ tape: [JSONNode], _ range: Range<Int>, _ path: @autoclosure () -> String) throws(StrideePayloadError) {
        for k in range {
            let n = tape[k]
            switch n.kind {
            case .string: try checkEscapes(n, path())
            case .number where n.numberInfo.contains(.outOfRange):
                throw StrideePayloadError(path: path(), "holds \(literal(n)), beyond PostgreSQL's numeric range")
            default: break
            }
        }
    }

    /// Refuses a string node holding `\u0000` or an unpaired surrogate escape.
    func checkEscapes(_ n: JSONNode, _ path: @autoclosure () -> String) throws(StrideePayloadError) {
        let flags = n.stringFlags
        if flags.contains(.nulEscape) { throw StrideePayloadError(path: path(), "contains the escape \\u0000") }
        if flags.contains(.loneSurrogate) { throw StrideePayloadError(path: path(), "contains an unpaired surrogate escape") }
    }

    /// A range bound as a person writes it: `-90`, `100`, `0.5`.
    private static func bound(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }
}
