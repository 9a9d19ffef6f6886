/// The bytes of an export document or a GPX file on their way to libxml2 (`XMLStreamParser`
/// runs every byte through it): repaired, and bounded. Line numbers stay those of the file, so
/// whatever is skipped is named by its own line.
///
/// - **Control characters XML forbids** (C0 controls but tab, line feed and carriage return;
///   `\x0b` has been seen in device and metadata strings) become spaces, so the record that
///   carries one is read instead of lost.
/// - **The DTD is dropped.** Apple has shipped exports whose internal DTD subset is broken —
///   iOS 16's unclosed `<!ATTLIST`, a stray `>` — and libxml2 gives up on such a document
///   before its first element. Nothing in an export needs the DTD (no defaults, no entities),
///   so everything from `<!DOCTYPE` to the root element's `<` is left out but its line breaks,
///   however long it is.
/// - **No token is longer than `tokenLimit`**: a start tag with its attributes, an end tag, a
///   comment, a processing instruction, a CDATA section, a declaration, a run of text.
///   libxml2's push parser holds a whole start tag or comment before it parses it and scans
///   its buffer again for each chunk that does not complete it, so one attribute of 256 MiB
///   took a gigabyte and minutes (time growing with the square of its length). Markup is held
///   here until it ends, at most `tokenLimit` bytes; beyond that it is dropped to its end (its
///   line breaks kept, after it) and reported where it stood (`Piece`): a start tag gives way
///   to its bare element (`<Record>`, `<Record/>`), so that the element is skipped and named
///   with its line. A run of text keeps its first `tokenLimit` bytes.
struct XMLInputFilter {
    /// The longest token passed to libxml2.
    static let tokenLimit = 1 << 20

    /// What the filter hands on, in order.
    enum Piece {
        /// Bytes for libxml2 (valid during the call only).
        case bytes(UnsafeRawBufferPointer)
        /// The next element, `name` at `line`, had a start tag over the limit: it comes bare.
        case oversizedStart(name: String, line: Int, reason: String)
        /// Something over the limit was left out at `line`.
        case oversized(line: Int, reason: String)
    }

    private enum Mode { case outside, doctype, markup, dropping, droppingText }
    private enum Kind { case pending, startTag, endTag, comment, cdata, pi, declaration }

    private var mode = Mode.outside
    private var kind = Kind.pending
    /// True once the root element began (a DOCTYPE after it is not dropped).
    private var seenRoot = false
    /// A markup token's bytes from earlier chunks (at most `tokenLimit`).
    private var held: [UInt8] = []
    /// Bytes of the current token or run of text, its first line, and its line breaks.
    private var length = 0
    private var startLine = 1
    private var tokenNewlines = 0
    /// A token's first bytes, until its kind is known (`<!DOCTYPE` is the longest asked).
    private var prefix: [UInt8] = []
    /// A tag's element name (its first 256 bytes), and whether it has ended.
    private var name: [UInt8] = []
    private var nameDone = false
    /// Start tags: the quote of the attribute value open, a `=` just read, and the last byte
    /// outside values (a `/` before `>` closes the element).
    private var quote: UInt8 = 0
    private var afterEquals = false
    private var lastOutside: UInt8 = 0
    /// The two bytes before the current one (`-->`, `?>`, `]]>`).
    private var previous: (UInt8, UInt8) = (0, 0)
    /// The run of text so far is white space.
    private var blank = true
    /// In the DTD: a `<` just read (the root element's, when a name follows).
    private var lessThan = false
    private var newlines = 0
    private var out: [UInt8] = []

    /// The line the input has reached (1 + line breaks so far).
    var lines: Int { newlines + 1 }
    /// Control characters replaced by spaces.
    private(set) var replacedControls = 0

    /// Filters the next bytes of the document, handing the pieces to `emit` in order.
    mutating func filter(_ chunk: UnsafeRawBufferPointer, _ emit: (Piece) -> Void) {
        var bytes = Array(chunk)
        replaceControls(&bytes)
        bytes.withUnsafeBufferPointer { scan($0, emit) }
        flush(emit)
    }

    /// The end of the input: a token still held is passed on as it is (libxml2 names it cut
    /// off); one being dropped is reported.
    mutating func finish(_ emit: (Piece) -> Void) {
        switch mode {
        case .markup:
            out += held
            held = []
        case .dropping, .droppingText:
            flush(emit)
            emit(.oversized(line: startLine, reason: reason()))
        case .outside, .doctype:
            break
        }
        mode = .outside
        flush(emit)
    }

    private mutating func flush(_ emit: (Piece) -> Void) {
        guard !out.isEmpty else { return }
        out.withUnsafeBytes { emit(.bytes($0)) }
        out.removeAll(keepingCapacity: true)
    }

