import CXML2

/// A streaming XML reader over libxml2's SAX2 push parser in recover mode: bytes in, events
/// out, memory bounded by the largest element, never by the document.
///
/// Why SAX2 and not `xmlTextReader`: measured on the real exports in ../shared/external, the
/// text reader stops for good at the first fatal error even with `XML_PARSE_RECOVER` (the 2015
/// export's attribute names with spaces end it at line 5), while the push parser in recover
/// mode reports the error and goes on to the end of the document.
///
/// Errors are tied to elements here, so handlers see a clean tree: errors reported while a
/// start tag was read make that element *broken* — the handler gets `brokenElement` instead of
/// `startElement`, and its end (if libxml2 ever reports one) is not delivered. In recover mode
/// libxml2 keeps a start tag without its `>` open (the elements after it arrive as its
/// children), so the elements after a broken one are delivered as its siblings. Errors between
/// a start and the next event belong to the open element (`problem`).
///
/// An end tag that does not match the open element, but its parent (`<Record><MetadataEntry
/// a="1" b/></Record>`: the child's start tag broken before its `/>`, or a child never closed),
/// ends in libxml2 only the child; the parent would stay open and every element after it
/// arrive as its child. The parent is taken back too (ended here, its end ignored), so what
/// follows is its siblings again.
///
/// Some errors make libxml2 stop for good even in recover mode (an invalid element name, as an
/// unescaped `<` in an attribute gives). With `restartRoot` set, the reader then starts a new
/// parser at the next line, inside a root element of that name, so what follows is still read
/// (the handler hears `restarted`); line numbers stay the document's.
///
/// Every byte goes through `XMLInputFilter` first: control characters become spaces, the DTD is
/// left out, and no token libxml2 sees is longer than `XMLInputFilter.tokenLimit` — a start tag
/// over it comes as its bare element, followed by a `problem` naming it, so the element is
/// skipped and named; anything else over it is a `problem` where it stood. libxml2's own
/// limits stay on (no `XML_PARSE_HUGE`).
///
/// Never loads anything from outside the bytes given: no network (`XML_PARSE_NONET`), no DTD
/// loading, no entity substitution, and an external entity loader that refuses everything.
final class XMLStreamParser {
    private let handler: any XMLEventHandler
    private let wantsText: Bool
    private let name: String
    private var context: xmlParserCtxtPtr?
    private var sax = xmlSAXHandler()
    /// Mirrors libxml2's element stack: true for a broken element (not delivered).
    private var stack: [Bool] = []
    private var openDelivered = 0
    /// Errors reported since the last event, as (line, message).
    private var pending: [(Int, String)] = []
    /// The last event, for an error that is about the start tag just reported.
    private var last = LastEvent.other
    private enum LastEvent { case start, brokenStart, other }
    private var finished = false
    /// Broken elements seen so far: libxml2 may keep them open to the end of the document.
    private var brokenElements = 0
    /// After a restart: the root element the rest is read in, its start tag not delivered.
    private let restartRoot: String?
    private var swallowRoot = false
    /// Lines before the current parser's first line.
    private var lineOffset = 0
    /// The document bytes fed most recently, starting at line `recentLine`: where a restart
    /// finds the next line.
    private var recent: [UInt8] = []
    private var recentLine = 1
    /// A restart waiting for the line it resumes at to arrive, and the last line resumed at.
    private var resumeLine: Int?
    private var lastResume = 0
    /// The document's line of the last error libxml2 reported.
    private var lastErrorLine = 0
    /// An end tag named the open element's parent: the parent ends with the element.
    private var parentEndsToo = false
    /// The line where content after the root element's end began (after a restart, a stray end
    /// tag ends the root it was read in): what follows is read on from that very line.
    private var contentAfterRoot: Int?
    private var filter = XMLInputFilter()
    /// A start tag the filter cut down to its element: delivered, then named as a problem.
    private var oversizedStart: (name: String, line: Int, reason: String)?

    /// The line the input has reached, and the control characters read as spaces.
    var inputLines: Int { filter.lines }
    var controlCharacters: Int { filter.replacedControls }

