/// Walks a JSON document's outer containers member by member and element by element, handing
/// each value to `JSONParser` on its own reused tape.
///
/// `JSONParser.parse` keeps a 32-byte node per value: for a route point of ~150 bytes that is
/// ~17 nodes, so a tape of the whole 30 MiB body would be several times the body. Walking the
/// top-level object and its big arrays here, and parsing one element at a time, keeps memory to
/// the body and the decoded columns. The grammar is JSONParser's (RFC 8259, strict).
struct JSONCursor {
    private let b: UnsafeBufferPointer<UInt8>
    private let end: Int
    /// The offset of the next byte to read.
    private(set) var offset: Int

    /// A cursor over `bytes` starting at `offset`.
    init(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) {
        b = bytes
        end = bytes.count
        self.offset = offset
    }

    /// How many elements the array just entered holds, at most `remaining bytes / minimumBytes`
    /// (the shortest valid element's size): what to reserve before decoding them, so the
    /// columns hold no growth slack. Counts commas outside strings at the array's own depth; a
    /// malformed array is refused later by the decoding itself.
    func elementCount(minimumBytes: Int) -> Int {
        var depth = 0, commas = 0, any = false, inString = false, escaped = false
        var k = offset
        scan: while k < end {
            let c = b[k]
            k += 1
            if inString {
                if escaped { escaped = false } else if c == 0x5C { escaped = true } else if c == 0x22 { inString = false }
                continue
            }
            switch c {
            case 0x22: inString = true; any = true
            case 0x5B, 0x7B: depth += 1; any = true
            case 0x5D, 0x7D:
                if depth == 0 { break scan }
                depth -= 1
            case 0x2C: if depth == 0 { commas += 1 }
            case 0x20, 0x0A, 0x0D, 0x09: break
            default: any = true
            }
        }
        return min(any ? commas + 1 : 0, (end - offset) / max(1, minimumBytes))
    }

    /// Skips JSON whitespace.
    @inline(__always)
    mutating func skipWhitespace() {
        while offset < end {
            let c = b[offset]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            offset += 1
        }
    }

    /// When the next value is a container opened by `bracket` (`{` or `[`), consumes the bracket and
    /// returns true; otherwise moves nothing and returns false.
    mutating func enter(_ bracket: UInt8) -> Bool {
        skipWhitespace()
        guard offset < end, b[offset] == bracket else { return false }
        offset += 1
        return true
    }

    /// The next member's key in the object being walked (its node, decoded by the caller), with the
    /// cursor left at the member's value; nil once the object's `}` is consumed.
    mutating func nextKey(_ isFirst: inout Bool, depth: Int, tape: inout [JSONNode]) throws(StrideePayloadError) -> JSONNode? {
        skipWhitespace()
        guard offset < end else { throw syntaxError("unexpected end of the body inside an object", at: offset) }
        if b[offset] == UInt8(ascii: "}") {
            offset += 1
            return nil
        }
        if isFirst {
            isFirst = false
        } else {
            guard b[offset] == UInt8(ascii: ",") else { throw syntaxError("expected ',' or '}' in an object", at: offset) }
            offset += 1
            skipWhitespace()
        }
        guard offset < end, b[offset] == UInt8(ascii: "\"") else { throw syntaxError("expected a string key", at: offset) }
        _ = try value(depth: depth, into: &tape)
        let key = tape[0]
        skipWhitespace()
        guard offset < end, b[offset] == UInt8(ascii: ":") else { throw syntaxError("expected ':' after a key", at: offset) }
        offset += 1
        skipWhitespace()
        return key
    }

    /// True with the cursor at the next element of the array being walked; false once its `]` is consumed.
    mutating func nextElement(_ isFirst: inout Bool) throws(StrideePayloadError) -> Bool {
        skipWhitespace()
        guard offset < end else { throw syntaxError("unexpected end of the body inside an array", at: offset) }
        if isFirst {
            isFirst = false
            if b[offset] == UInt8(ascii: "]") {
                offset += 1
                return false
            }
            return true
        }
        if b[offset] == UInt8(ascii: "]") {
            offset += 1
            return false
        }
        guard b[offset] == UInt8(ascii: ",") else { throw syntaxError("expected ',' or ']' in an array", at: offset) }
        offset += 1
        skipWhitespace()
        return true
    }

    /// Parses the value at the cursor, nested `depth` containers deep, into `tape` (`tape[0]` is
    /// the value) and moves past it; returns the value's byte range.
    @discardableResult
    mutating func value(depth: Int, into tape: inout [JSONNode]) throws(StrideePayloadError) -> Range<Int> {
        skipWhitespace()
        let start = offset
        do {
            offset = try JSONParser.parseValue(b, at: offset, end: end, depth: depth, into: &tape)
        } catch {
            throw StrideePayloadError(path: "", "\(error)")
        }
        return start..<offset
    }

    /// Moves past the container (`{…}` or `[…]`) at the cursor by its brackets alone, strings
    /// respected, without parsing what it holds: a decoder that must see an object's other
    /// members before reading a large array among them comes back to it with a second cursor,
    /// which checks its syntax then. Returns the container's range.
    @discardableResult
    mutating func skipContainer() throws(StrideePayloadError) -> Range<Int> {
        skipWhitespace()
        let start = offset
        var depth = 0, inString = false, escaped = false
        while offset < end {
            let c = b[offset]
            offset += 1
            if inString {
                if escaped { escaped = false } else if c == 0x5C { escaped = true } else if c == 0x22 { inString = false }
                continue
            }
            switch c {
            case 0x22: inString = true
            case 0x5B, 0x7B: depth += 1
            case 0x5D, 0x7D:
                depth -= 1
                if depth == 0 { return start..<offset }
                if depth < 0 { throw syntaxError("unbalanced bracket", at: offset - 1) }
            default: break
            }
        }
        throw syntaxError("unexpected end of the body inside a container", at: start)
    }

    /// Checks that nothing but whitespace follows the top-level value.
    mutating func finish() throws(StrideePayloadError) {
        skipWhitespace()
        if offset < end { throw syntaxError("unexpected content after the top-level value", at: offset) }
    }

    /// The same wording as `JSONParser`'s errors: byte offset, line and column.
    func syntaxError(_ what: String, at offset: Int) -> StrideePayloadError {
        let (line, column) = PayloadDecoder.lineAndColumn(b, offset: offset)
        return StrideePayloadError(path: "", "not valid JSON at byte \(offset) (line \(line), column \(column)): \(what)")
    }
}
