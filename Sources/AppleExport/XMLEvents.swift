import CXML2

/// Receives what `XMLStreamParser` reads, in document order. Byte views are valid only during
/// the call: copy what is kept.
protocol XMLEventHandler: AnyObject {
    /// An element begins.
    func startElement(_ element: XMLStartElement)
    /// The element most recently begun and not yet ended ends.
    func endElement()
    /// Text inside the current element (only when the parser was made with `text: true`).
    func characters(_ text: UnsafeBufferPointer<UInt8>)
    /// An element that could not be read (libxml2 reported an error in its start tag): it is
    /// not begun, and nothing is delivered for it but this.
    func brokenElement(name: String, line: Int, reason: String)
    /// Something unreadable inside the current element, or outside every element (`inElement`
    /// false), that is not a start tag.
    func problem(line: Int, reason: String, inElement: Bool)
    /// libxml2 stopped at `line`; reading goes on at the next line, inside the root element
    /// (`XMLStreamParser.restartRoot`): elements open below the root are gone.
    func restarted(line: Int)
}

/// A start tag as libxml2's SAX2 parser hands it over: the local name and the attributes as
/// byte ranges into the parser's buffers (SAX2 `startElementNs`: five pointers per attribute —
/// local name, prefix, URI, value start, value end).
struct XMLStartElement {
    /// The element's local name, NUL-terminated by libxml2.
    let name: UnsafePointer<xmlChar>
    /// The line of the start tag's end (where libxml2 stands when it reports it).
    let line: Int
    let attributeCount: Int
    let attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?

    /// True when the local name is `text` (ASCII).
    func isNamed(_ text: StaticString) -> Bool {
        XMLBytes.equal(name, text)
    }

    /// The name as a String.
    var nameText: String { String(cString: name) }

    /// The i-th attribute's local name and value (entity references already replaced, but for
    /// `&`, which libxml2 leaves as `&#38;`: `XMLBytes.text` turns it back).
    func attribute(_ i: Int) -> (name: UnsafePointer<xmlChar>, value: UnsafeBufferPointer<UInt8>) {
        let base = attributes! + i * 5
        let start = base[3]!
        let end = base[4]!
        return (base[0]!, UnsafeBufferPointer(start: start, count: end - start))
    }

    /// The value of the attribute named `name`, as text; nil when absent.
    func value(_ name: StaticString) -> String? {
        for i in 0..<attributeCount {
            let a = attribute(i)
            if XMLBytes.equal(a.name, name) { return XMLBytes.text(a.value) }
        }
        return nil
    }
}

/// Small helpers over libxml2's byte strings.
enum XMLBytes {
    /// True when the NUL-terminated `bytes` equal the ASCII `text`.
    static func equal(_ bytes: UnsafePointer<xmlChar>, _ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        let t = text.utf8Start
        var i = 0
        while i < n {
            if bytes[i] != t[i] { return false }
            i += 1
        }
        return bytes[n] == 0
    }

    /// An attribute value as text. libxml2 keeps a `&` written as `&amp;` or `&#38;` as the
    /// five characters `&#38;` when entities are not substituted (its `xmlParseAttValueComplex`),
    /// and every other reference is already replaced, so each `&` here starts `&#38;`.
    static func text(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard value.contains(UInt8(ascii: "&")) else { return String(decoding: value, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var i = 0
        while i < value.count {
            if value[i] == UInt8(ascii: "&"), i + 4 < value.count, value[i + 1] == UInt8(ascii: "#"),
               value[i + 2] == UInt8(ascii: "3"), value[i + 3] == UInt8(ascii: "8"), value[i + 4] == UInt8(ascii: ";") {
                out.append(UInt8(ascii: "&"))
                i += 5
            } else {
                out.append(value[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
