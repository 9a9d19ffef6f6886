import CYAML
import Foundation

/// A YAML document as Compose and Grafana read it, parsed by libyaml (Debian's `libyaml-dev`).
///
/// Scalars keep their text: the value `1` is the string `"1"` and `no` is `"no"`, as the tests
/// compare them. Only a plain `~`, `null` or empty value is `.null` (YAML 1.2's core schema,
/// which Compose's go-yaml follows; PyYAML's YAML 1.1 would turn `no` and `on` into booleans).
/// Anchors and aliases are resolved by libyaml.
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

/// A document libyaml refused, or a construct these tests do not read, with its line.
struct YAMLError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "YAML line \(line): \(message)" }
}

/// Parses one YAML document with libyaml's loader and turns its node graph into `YAMLNode`.
enum YAML {
    static func parse(_ text: String) throws -> YAMLNode {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw YAMLError(line: 0, message: "libyaml: out of memory") }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var document = yaml_document_t()
            guard yaml_parser_load(&parser, &document) == 1 else { throw error(of: parser) }
            defer { yaml_document_delete(&document) }
            guard let root = yaml_document_get_root_node(&document) else { return .null }
            let node = try convert(root, in: &document)
            // A second document would be ignored by a reader of the first: refuse it instead.
            var next = yaml_document_t()
            guard yaml_parser_load(&parser, &next) == 1 else { throw error(of: parser) }
            defer { yaml_document_delete(&next) }
            if yaml_document_get_root_node(&next) != nil { throw YAMLError(line: 0, message: "more than one document") }
            return node
        }
    }

    static func error(of parser: yaml_parser_t) -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "libyaml error \(parser.error.rawValue)"
        let context = parser.context.map { String(cString: $0) + ": " } ?? ""
        return YAMLError(line: Int(parser.problem_mark.line) + 1, message: context + problem)
    }

    static func convert(_ node: UnsafeMutablePointer<yaml_node_t>, in document: inout yaml_document_t) throws -> YAMLNode {
        let line = Int(node.pointee.start_mark.line) + 1
        switch node.pointee.type {
        case YAML_SCALAR_NODE:
            let scalar = node.pointee.data.scalar
            let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            if scalar.style == YAML_PLAIN_SCALAR_STYLE, ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
            return .scalar(text)
        case YAML_SEQUENCE_NODE:
            var items: [YAMLNode] = []
            var item = node.pointee.data.sequence.items.start
            while let current = item, current != node.pointee.data.sequence.items.top {
                guard let child = yaml_document_get_node(&document, current.pointee) else { throw YAMLError(line: line, message: "dangling item") }
                items.append(try convert(child, in: &document))
                item = current + 1
            }
            return .sequence(items)
        case YAML_MAPPING_NODE:
            var pairs: [(key: String, value: YAMLNode)] = []
            var pair = node.pointee.data.mapping.pairs.start
            while let current = pair, current != node.pointee.data.mapping.pairs.top {
                guard let keyNode = yaml_document_get_node(&document, current.pointee.key),
                      let valueNode = yaml_document_get_node(&document, current.pointee.value) else {
                    throw YAMLError(line: line, message: "dangling pair")
                }
                let keyLine = Int(keyNode.pointee.start_mark.line) + 1
                guard case .scalar(let key) = try convert(keyNode, in: &document) else {
                    throw YAMLError(line: keyLine, message: "a key that is not a string")
                }
                // Compose refuses a repeated key; a merge key would need YAML 1.1's merge rules,
                // which no deploy file uses.
                if pairs.contains(where: { $0.key == key }) { throw YAMLError(line: keyLine, message: "duplicate key \(key)") }
                if key == "<<" { throw YAMLError(line: keyLine, message: "merge keys (<<) are not read here") }
                pairs.append((key, try convert(valueNode, in: &document)))
                pair = current + 1
            }
            return .mapping(pairs)
        default:
            throw YAMLError(line: line, message: "empty node")
        }
    }
}
