/// One value of a parsed JSON document, with the exact byte range it occupies.
///
/// Nodes are laid out in document order on a flat tape: a container's children follow it, an
/// object's as alternating key and value nodes, and `after` is the index just past its subtree.
struct JSONNode {
    /// The JSON value type.
    enum Kind: UInt8 {
        case object, array, string, number, `true`, `false`, null
    }

    /// Escape facts about a string node (PostgreSQL's jsonb rejects `\u0000` and unpaired surrogates).
    struct StringFlags: OptionSet {
        let rawValue: UInt8
        /// Contains at least one backslash escape.
        static let escaped = StringFlags(rawValue: 1 << 0)
        /// Contains the escape `\u0000`.
        static let nulEscape = StringFlags(rawValue: 1 << 1)
        /// Contains a `\uD800`–`\uDFFF` escape that is not part of a high/low pair.
        static let loneSurrogate = StringFlags(rawValue: 1 << 2)
    }

    var kind: Kind
    /// `StringFlags` for strings, `JSONNumberInfo` for numbers.
    var flags: UInt8
    /// Offset of the value's first byte (the quote of a string, the brace of an object).
    var start: Int
    /// Offset just past the value's last byte.
    var end: Int
    /// Index of the first node after this node's subtree.
    var after: Int

    var stringFlags: StringFlags { StringFlags(rawValue: flags) }
    var numberInfo: JSONNumberInfo { JSONNumberInfo(rawValue: flags) }
    /// The byte range of a string's contents, between its quotes.
    var contentRange: Range<Int> { (start + 1)..<(end - 1) }
}

/// A strict RFC 8259 parser over UTF-8 bytes that records where every value is.
///
/// Strict: no NaN/Infinity, no trailing commas, no comments, no raw control characters in
/// strings, nothing after the top-level value but whitespace, nesting at most `maxDepth`.
/// Bytes inside strings are assumed to be valid UTF-8 (callers validate the body first).
struct JSONParser {
    /// Containers nested deeper than this make the body invalid (deeper than 64: `400`).
    static let maxDepth = 64

    private let b: UnsafeBufferPointer<UInt8>
    private let end: Int
    private var i: Int
    /// The parsed tape.
    private(set) var nodes: [JSONNode]

    /// Parses `bytes[range]` as one JSON text; `nodes[0]` is the top-level value.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, reusing storage: [JSONNode] = []) throws(PayloadError) -> [JSONNode] {
        var parser = JSONParser(b: bytes, end: range.upperBound, i: range.lowerBound, nodes: storage)
        parser.nodes.removeAll(keepingCapacity: true)
        if parser.nodes.capacity == 0 { parser.nodes.reserveCapacity(max(16, range.count / 10)) }
        parser.skipWhitespace()
        guard parser.i < parser.end else { throw parser.error("the body is empty", at: parser.i) }
        try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        if parser.i < parser.end { throw parser.error("unexpected content after the top-level value", at: parser.i) }
        return parser.nodes
    }

    private init(b: UnsafeBufferPointer<UInt8>, end: Int, i: Int, nodes: [JSONNode]) {
        self.b = b
        self.end = end
        self.i = i
        self.nodes = nodes
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while i < end {
            let c = b[i]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            i += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(PayloadError) {
        guard i < end else { throw error("unexpected end of the body", at: i) }
        let c = b[i]
        switch c {
        case UInt8(ascii: "{"):
            try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            try parseString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let (numberEnd, info) = JSONNumber.scan(b, from: i, to: end) else {
                throw error("malformed number", at: i)
            }
            nodes.append(JSONNode(kind: .number, flags: info.rawValue, start: i, end: numberEnd, after: nodes.count + 1))
            i = numberEnd
        case UInt8(ascii: "t"):
            try literal("true", .true)
        case UInt8(ascii: "f"):
            try literal("false", .false)
        case UInt8(ascii: "n"):
            try literal("null", .null)
        default:
            throw error("unexpected character \(PayloadDecoder.describeByte(c)); expected a value", at: i)
        }
    }

    private mutating func literal(_ word: StaticString, _ kind: JSONNode.Kind) throws(PayloadError) {
        let count = word.utf8CodeUnitCount
        let w = UnsafeBufferPointer(start: word.utf8Start, count: count)
        guard end - i >= count else { throw error("unexpected value; expected a value", at: i) }
        for k in 0..<count where b[i + k] != w[k] {
            throw error("unexpected value; expected a value", at: i)
        }
        nodes.append(JSONNode(kind: kind, flags: 0, start: i, end: i + count, after: nodes.count + 1))
        i += count
    }

    private mutating func parseObject(depth: Int) throws(PayloadError) {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)", at: i) }
        let index = nodes.count
        nodes.append(JSONNode(kind: .object, flags: 0, start: i, end: i, after: 0))
        i += 1
        skipWhitespace()
        if i < end && b[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                guard i < end, b[i] == UInt8(ascii: "\"") else { throw error("expected a string key", at: i) }
                try parseString()
                skipWhitespace()
                guard i < end, b[i] == UInt8(ascii: ":") else { throw error("expected ':' after a key", at: i) }
                i += 1
                skipWhitespace()
                try parseValue(depth: depth)
                skipWhitespace()
                guard i < end else { throw error("unexpected end of the body inside an object", at: i) }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    skipWhitespace()
                    continue
                }
                if b[i] == UInt8(ascii: "}") {
                    i += 1
                    break
                }
                throw error("expected ',' or '}' in an object", at: i)
            }
        }
        nodes[index].end = i
        nodes[index].after = nodes.count
    }

    private mutating func parseArray(depth: Int) throws(PayloadError) {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)", at: i) }
        let index = nodes.count
        nodes.append(JSONNode(kind: .array, flags: 0, start: i, end: i, after: 0))
        i += 1
        skipWhitespace()
        if i < end && b[i] == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                try parseValue(depth: depth)
                skipWhitespace()
                guard i < end else { throw error("unexpected end of the body inside an array", at: i) }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    skipWhitespace()
                    continue
                }
                if b[i] == UInt8(ascii: "]") {
                    i += 1
                    break
                }
                throw error("expected ',' or ']' in an array", at: i)
            }
        }
        nodes[index].end = i
        nodes[index].after = nodes.count
    }

    private mutating func parseString() throws(PayloadError) {
        let start = i
        var flags: JSONNode.StringFlags = []
        i += 1
        while true {
            guard i < end else { throw error("unterminated string", at: start) }
            let c = b[i]
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                flags.insert(.escaped)
                try parseEscape(&flags)
                continue
            }
            if c < 0x20 {
                throw error("raw control character \(PayloadDecoder.describeByte(c)) in a string", at: i)
            }
            i += 1
        }
        i += 1
        nodes.append(JSONNode(kind: .string, flags: flags.rawValue, start: start, end: i, after: nodes.count + 1))
    }

    /// Parses the escape at `i` (a backslash) and moves past it.
    private mutating func parseEscape(_ flags: inout JSONNode.StringFlags) throws(PayloadError) {
        let at = i
        guard i + 1 < end else { throw error("unterminated string", at: at) }
        switch b[i + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
             UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            i += 2
        case UInt8(ascii: "u"):
            guard let unit = Self.hex4(b, i + 2, end) else { throw error("malformed \\u escape", at: at) }
            i += 6
            if unit == 0 {
                flags.insert(.nulEscape)
            } else if unit >= 0xD800 && unit <= 0xDBFF {
                if i + 1 < end, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u"),
                   let low = Self.hex4(b, i + 2, end), low >= 0xDC00 && low <= 0xDFFF {
                    i += 6
                } else {
                    flags.insert(.loneSurrogate)
                }
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                flags.insert(.loneSurrogate)
            }
        default:
            throw error("invalid escape in a string", at: at)
        }
    }

    /// The UTF-16 unit of four hex digits at `at`, or nil.
    static func hex4(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ end: Int) -> UInt16? {
        guard at + 4 <= end else { return nil }
        var v: UInt16 = 0
        for k in 0..<4 {
            let c = b[at + k]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt16(d)
        }
        return v
    }

    private func error(_ what: String, at offset: Int) -> PayloadError {
        let (line, column) = PayloadDecoder.lineAndColumn(b, offset: offset)
        return PayloadError(what, problem: .invalidJSON, at: PayloadLocation(line: line, column: column, byteOffset: offset))
    }
}