    /// A parser delivering to `handler`; `text: true` also delivers character data. `name`
    /// only appears in libxml2's own messages.
    init(handler: any XMLEventHandler, text: Bool = false, name: String = "export.xml", restartRoot: String? = nil) {
        self.handler = handler
        self.wantsText = text
        self.name = name
        self.restartRoot = restartRoot
        Self.setUp
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { ctx, localname, _, _, _, _, count, _, attributes in
            XMLStreamParser.from(ctx).start(localname!, count: Int(count), attributes: attributes)
        }
        sax.endElementNs = { ctx, _, _, _ in
            XMLStreamParser.from(ctx).end()
        }
        sax.serror = { ctx, error in
            guard let ctx, let error else { return }
            XMLStreamParser.from(ctx).error(error.pointee)
        }
        if text {
            sax.characters = { ctx, bytes, length in
                guard let bytes, length > 0 else { return }
                XMLStreamParser.from(ctx).text(UnsafeBufferPointer(start: bytes, count: Int(length)))
            }
        }
    }

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    /// libxml2's global state, set once: the parser initialised and external entities refused.
    private static let setUp: Void = {
        xmlInitParser()
        xmlSetExternalEntityLoader { _, _, _ in nil }
    }()

    private static func from(_ ctx: UnsafeMutableRawPointer?) -> XMLStreamParser {
        Unmanaged<XMLStreamParser>.fromOpaque(ctx!).takeUnretainedValue()
    }

