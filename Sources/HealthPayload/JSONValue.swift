/// A JSON value as a tree, read with `JSONParser` (strict RFC 8259) or built, and written back
/// as JSON text: for small documents such as protocol messages, not for bodies of samples
/// (their decoders walk `JSONParser`'s tape instead).
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// A number as its JSON literal text, kept exactly as written (a JSON-RPC id comes back
    /// as it was sent); build one from a `Double` with `number(_:)`.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order; looking a key up finds its last occurrence.
    case object([(key: String, value: JSONValue)])
    /// JSON text made elsewhere (PostgreSQL's `json_agg`, say), written as it is; parsing
    /// never makes one.
    case raw(String)

    /// Reads one JSON text from UTF-8 bytes; refuses invalid UTF-8 and anything RFC 8259 refuses.
    public static func parse(_ bytes: [UInt8]) throws(PayloadError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(PayloadError) -> JSONValue in
            let tape = try tape(b)
            return value(tape, 0, b)
        }
    }

    /// The members of each object of a JSON array, each as its key and its value's JSON text
    /// exactly as written: for passing objects on with few of their members read (a tree of every
    /// value, written back, costs ~20 µs an object of ~500 bytes). Refuses what `parse` refuses;
    /// nil when the text is not an array of objects.
    public static func membersOfEachObject(_ bytes: [UInt8]) throws(PayloadError) -> [[(key: String, text: ArraySlice<UInt8>)]]? {
        try bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(PayloadError) -> [[(key: String, text: ArraySlice<UInt8>)]]? in
            let tape = try tape(b)
            guard tape[0].kind == .array else { return nil }
            var objects: [[(key: String, text: ArraySlice<UInt8>)]] = []
            var element = 1
            while element < tape[0].after {
                guard tape[element].kind == .object else { return nil }
                var members: [(key: String, text: ArraySlice<UInt8>)] = []
                var child = element + 1
                while child < tape[element].after {
                    let value = tape[child + 1]
                    members.append((JSONParser.decodeString(b, tape[child]), bytes[value.start..<value.end]))
                    child = value.after
                }
                objects.append(members)
                element = tape[element].after
            }
            return objects
        }
    }

    /// The text of a string value written as `json` (a value `membersOfEachObject` handed on);
    /// nil for a value of any other type.
    public static func string(_ json: ArraySlice<UInt8>) -> String? {
        guard json.count >= 2, json.first == UInt8(ascii: "\""), json.last == UInt8(ascii: "\"") else { return nil }
        let inner = json.dropFirst().dropLast()
        if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
        return (try? parse(Array(json)))?.stringValue
    }

    /// The parsed tape of one JSON text, refusing invalid UTF-8 (with where) and anything RFC 8259 refuses.
    private static func tape(_ b: UnsafeBufferPointer<UInt8>) throws(PayloadError) -> [JSONNode] {
        if let bad = UTF8Validation.firstInvalidOffset(b, in: 0..<b.count) {
            let (line, column) = PayloadDecoder.lineAndColumn(b, offset: bad)
            throw PayloadError("invalid UTF-8", problem: .invalidJSON, at: PayloadLocation(line: line, column: column, byteOffset: bad))
        }
        return try JSONParser.parse(b, range: 0..<b.count)
    }

    private static func value(_ tape: [JSONNode], _ index: Int, _ b: UnsafeBufferPointer<UInt8>) -> JSONValue {
        let node = tape[index]
        switch node.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .string: return .string(JSONParser.decodeString(b, node))
        case .number: return .number(String(decoding: UnsafeBufferPointer(rebasing: b[node.start..<node.end]), as: UTF8.self))
        case .array:
            var items: [JSONValue] = []
            var child = index + 1
            while child < node.after {
                items.append(value(tape, child, b))
                child = tape[child].after
            }
            return .array(items)
        case .object:
            var members: [(key: String, value: JSONValue)] = []
            var child = index + 1
            while child < node.after {
                let key = JSONParser.decodeString(b, tape[child])
                members.append((key, value(tape, child + 1, b)))
                child = tape[child + 1].after
            }
            return .object(members)
        }
    }

    /// A finite number in Swift's shortest round-trip form, integral values without a
    /// fraction (`3`, not `3.0`); a non-finite one is `null` (JSON has no NaN).
    public static func number(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .null }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return .number(String(Int64(value))) }
        return .number(value.description)
    }

    /// An object's member `key` (its last occurrence); nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// The text of a string value.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value of a number.
    public var doubleValue: Double? {
        if case .number(let literal) = self { return Double(literal) }
        return nil
    }

    /// The JSON text of the value, without whitespace (a message fits on one line).
    public var text: String {
        var out: [UInt8] = []
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the JSON text of the value to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let literal), .raw(let literal): out.append(contentsOf: literal.utf8)
        case .string(let text): JSONString.append(quoting: text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(quoting: member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
