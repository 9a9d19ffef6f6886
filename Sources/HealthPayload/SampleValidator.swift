/// The sample keys this version knows (reference "The sample object"), in the order CSV samples are built.
enum SampleKey: Int, CaseIterable {
    case uuid, id, type, group, source, start, end, kind
    case value, unit, name
    case activityType, activityName, durationSeconds, distanceMeters, activeEnergyKilocalories

    /// The key as spelled in JSON and in the CSV header.
    var name: String {
        switch self {
        case .uuid: "uuid"
        case .id: "id"
        case .type: "type"
        case .group: "group"
        case .source: "source"
        case .start: "start"
        case .end: "end"
        case .kind: "kind"
        case .value: "value"
        case .unit: "unit"
        case .name: "name"
        case .activityType: "activityType"
        case .activityName: "activityName"
        case .durationSeconds: "durationSeconds"
        case .distanceMeters: "distanceMeters"
        case .activeEnergyKilocalories: "activeEnergyKilocalories"
        }
    }

    /// Lookup by bytes.
    static let table = KeyTable(allCases.map(\.name))
}

/// The three kinds of version 1 (reference "The sample object"); any other kind is stored as is.
enum SampleKind {
    case quantity, category, workout, other

    init(_ text: String) {
        switch text {
        case "quantity": self = .quantity
        case "category": self = .category
        case "workout": self = .workout
        default: self = .other
        }
    }

    /// The kind of a string node, comparing bytes when there are no escapes.
    init(_ b: UnsafeBufferPointer<UInt8>, _ node: JSONNode) {
        if node.stringFlags.contains(.escaped) {
            self.init(JSONParser.decodeString(b, node))
            return
        }
        switch Self.table.index(of: b, node.contentRange) {
        case 0: self = .quantity
        case 1: self = .category
        case 2: self = .workout
        default: self = .other
        }
    }

    private static let table = KeyTable(["quantity", "category", "workout"])
}