    /// Parses the next bytes of the document.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !finished, bytes.count > 0 else { return }
        filter.filter(bytes) { take($0) }
    }

    /// A piece of what the filter passes on.
    private func take(_ piece: XMLInputFilter.Piece) {
        switch piece {
        case .bytes(let bytes):
            feedFiltered(bytes)
        case .oversizedStart(let name, let line, let reason):
            oversizedStart = (name, line, reason)
        case .oversized(let line, let reason):
            handler.problem(line: line, reason: reason, inElement: openDelivered > 0)
        }
    }

    /// Parses the next bytes the filter passed on.
    private func feedFiltered(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if restartRoot != nil {
            if recent.count > 2 << 20 {
                let drop = recent.count - (1 << 20)
                recentLine += recent[..<drop].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                recent.removeFirst(drop)
            }
            recent.append(contentsOf: bytes)
        }
        if let line = resumeLine {
            resume(at: line)
            return
        }
        parse(bytes)
    }

    private func parse(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        let chars = bytes.bindMemory(to: CChar.self)
        if context == nil {
            // The first bytes go to the context itself, which detects the encoding from them.
            let first = min(4, chars.count)
            context = xmlCreatePushParserCtxt(&sax, Unmanaged.passUnretained(self).toOpaque(), chars.baseAddress, Int32(first), name)
            let options = XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue
            xmlCtxtUseOptions(context, Int32(options))
            if chars.count > first {
                xmlParseChunk(context, chars.baseAddress! + first, Int32(chars.count - first), 0)
            }
        } else {
            xmlParseChunk(context, chars.baseAddress, Int32(chars.count), 0)
        }
        restartIfHalted()
    }

    /// A parser halted (libxml2 sets its state to EOF) inside the root element: a new one
    /// reads on from the line after the last error.
    private func restartIfHalted() {
        guard restartRoot != nil, let context, context.pointee.instate == XML_PARSER_EOF, openDelivered > 0 else { return }
        let haltedLine = max(lastErrorLine, line)
        let next = contentAfterRoot ?? haltedLine + 1
        contentAfterRoot = nil
        // What made it stop right after a broken start tag is about that element, already named.
        if last == .brokenStart { pending.removeAll() }
        flushPending(inElement: true)
        handler.restarted(line: haltedLine)
        xmlFreeParserCtxt(context)
        self.context = nil
        stack = [false]
        openDelivered = 1
        last = .other
        resume(at: max(next, lastResume + 1))
    }

    /// Starts a parser on the document from the start of `line`, inside the synthetic root,
    /// once that line is among the bytes fed.
    private func resume(at line: Int) {
        guard let root = restartRoot else { return }
        var current = recentLine
        var index = 0
        while current < line, index < recent.count {
            if recent[index] == 0x0A { current += 1 }
            index += 1
        }
        guard current == line else {
            resumeLine = line
            return
        }
        resumeLine = nil
        lastResume = line
        lineOffset = line - 1
        swallowRoot = true
        let bytes = Array("<\(root)>".utf8) + recent[index...]
        bytes.withUnsafeBytes { parse($0) }
    }

    /// Parses the next bytes of the document.
    func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Ends the document: errors left over are reported, and elements still open are
    /// returned, innermost last, by their delivered depth (the handler decides what a
    /// truncated element means).
    @discardableResult
    func finish() -> Int {
        guard !finished else { return openDelivered }
        filter.finish { take($0) }
        if let context { xmlParseChunk(context, nil, 0, 1) }
        finished = true
        flushPending(inElement: false)
        return openDelivered
    }

    /// The document's line libxml2 is at.
    private var line: Int {
        guard let context else { return lineOffset }
        return lineOffset + Int(xmlSAX2GetLineNumber(context))
    }

    private func start(_ localname: UnsafePointer<xmlChar>, count: Int, attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
        if swallowRoot {
            swallowRoot = false
            stack.append(true)
            return
        }
        if !pending.isEmpty {
            let (line, message) = pending[0]
            pending.removeAll()
            stack.append(true)
            last = .brokenStart
            brokenElements += 1
            handler.brokenElement(name: String(cString: localname), line: line, reason: message)
            return
        }
        stack.append(false)
        openDelivered += 1
        last = .start
        let element = XMLStartElement(name: localname, line: line, attributeCount: count, attributes: attributes)
        handler.startElement(element)
        if let cut = oversizedStart, cut.line == element.line, cut.name == element.nameText {
            oversizedStart = nil
            handler.problem(line: cut.line, reason: cut.reason, inElement: true)
        }
    }

    private func end() {
        last = .other
        if stack.last == true {
            pending.removeAll()  // inside a broken element, which is skipped whole
        } else {
            flushPending(inElement: openDelivered > 0)
        }
        guard let broken = stack.popLast() else { return }
        if !broken {
            openDelivered -= 1
            handler.endElement()
        }
        if parentEndsToo {
            parentEndsToo = false
            takeBackOpenElement()
        }
    }

    /// The innermost open element ends here, though libxml2 keeps it open: delivered as ended,
    /// its own end later ignored.
    private func takeBackOpenElement() {
        guard let top = stack.indices.last else { return }
        brokenElements += 1
        if !stack[top] {
            stack[top] = true
            openDelivered -= 1
            handler.endElement()
        }
    }

    private func text(_ bytes: UnsafeBufferPointer<UInt8>) {
        last = .other
        flushPending(inElement: openDelivered > 0)
        handler.characters(bytes)
    }

    private func error(_ error: xmlError) {
        // Warnings (an unusual namespace, say) lose nothing.
        guard error.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        var message = error.message.map { String(cString: $0) } ?? "unreadable XML (libxml2 error \(error.code))"
        while message.last?.isWhitespace == true { message.removeLast() }
        // "Couldn't find end of Start Tag" comes after the start tag it is about was reported.
        // libxml2 keeps that element open, and what follows arrives as its children: it is
        // taken back (ended as broken here, its end ignored), and what follows is its siblings.
        if error.code == Int32(XML_ERR_GT_REQUIRED.rawValue) {
            switch last {
            case .brokenStart:
                return
            case .start:
                last = .brokenStart
                handler.problem(line: lineOffset + Int(error.line), reason: message, inElement: true)
                takeBackOpenElement()
                return
            case .other:
                break
            }
        }
        if error.code == Int32(XML_ERR_DOCUMENT_END.rawValue) {
            contentAfterRoot = lineOffset + Int(error.line)
        }
        if error.code == Int32(XML_ERR_TAG_NAME_MISMATCH.rawValue), let closing = error.str2 {
            parentEndsToo = parentName.map { xmlStrEqual($0, UnsafeRawPointer(closing).assumingMemoryBound(to: xmlChar.self)) != 0 } ?? false
        }
        // Broken elements libxml2 kept open make it find the document's end early or late;
        // those are already named.
        if brokenElements > 0 && (error.code == Int32(XML_ERR_DOCUMENT_END.rawValue) || error.code == Int32(XML_ERR_TAG_NOT_FINISHED.rawValue)) {
            return
        }
        pending.append((lineOffset + Int(error.line), message))
        lastErrorLine = lineOffset + Int(error.line)
    }

    /// The name of the open element's parent in libxml2's own stack, while an end tag is read.
    private var parentName: UnsafePointer<xmlChar>? {
        guard let context, context.pointee.nameNr >= 2, let names = context.pointee.nameTab else { return nil }
        return names[Int(context.pointee.nameNr) - 2]
    }

    private func flushPending(inElement: Bool) {
        guard !pending.isEmpty else { return }
        let problems = pending
        pending.removeAll()
        for (line, message) in problems { handler.problem(line: line, reason: message, inElement: inElement) }
    }
}
