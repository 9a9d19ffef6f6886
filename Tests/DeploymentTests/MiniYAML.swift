import Foundation

/// A YAML document of the subset compose.yaml and the Grafana provisioning files use:
/// block mappings and sequences by indentation, one-line flow sequences (`[a, "b"]`),
/// plain, single- and double-quoted scalars, comments and empty values. No anchors, tags,
/// flow mappings or multi-line scalars: those are reported as errors, never guessed.
indirect enum YAMLNode: Equatable, CustomStringConvertible {
    case null
    case scalar(String)
    case sequence([YAMLNode])
    case mapping([(key: String, value: YAMLNode)])

    static func == (a: YAMLNode, b: YAMLNode) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.scalar(x), .scalar(y)): return x == y
        case let (.sequence(x), .sequence(y)): return x == y
        case let (.mapping(x), .mapping(y)): return x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        default: return false
        }
    }

    /// The value of a key of a mapping.
    subscript(key: String) -> YAMLNode? {
        guard case .mapping(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    /// The item of a sequence.
    subscript(index: Int) -> YAMLNode? {
        guard case .sequence(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    var string: String? { if case .scalar(let s) = self { return s } else { return nil } }
    var items: [YAMLNode] { if case .sequence(let s) = self { return s } else { return [] } }
    var keys: [String] { if case .mapping(let p) = self { return p.map(\.key) } else { return [] } }
    var pairs: [(key: String, value: YAMLNode)] { if case .mapping(let p) = self { return p } else { return [] } }
    /// A sequence of scalars as strings (compose's list form of `command`, `ports`, `profiles`).
    var strings: [String] { items.compactMap(\.string) }

    /// Every scalar in the document, depth first, with its path (`services.db.image`).
    func scalars(path: String = "") -> [(path: String, value: String)] {
        switch self {
        case .null: return []
        case .scalar(let s): return [(path, s)]
        case .sequence(let items):
            return items.enumerated().flatMap { $0.element.scalars(path: "\(path)[\($0.offset)]") }
        case .mapping(let pairs):
            return pairs.flatMap { $0.value.scalars(path: path.isEmpty ? $0.key : "\(path).\($0.key)") }
        }
    }

    var description: String {
        switch self {
        case .null: return "null"
        case .scalar(let s): return "\"\(s)\""
        case .sequence(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .mapping(let pairs): return "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

struct YAMLError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "YAML line \(line): \(message)" }
}

/// Parses the subset described at `YAMLNode`.
enum MiniYAML {
    struct Line {
        var number: Int
        var indent: Int
        var text: String
    }

    static func parse(_ text: String) throws -> YAMLNode {
        var lines: [Line] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if raw.contains("\t") { throw YAMLError(line: i + 1, message: "tab character") }
            let stripped = try stripComment(String(raw), line: i + 1)
            let content = stripped.drop { $0 == " " }
            if content.isEmpty || content == "---" { continue }
            lines.append(Line(number: i + 1, indent: stripped.count - content.count,
                              text: String(content).trimmingCharacters(in: .whitespaces)))
        }
        guard !lines.isEmpty else { return .null }
        var index = 0
        let node = try parseBlock(&lines, &index, indent: lines[0].indent)
        if index < lines.count { throw YAMLError(line: lines[index].number, message: "unexpected indentation") }
        return node
    }

    /// Removes a `#` comment that starts the line or follows whitespace, outside quotes.
    static func stripComment(_ line: String, line number: Int) throws -> String {
        var quote: Character?
        var escaped = false
        var previous: Character = " "
        var out = ""
        for c in line {
            if let q = quote {
                if escaped { escaped = false } else if q == "\"" && c == "\\" { escaped = true } else if c == q { quote = nil }
                out.append(c)
            } else if c == "#" && (previous == " " || out.isEmpty) {
                break
            } else {
                // A quote opens a quoted scalar only at the start of a value.
                if (c == "\"" || c == "'") && (previous == " " || previous == "[" || previous == "," || out.isEmpty) { quote = c }
                out.append(c)
            }
            previous = c
        }
        while out.hasSuffix(" ") { out.removeLast() }
        return out
    }

    static func isSequenceItem(_ text: String) -> Bool { text == "-" || text.hasPrefix("- ") }

    static func parseBlock(_ lines: inout [Line], _ index: inout Int, indent: Int) throws -> YAMLNode {
        isSequenceItem(lines[index].text) ? try parseSequence(&lines, &index, indent: indent)
                                          : try parseMapping(&lines, &index, indent: indent)
    }

    static func parseSequence(_ lines: inout [Line], _ index: inout Int, indent: Int) throws -> YAMLNode {
        var items: [YAMLNode] = []
        while index < lines.count, lines[index].indent == indent, isSequenceItem(lines[index].text) {
            let line = lines[index]
            let rest = String(line.text.dropFirst(1)).trimmingCharacters(in: .whitespaces)
            if rest.isEmpty {
                index += 1
                guard index < lines.count, lines[index].indent > indent else { items.append(.null); continue }
                items.append(try parseBlock(&lines, &index, indent: lines[index].indent))
            } else if splitKey(rest) != nil {
                // `- key: value` starts a mapping whose keys sit two columns in.
                let childIndent = indent + (line.text.count - rest.count)
                lines[index] = Line(number: line.number, indent: childIndent, text: rest)
                items.append(try parseMapping(&lines, &index, indent: childIndent))
            } else if isSequenceItem(rest) {
                throw YAMLError(line: line.number, message: "nested sequence on one line")
            } else {
                items.append(try scalarOrFlow(rest, line: line.number))
                index += 1
            }
        }
        if index < lines.count, lines[index].indent > indent {
            throw YAMLError(line: lines[index].number, message: "unexpected indentation after a sequence item")
        }
        return .sequence(items)
    }

    static func parseMapping(_ lines: inout [Line], _ index: inout Int, indent: Int) throws -> YAMLNode {
        var pairs: [(key: String, value: YAMLNode)] = []
        while index < lines.count, lines[index].indent == indent {
            let line = lines[index]
            if isSequenceItem(line.text) { break }
            guard let (key, rest) = splitKey(line.text) else {
                throw YAMLError(line: line.number, message: "expected `key: value`, got \(line.text)")
            }
            if pairs.contains(where: { $0.key == key }) { throw YAMLError(line: line.number, message: "duplicate key \(key)") }
            index += 1
            if !rest.isEmpty {
                pairs.append((key, try scalarOrFlow(rest, line: line.number)))
            } else if index < lines.count, lines[index].indent > indent {
                pairs.append((key, try parseBlock(&lines, &index, indent: lines[index].indent)))
            } else if index < lines.count, lines[index].indent == indent, isSequenceItem(lines[index].text) {
                pairs.append((key, try parseSequence(&lines, &index, indent: indent)))
            } else {
                pairs.append((key, .null))
            }
        }
        if index < lines.count, lines[index].indent > indent {
            throw YAMLError(line: lines[index].number, message: "unexpected indentation")
        }
        return .mapping(pairs)
    }

    /// `key: value` or `key:` → (key, value text); nil when the text is not a mapping entry.
    static func splitKey(_ text: String) -> (String, String)? {
        var key: String
        var rest: Substring
        if let first = text.first, first == "\"" || first == "'" {
            guard let (quoted, after) = try? quotedScalar(Substring(text)), after.hasPrefix(":") else { return nil }
            key = quoted
            rest = after.dropFirst()
        } else {
            guard let colon = text.range(of: ": ") ?? (text.hasSuffix(":") ? text.range(of: ":", options: .backwards) : nil)
            else { return nil }
            key = String(text[..<colon.lowerBound])
            rest = text[colon.upperBound...]
            if key.contains(" ") && key.contains(",") { return nil }
        }
        key = key.trimmingCharacters(in: .whitespaces)
        if key.isEmpty || key.hasPrefix("[") || key.hasPrefix("{") { return nil }
        return (key, rest.trimmingCharacters(in: .whitespaces))
    }

    static func scalarOrFlow(_ text: String, line: Int) throws -> YAMLNode {
        if text.hasPrefix("[") { return try flowSequence(text, line: line) }
        if text.hasPrefix("{") || text.hasPrefix("&") || text.hasPrefix("*") || text.hasPrefix("!")
            || text == "|" || text == ">" || text.hasPrefix("|") || text.hasPrefix(">") {
            throw YAMLError(line: line, message: "unsupported YAML: \(text)")
        }
        return .scalar(try scalar(text, line: line))
    }

    static func scalar(_ text: String, line: Int) throws -> String {
        guard let first = text.first, first == "\"" || first == "'" else { return text }
        guard let (value, after) = try? quotedScalar(Substring(text)), after.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw YAMLError(line: line, message: "bad quoted scalar \(text)")
        }
        return value
    }

    /// Reads one quoted scalar from the start of `text`; returns it and what follows.
    static func quotedScalar(_ text: Substring) throws -> (String, Substring) {
        guard let quote = text.first else { throw YAMLError(line: 0, message: "empty") }
        var out = ""
        var i = text.index(after: text.startIndex)
        while i < text.endIndex {
            let c = text[i]
            if quote == "'" {
                if c == "'" {
                    let next = text.index(after: i)
                    if next < text.endIndex && text[next] == "'" { out.append("'"); i = text.index(after: next); continue }
                    return (out, text[next...])
                }
                out.append(c)
            } else {
                if c == "\\" {
                    let next = text.index(after: i)
                    guard next < text.endIndex else { break }
                    switch text[next] {
                    case "n": out.append("\n")
                    case "r": out.append("\r")
                    case "t": out.append("\t")
                    case "\"": out.append("\"")
                    case "\\": out.append("\\")
                    case "/": out.append("/")
                    default: throw YAMLError(line: 0, message: "unsupported escape \\\(text[next])")
                    }
                    i = text.index(after: next)
                    continue
                }
                if c == "\"" { return (out, text[text.index(after: i)...]) }
                out.append(c)
            }
            i = text.index(after: i)
        }
        throw YAMLError(line: 0, message: "unterminated quote")
    }

    static func flowSequence(_ text: String, line: Int) throws -> YAMLNode {
        guard text.hasSuffix("]") else { throw YAMLError(line: line, message: "flow sequence must end on its line") }
        var body = Substring(text.dropFirst().dropLast())
        var items: [YAMLNode] = []
        while true {
            body = body.drop { $0 == " " }
            if body.isEmpty { break }
            if body.first == "\"" || body.first == "'" {
                let (value, after) = try quotedScalar(body)
                items.append(.scalar(value))
                body = after.drop { $0 == " " }
            } else {
                let end = body.firstIndex(of: ",") ?? body.endIndex
                let plain = body[..<end].trimmingCharacters(in: .whitespaces)
                if plain.hasPrefix("[") || plain.hasPrefix("{") { throw YAMLError(line: line, message: "nested flow collection") }
                items.append(.scalar(plain))
                body = body[end...]
            }
            if body.isEmpty { break }
            guard body.first == "," else { throw YAMLError(line: line, message: "expected , in flow sequence") }
            body = body.dropFirst()
        }
        return .sequence(items)
    }
}
