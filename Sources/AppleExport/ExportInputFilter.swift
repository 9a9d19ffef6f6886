/// The two repairs made to an export's bytes before libxml2 reads them, both keeping every
/// byte offset and line number as they were (so a skipped element is named by its own line):
///
/// - **The DTD is blanked.** Apple has shipped exports whose internal DTD subset is broken —
///   iOS 16's unclosed `<!ATTLIST`, a stray `>` — and libxml2 gives up on such a document
///   before its first element. Nothing in an export needs the DTD (no defaults, no entities),
///   so everything from `<!DOCTYPE` to the root element's `<` becomes spaces, its line breaks
///   kept.
/// - **Control characters XML forbids** (C0 controls but tab, line feed and carriage return;
///   `\x0b` has been seen in device and metadata strings) become spaces, so the record that
///   carries one is read instead of lost.
struct ExportInputFilter {
    /// Bytes before the root element, held until it is found.
    private var prologue: [UInt8] = []
    private var inBody = false
    /// Line breaks passed so far.
    private var newlines = 0
    /// The line the input has reached (1 + line breaks so far).
    var lines: Int { newlines + 1 }
    /// Control characters replaced by spaces, and the line of the first.
    private(set) var replacedControls = 0
    private(set) var firstReplacedLine: Int?
    /// The lines the blanked DTD spanned.
    private(set) var blankedDoctype: ClosedRange<Int>?

    /// Past this much prologue without a root element, the bytes pass unchanged.
    static let prologueLimit = 8 << 20

    /// The bytes to hand to libxml2 for `chunk` (empty while the prologue is held).
    mutating func filter(_ chunk: UnsafeRawBufferPointer) -> [UInt8] {
        var bytes = Array(chunk)
        replaceControls(&bytes)
        if inBody { return bytes }
        prologue.append(contentsOf: bytes)
        if let root = Self.rootStart(prologue) {
            blankDoctype(before: root)
            return release()
        }
        return prologue.count > Self.prologueLimit ? release() : []
    }

    /// What is still held, at the end of the input.
    mutating func flush() -> [UInt8] {
        inBody ? [] : release()
    }

    private mutating func release() -> [UInt8] {
        inBody = true
        defer { prologue = [] }
        return prologue
    }

    private mutating func replaceControls(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { b in
            for i in 0..<b.count where b[i] < 0x20 {
                switch b[i] {
                case 0x0A: newlines += 1
                case 0x09, 0x0D: break
                default:
                    b[i] = 0x20
                    replacedControls += 1
                    if firstReplacedLine == nil { firstReplacedLine = newlines + 1 }
                }
            }
        }
    }

    /// Offset of the root element's `<`: the first `<` followed by a name's first character.
    static func rootStart(_ b: [UInt8]) -> Int? {
        var i = 0
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "<") {
                let c = b[i + 1]
                if (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80 {
                    return i
                }
            }
            i += 1
        }
        return nil
    }

    private mutating func blankDoctype(before root: Int) {
        let marker = Array("<!DOCTYPE".utf8)
        guard root >= marker.count,
              let start = (0...(root - marker.count)).first(where: { prologue[$0..<($0 + marker.count)].elementsEqual(marker) })
        else { return }
        var line = prologue[..<start].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        let first = line
        for i in start..<root where prologue[i] != 0x0A && prologue[i] != 0x0D {
            prologue[i] = 0x20
        }
        line += prologue[start..<root].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        blankedDoctype = first...line
    }
}