/// Decides whether one parsed sample object keeps the contract and is safe for PostgreSQL.
///
/// The same rules serve JSON samples and the objects built from CSV rows. A nil answer means
/// valid; otherwise the answer is the quarantine reason, naming the key and what is wrong.
/// Besides types and shapes: every text that reaches an index at most `TextLimit.maxBytes`
/// (`type`, `source`, `unit`, `name`, `activityName`), and the values and instants within
/// `Plausibility`'s bounds, `latest` being the first implausible instant of this decode.
enum SampleValidator {
    /// The quarantine reason for the value at `nodes[index]`, or nil when it is a valid sample.
    static func reason(_ b: UnsafeBufferPointer<UInt8>, _ nodes: [JSONNode], _ index: Int, latest: Int64) -> String? {
        let object = nodes[index]
        guard object.kind == .object else { return "sample is not an object" }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: SampleKey.allCases.count) { slots in
            slots.initialize(repeating: -1)
            // Where a key repeats, the last occurrence counts (as PostgreSQL jsonb does).
            var k = index + 1
            while k < object.after {
                let key = nodes[k]
                let found: Int? = key.stringFlags.contains(.escaped)
                    ? SampleKey.table.index(of: JSONParser.decodeString(b, key))
                    : SampleKey.table.index(of: b, key.contentRange)
                if let found { slots[found] = k + 1 }
                k = nodes[k + 1].after
            }
            return contractReason(b, nodes, slots, latest: latest) ?? postgresReason(b, nodes, index)
        }
    }

    private static let commonKeys: [SampleKey] = [.uuid, .id, .type, .group, .source, .start, .end, .kind]
    private static let optionalKeys: [SampleKey] = [.value, .unit, .name, .activityType, .activityName, .durationSeconds, .distanceMeters, .activeEnergyKilocalories]

    /// Required keys, their types, and the per-kind rules.
    private static func contractReason(_ b: UnsafeBufferPointer<UInt8>, _ nodes: [JSONNode], _ slots: UnsafeMutableBufferPointer<Int>,
                                       latest: Int64) -> String? {
        func node(_ key: SampleKey) -> JSONNode? {
            let slot = slots[key.rawValue]
            return slot < 0 ? nil : nodes[slot]
        }
        // The eight keys every sample carries, all strings.
        for key in commonKeys {
            guard let n = node(key) else { return "\(key.name) is missing" }
            if n.kind == .null { return "\(key.name) is null" }
            if n.kind != .string { return "\(key.name) is not a string" }
        }
        for key in [SampleKey.type, .source] {
            if let reason = lengthReason(b, node(key)!, key) { return reason }
        }
        let uuid = node(.uuid)!
        let uuidValid = uuid.stringFlags.contains(.escaped)
            ? UUIDText.isValid(JSONParser.decodeString(b, uuid))
            : UUIDText.isValid(b, uuid.contentRange)
        if !uuidValid { return "uuid is not a UUID" }
        var span: [Int64] = []
        for key in [SampleKey.start, .end] {
            guard let stamp = timestamp(b, node(key)!) else {
                return "\(key.name) is not a timestamp like 2026-08-21T10:25:30.000+02:00"
            }
            if let reason = Plausibility.instantReason(milliseconds: stamp.millisecondsSinceEpoch, latest: latest) {
                return "\(key.name) \(reason)"
            }
            span.append(stamp.millisecondsSinceEpoch)
        }
        if let reason = Plausibility.spanReason(start: span[0], end: span[1]) { return reason }
        let kindNode = node(.kind)!
        let kind = SampleKind(b, kindNode)
        // Built only for a reason, never for a valid sample.
        var suffix: String { " (kind \(PayloadDecoder.snippet(JSONParser.decodeString(b, kindNode))))" }

        // Keys each known kind always carries (one rule with the export's records).
        let required = SampleRequirement.keys(of: kind)
        for key in required where node(key) == nil {
            return SampleRequirement.missingReason(key, kind: PayloadDecoder.snippet(JSONParser.decodeString(b, kindNode)))
        }

        // Every known key that is present has its one type, whatever the kind.
        for key in optionalKeys {
            guard let n = node(key) else { continue }
            var keySuffix: String { key == .value || required.contains(key) ? suffix : "" }
            if n.kind == .null { return "\(key.name) is null\(keySuffix)" }
            switch key {
            case .unit, .name, .activityName:
                if n.kind != .string { return "\(key.name) is not a string" }
                if let reason = lengthReason(b, n, key) { return reason }
            case .activityType:
                if let reason = int32Reason(b, n, key, keySuffix) { return reason }
            case .durationSeconds, .distanceMeters, .activeEnergyKilocalories:
                if n.kind != .number { return "\(key.name) is not a number\(keySuffix)" }
                if let reason = doubleReason(n, key, keySuffix) { return reason }
                let number = JSONNumber.doubleValue(b, n.start..<n.end)
                if let reason = Plausibility.valueReason(key.name, number, Plausibility.workoutTotals) { return reason }
            case .value:
                switch kind {
                case .quantity:
                    if n.kind != .number { return "value is not a number\(keySuffix)" }
                    if let reason = doubleReason(n, key, keySuffix) { return reason }
                    if let reason = plausibleValueReason(b, n, type: node(.type)!) { return reason }
                case .category:
                    if let reason = int32Reason(b, n, key, keySuffix) { return reason }
                case .workout, .other:
                    // Not defined for these kinds: kept as sent, but a number must still cast to double precision.
                    if n.kind == .number, let reason = doubleReason(n, key, keySuffix) { return reason }
                }
            default:
                break
            }
        }
        return nil
    }

    /// Anything in the object that would make PostgreSQL's `::jsonb` cast fail.
    private static func postgresReason(_ b: UnsafeBufferPointer<UInt8>, _ nodes: [JSONNode], _ index: Int) -> String? {
        let object = nodes[index]
        var k = index + 1
        while k < object.after {
            let key = nodes[k]
            let valueEnd = nodes[k + 1].after
            if key.stringFlags.contains(.nulEscape) { return "a key contains the escape \\u0000" }
            if key.stringFlags.contains(.loneSurrogate) { return "a key contains an unpaired surrogate escape" }
            var j = k + 1
            while j < valueEnd {
                let n = nodes[j]
                if n.kind == .string {
                    let flags = n.stringFlags
                    if flags.contains(.nulEscape) { return "\(keyName(b, key)) contains the escape \\u0000" }
                    if flags.contains(.loneSurrogate) { return "\(keyName(b, key)) contains an unpaired surrogate escape" }
                } else if n.kind == .number {
                    let info = n.numberInfo
                    if info.contains(.outOfRange) {
                        return "\(keyName(b, key)) holds a number beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits"
                    }
                    if info.contains(.notFinite) { return "\(keyName(b, key)) holds a number that is not finite as double precision" }
                }
                j += 1
            }
            k = valueEnd
        }
        return nil
    }

    private static func keyName(_ b: UnsafeBufferPointer<UInt8>, _ key: JSONNode) -> String {
        PayloadDecoder.snippet(JSONParser.decodeString(b, key))
    }

    private static func timestamp(_ b: UnsafeBufferPointer<UInt8>, _ n: JSONNode) -> Timestamp? {
        if n.stringFlags.contains(.escaped) { return Timestamp(JSONParser.decodeString(b, n)) }
        return Timestamp(utf8: UnsafeBufferPointer(rebasing: b[n.contentRange]))
    }

    /// `source is 2800 bytes, at most 1024` when a string's decoded text is over `TextLimit`.
    /// Escapes only ever shorten what is written, so a short written text needs no decoding.
    private static func lengthReason(_ b: UnsafeBufferPointer<UInt8>, _ n: JSONNode, _ key: SampleKey) -> String? {
        let written = n.contentRange.count
        guard written > TextLimit.maxBytes else { return nil }
        let bytes = n.stringFlags.contains(.escaped) ? JSONParser.decodeString(b, n).utf8.count : written
        return TextLimit.excess(byteCount: bytes).map { "\(key.name) is \($0)" }
    }

    /// Why a quantity's value is outside its type's plausible range (`Plausibility`), if it is.
    private static func plausibleValueReason(_ b: UnsafeBufferPointer<UInt8>, _ n: JSONNode, type: JSONNode) -> String? {
        let range = type.stringFlags.contains(.escaped)
            ? Plausibility.range(of: JSONParser.decodeString(b, type))
            : Plausibility.range(of: b, type.contentRange)
        let value = JSONNumber.doubleValue(b, n.start..<n.end)
        guard let range, !range.contains(value) else { return nil }
        return Plausibility.valueReason("value", value, range, of: JSONParser.decodeString(b, type))
    }

    /// Why a value cast to PostgreSQL `integer` would fail or mean something else.
    private static func int32Reason(_ b: UnsafeBufferPointer<UInt8>, _ n: JSONNode, _ key: SampleKey, _ suffix: @autoclosure () -> String) -> String? {
        guard n.kind == .number, n.numberInfo.contains(.integer) else { return "\(key.name) is not an integer\(suffix())" }
        guard JSONNumber.int32Value(b, n.start..<n.end) != nil else { return "\(key.name) does not fit a 32-bit integer\(suffix())" }
        return nil
    }

    /// Why a number cast to PostgreSQL `double precision` would fail, or could overflow the rollups'
    /// sums (`value`, `durationSeconds`, `distanceMeters`, `activeEnergyKilocalories` are summed or
    /// averaged per day: above 1e15 two values, or their float8 → numeric → float8 round trip, can
    /// leave `double precision`, and `store_batch` would fail with 22003 on every retry).
    private static func doubleReason(_ n: JSONNode, _ key: SampleKey, _ suffix: @autoclosure () -> String) -> String? {
        let info = n.numberInfo
        if info.contains(.outOfRange) {
            return "\(key.name) is beyond PostgreSQL's numeric range: exponent outside ±1000 or over 1000 digits\(suffix())"
        }
        if info.contains(.notFinite) { return "\(key.name) is not finite as double precision\(suffix())" }
        if info.contains(.tiny) { return "\(key.name) is non-zero and below 1e-300 in magnitude, which PostgreSQL double precision rejects\(suffix())" }
        if info.contains(.huge) { return "\(key.name) is beyond ±1e15 in magnitude, more than the daily rollups sum\(suffix())" }
        return nil
    }
}