extension JSONParser {
    /// The decoded text of a string node (escapes resolved; an unpaired surrogate becomes U+FFFD).
    static func decodeString(_ b: UnsafeBufferPointer<UInt8>, _ node: JSONNode) -> String {
        let range = node.contentRange
        if !node.stringFlags.contains(.escaped) {
            return String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let c = b[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            let e = b[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                let unit = hex4(b, i, range.upperBound) ?? 0xFFFD
                i += 4
                var scalar = Unicode.Scalar(0xFFFD as UInt32)!
                if unit >= 0xD800 && unit <= 0xDBFF {
                    if i + 6 <= range.upperBound, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u"),
                       let low = hex4(b, i + 2, range.upperBound), low >= 0xDC00 && low <= 0xDFFF {
                        i += 6
                        let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        scalar = Unicode.Scalar(value) ?? scalar
                    }
                } else if let s = Unicode.Scalar(UInt32(unit)) {
                    scalar = s
                }
                scalars.removeAll(keepingCapacity: true)
                scalars.append(scalar)
                out.append(contentsOf: String(scalars).utf8)
            default: out.append(e)  // " \ /
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when the string node's decoded text equals `text`'s UTF-8 bytes (the Stridee
    /// decoders compare a `format` or a kind without building a String).
    static func stringEquals(_ b: UnsafeBufferPointer<UInt8>, _ node: JSONNode, _ text: [UInt8]) -> Bool {
        if node.stringFlags.contains(.escaped) {
            return Array(decodeString(b, node).utf8) == text
        }
        let range = node.contentRange
        guard range.count == text.count else { return false }
        return text.withUnsafeBufferPointer { t in
            memoryEquals(b, range.lowerBound, t, 0, text.count)
        }
    }
}

/// Byte equality of two buffer regions.
@inline(__always)
func memoryEquals(_ a: UnsafeBufferPointer<UInt8>, _ aStart: Int, _ b: UnsafeBufferPointer<UInt8>, _ bStart: Int, _ count: Int) -> Bool {
    var k = 0
    while k < count {
        if a[aStart + k] != b[bStart + k] { return false }
        k += 1
    }
    return true
}

extension JSONParser {
    /// Parses the one JSON value that starts exactly at `offset`, nested `depth` containers deep,
    /// into `tape` (cleared first, its storage reused); returns the offset just past the value.
    ///
    /// For walking a large document a piece at a time (the Stridee decoders), so a 30 MiB body
    /// never needs a tape of its own: the same strictness and depth limit as `parse`.
    static func parseValue(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, end: Int, depth: Int,
                           into tape: inout [JSONNode]) throws(PayloadError) -> Int {
        var parser = JSONParser(b: bytes, end: end, i: offset, nodes: [])
        swap(&parser.nodes, &tape)
        parser.nodes.removeAll(keepingCapacity: true)
        defer { swap(&parser.nodes, &tape) }
        try parser.parseValue(depth: depth)
        return parser.i
    }
}