    private mutating func replaceControls(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { b in
            for i in 0..<b.count where b[i] < 0x20 && b[i] != 0x0A && b[i] != 0x09 && b[i] != 0x0D {
                b[i] = 0x20
                replacedControls += 1
            }
        }
    }

    /// The bytes of one chunk. `pass` is where bytes not yet handed on begin; a markup token
    /// spans `held` and `b[tokenStart...]`.
    private mutating func scan(_ b: UnsafeBufferPointer<UInt8>, _ emit: (Piece) -> Void) {
        var pass = 0
        var tokenStart = 0
        var i = 0
        while i < b.count {
            let run = quietRun(b, from: i)
            if run > 0 {
                length += run
                if mode == .dropping || mode == .droppingText || mode == .doctype { pass = i + run }
                previous = run == 1 ? (previous.1, b[i]) : (b[i + run - 2], b[i + run - 1])
                i += run
                continue
            }
            let c = b[i]
            defer { i += 1 }
            switch mode {
            case .outside:
                if c == UInt8(ascii: "<") {
                    begin(at: i, &tokenStart)
                } else {
                    // A run of text is named by the line of its first byte that is not white space.
                    if length == 0 || blank {
                        blank = c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D
                        startLine = newlines + 1
                    }
                    length += 1
                    if length > Self.tokenLimit {
                        out += b[pass..<i]
                        pass = i + 1
                        mode = .droppingText
                        if c == 0x0A { out.append(c) }
                    }
                }
            case .droppingText:
                if c == UInt8(ascii: "<") {
                    flush(emit)
                    emit(.oversized(line: startLine, reason: reason()))
                    pass = i
                    begin(at: i, &tokenStart)
                } else {
                    length += 1
                    pass = i + 1
                    if c == 0x0A { out.append(c) }
                }
            case .doctype:
                pass = i + 1
                if lessThan && Self.isNameStart(c) {
                    // The root element: its `<` was left out with the DTD; it leads the token.
                    lessThan = false
                    pass = i
                    begin(at: i, &tokenStart)
                    held = [UInt8(ascii: "<")]
                    markup(c, at: i, b, &pass, &tokenStart, emit)
                } else {
                    lessThan = c == UInt8(ascii: "<")
                    if c == 0x0A { out.append(c) }
                }
            case .markup, .dropping:
                markup(c, at: i, b, &pass, &tokenStart, emit)
            }
            if c == 0x0A { newlines += 1 }
            previous = (previous.1, c)
        }
        switch mode {
        case .markup:
            out += b[pass..<tokenStart]
            held += b[tokenStart..<b.count]
        case .outside:
            out += b[pass..<b.count]
        case .doctype, .dropping, .droppingText:
            break
        }
    }

    /// How many bytes from `i` change nothing but the counts (no line break, nothing that ends
    /// or changes the token, and not past the limit): an attribute value, a comment's body, a
    /// run of text, what is being dropped. Read in one tight loop, they keep the filter's cost
    /// per byte small.
    private func quietRun(_ b: UnsafeBufferPointer<UInt8>, from i: Int) -> Int {
        let stop1: UInt8, stop2: UInt8
        var room = Int.max
        switch mode {
        case .markup, .dropping:
            if mode == .markup { room = Self.tokenLimit - length }
            switch kind {
            case .startTag where nameDone && quote != 0: stop1 = quote
            case .comment, .pi, .cdata, .declaration: stop1 = UInt8(ascii: ">")
            case .endTag where nameDone: stop1 = UInt8(ascii: ">")
            default: return 0
            }
            stop2 = 0x0A
        case .droppingText:
            (stop1, stop2) = (UInt8(ascii: "<"), 0x0A)
        case .doctype:
            guard !lessThan else { return 0 }
            (stop1, stop2) = (UInt8(ascii: "<"), 0x0A)
        case .outside:
            guard length > 0 && !blank else { return 0 }
            room = Self.tokenLimit - length
            (stop1, stop2) = (UInt8(ascii: "<"), 0x0A)
        }
        let end = room >= b.count - i ? b.count : i + max(0, room)
        var j = i
        while j < end {
            let c = b[j]
            if c == stop1 || c == stop2 { break }
            j += 1
        }
        return j - i
    }

    /// A `<` at `i` (or left out before it) begins a markup token.
    private mutating func begin(at i: Int, _ tokenStart: inout Int) {
        mode = .markup
        kind = .pending
        tokenStart = i
        length = 1
        startLine = newlines + 1
        tokenNewlines = 0
        prefix.removeAll(keepingCapacity: true)
        prefix.append(UInt8(ascii: "<"))
        name.removeAll(keepingCapacity: true)
        nameDone = false
        quote = 0
        afterEquals = false
        lastOutside = 0
    }

