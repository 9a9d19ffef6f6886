extension Migration {
    /// The file's statements in order, each without its closing `;`, comments inside them
    /// kept; pieces holding only whitespace and comments are dropped. A `;` ends a statement
    /// only outside quotes (`'…'`, `E'…'`, `"…"`), dollar quotes (`$$…$$`, `$tag$…$tag$`),
    /// comments (`--`, nested `/* */`) and SQL-standard bodies (`BEGIN ATOMIC … END`): the
    /// rules psql splits a file by.
    public var statements: [String] {
        var scanner = SQLScanner(Array(sql.utf8))
        return scanner.statements()
    }
}

/// Splits SQL text into statements by walking its UTF-8 bytes; every delimiter it looks for
/// is ASCII, so a multi-byte character never ends a token early.
struct SQLScanner {
    /// The text's UTF-8 bytes.
    let bytes: [UInt8]
    /// Where the scan is.
    var i = 0
    /// Open `BEGIN ATOMIC` bodies and `CASE` expressions inside them.
    var depth = 0
    /// The last word seen, lowercased (`begin` before `atomic`).
    var previousWord = ""

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The statements, as `Migration.statements` describes them.
    mutating func statements() -> [String] {
        var result: [String] = []
        var start = 0, hasCode = false
        func take(_ end: Int) {
            if hasCode { result.append(String(decoding: bytes[start..<end], as: UTF8.self)) }
            hasCode = false
        }
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "-"), peek(1) == UInt8(ascii: "-") {
                while i < bytes.count, bytes[i] != UInt8(ascii: "\n") { i += 1 }
                continue
            }
            if c == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                skipBlockComment()
                continue
            }
            if c == UInt8(ascii: ";"), depth == 0 {
                take(i)
                i += 1
                start = i
                continue
            }
            if !Self.isSpace(c) { hasCode = true }
            scanToken(c)
        }
        take(bytes.count)
        return result
    }

    /// Steps over the token starting at `i`: a quoted string or identifier, a dollar-quoted
    /// string, a word (counting `BEGIN ATOMIC`, `CASE` and `END`), or one other byte.
    mutating func scanToken(_ c: UInt8) {
        switch c {
        case UInt8(ascii: "'"):
            skipQuoted(UInt8(ascii: "'"), backslashes: false)
        case UInt8(ascii: "\""):
            skipQuoted(UInt8(ascii: "\""), backslashes: false)
        case UInt8(ascii: "$"):
            if let tag = dollarTag() {
                skipDollarQuoted(tag)
            } else {
                i += 1
            }
        case _ where Self.isWordStart(c):
            let begin = i
            while i < bytes.count, Self.isWordPart(bytes[i]) { i += 1 }
            let word = String(decoding: bytes[begin..<i], as: UTF8.self).lowercased()
            if word == "e", peek(0) == UInt8(ascii: "'") {
                skipQuoted(UInt8(ascii: "'"), backslashes: true)  // E'…': backslash escapes
            } else {
                noteWord(word)
            }
        default:
            i += 1
        }
    }

    /// Keeps `depth`: `BEGIN ATOMIC` opens a body, inside one `CASE` opens and `END` closes.
    mutating func noteWord(_ word: String) {
        if word == "atomic", previousWord == "begin" {
            depth += 1
        } else if depth > 0, word == "case" {
            depth += 1
        } else if depth > 0, word == "end" {
            depth -= 1
        }
        previousWord = word
    }

    /// The byte `offset` after the one at `i`, or nil past the end.
    func peek(_ offset: Int) -> UInt8? {
        i + offset < bytes.count ? bytes[i + offset] : nil
    }

    /// From the opening quote at `i` to past the closing one (a doubled quote stays inside).
    mutating func skipQuoted(_ quote: UInt8, backslashes: Bool) {
        i += 1
        while i < bytes.count {
            if backslashes, bytes[i] == UInt8(ascii: "\\") {
                i += 2
            } else if bytes[i] == quote {
                if peek(1) == quote { i += 2 } else { i += 1; return }
            } else {
                i += 1
            }
        }
    }

    /// From `/*` at `i` to past its `*/`; comments nest.
    mutating func skipBlockComment() {
        var nesting = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                nesting += 1
                i += 2
            } else if bytes[i] == UInt8(ascii: "*"), peek(1) == UInt8(ascii: "/") {
                nesting -= 1
                i += 2
                if nesting == 0 { return }
            } else {
                i += 1
            }
        }
    }

    /// The dollar quote's tag at `i` (`$$` or `$name$`, bytes included), or nil when the `$`
    /// opens none (a parameter such as `$1`).
    func dollarTag() -> [UInt8]? {
        var j = i + 1
        if j < bytes.count, Self.isWordStart(bytes[j]) {
            while j < bytes.count, Self.isWordPart(bytes[j]), bytes[j] != UInt8(ascii: "$") { j += 1 }
        }
        guard j < bytes.count, bytes[j] == UInt8(ascii: "$") else { return nil }
        return Array(bytes[i...j])
    }

    /// From the opening tag at `i` to past the same tag closing it.
    mutating func skipDollarQuoted(_ tag: [UInt8]) {
        i += tag.count
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "$"), bytes[i...].starts(with: tag) {
                i += tag.count
                return
            }
            i += 1
        }
    }

    /// Space, tab, line feed, vertical tab, form feed or carriage return.
    static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || (0x09...0x0D).contains(c)
    }

    /// A byte an identifier or keyword may start with: a letter, `_`, or part of a non-ASCII character.
    static func isWordStart(_ c: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c | 0x20) || c == UInt8(ascii: "_") || c >= 0x80
    }

    /// A byte inside an identifier: those it may start with, digits and `$`.
    static func isWordPart(_ c: UInt8) -> Bool {
        isWordStart(c) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "$")
    }
}