    /// One byte of a markup token, held or being dropped.
    private mutating func markup(_ c: UInt8, at i: Int, _ b: UnsafeBufferPointer<UInt8>, _ pass: inout Int, _ tokenStart: inout Int,
                                 _ emit: (Piece) -> Void) {
        length += 1
        if c == 0x0A { tokenNewlines += 1 }
        if kind == .pending {
            classify(c)
            if mode == .doctype {
                out += b[pass..<tokenStart]
                held = []
                pass = i + 1
                return
            }
        } else {
            scanTag(c)
        }
        if mode == .markup && length > Self.tokenLimit {
            out += b[pass..<tokenStart]
            held = []
            mode = .dropping
        }
        if mode == .dropping { pass = i + 1 }
        guard ends(c) else { return }
        if mode == .dropping {
            flush(emit)
            let replacement = replacementTag()
            if kind == .startTag {
                emit(.oversizedStart(name: replacement.name, line: startLine, reason: reason()))
            } else {
                emit(.oversized(line: startLine, reason: reason()))
            }
            out += replacement.bytes
            out += [UInt8](repeating: 0x0A, count: tokenNewlines)
            pass = i + 1
        } else if !held.isEmpty {
            out += b[pass..<tokenStart]
            out += held
            held = []
            pass = tokenStart
        }
        mode = .outside
        length = 0
    }

    /// Decides the token's kind from its first bytes.
    private mutating func classify(_ c: UInt8) {
        prefix.append(c)
        guard prefix.count >= 2 else { return }
        switch prefix[1] {
        case UInt8(ascii: "/"):
            kind = .endTag
        case UInt8(ascii: "?"):
            kind = .pi
        case UInt8(ascii: "!"):
            for (candidate, k) in [("<!--", Kind.comment), ("<![CDATA[", .cdata), ("<!DOCTYPE", .declaration)] {
                let bytes = Array(candidate.utf8)
                if prefix.count < bytes.count, bytes.starts(with: prefix) { return }
                if prefix.count == bytes.count, bytes == prefix {
                    if k == .declaration && !seenRoot { mode = .doctype } else { kind = k }
                    return
                }
            }
            kind = .declaration
        default:
            kind = .startTag
            if Self.isNameStart(prefix[1]) { seenRoot = true }
            scanTag(c)
        }
    }

    /// A tag's name and, in a start tag, where its attribute values are.
    private mutating func scanTag(_ c: UInt8) {
        guard kind == .startTag || kind == .endTag else { return }
        if !nameDone {
            if !Self.endsName(c) {
                if name.count < 256 { name.append(c) }
                return
            }
            nameDone = true
        }
        guard kind == .startTag else { return }
        if quote != 0 {
            if c == quote { quote = 0 }
        } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
            if afterEquals { quote = c }
            afterEquals = false
            lastOutside = c
        } else if c == UInt8(ascii: "=") {
            afterEquals = true
            lastOutside = c
        } else if !(c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D || c == UInt8(ascii: ">")) {
            afterEquals = false
            lastOutside = c
        }
    }

    /// True when `c` ends the current token.
    private func ends(_ c: UInt8) -> Bool {
        guard c == UInt8(ascii: ">") else { return false }
        switch kind {
        case .pending: return false
        case .startTag: return quote == 0
        case .endTag, .declaration: return true
        case .comment: return length >= 7 && previous == (UInt8(ascii: "-"), UInt8(ascii: "-"))
        case .pi: return length >= 4 && previous.1 == UInt8(ascii: "?")
        case .cdata: return length >= 12 && previous == (UInt8(ascii: "]"), UInt8(ascii: "]"))
        }
    }

    /// What stands in for a dropped token: a tag's bare element, else nothing.
    private func replacementTag() -> (name: String, bytes: [UInt8]) {
        let element = name.isEmpty || name.count >= 256 || !Self.isNameStart(name[0]) ? Array("oversized".utf8) : name
        let text = String(decoding: element, as: UTF8.self)
        switch kind {
        case .startTag: return (text, [UInt8(ascii: "<")] + element + Array((lastOutside == UInt8(ascii: "/") ? "/>" : ">").utf8))
        case .endTag: return (text, Array("</".utf8) + element + [UInt8(ascii: ">")])
        default: return (text, [])
        }
    }

    /// Why the token was left out.
    private func reason() -> String {
        let what: String
        switch mode == .droppingText ? nil : kind {
        case nil: what = "a text"
        case .startTag: what = "<\(String(decoding: name.prefix(64), as: UTF8.self))> has a start tag"
        case .endTag: what = "an end tag"
        case .comment: what = "a comment"
        case .cdata: what = "a CDATA section"
        case .pi: what = "a processing instruction"
        case .declaration, .pending: what = "a declaration"
        }
        return "\(what) of \(length) bytes; at most \(Self.tokenLimit) are read"
    }

    static func isNameStart(_ c: UInt8) -> Bool {
        (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
    }

    static func endsName(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D || c == UInt8(ascii: ">") || c == UInt8(ascii: "=")
            || c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") || c == UInt8(ascii: "/")
    }
}
