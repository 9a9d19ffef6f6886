import Foundation
import TestSupport

/// compose.yaml, .env.example and the Dockerfile, read the way Compose and Docker read them.
struct ComposeFile {
    let root: YAMLNode
    /// KEY=value lines of .env.example.
    let exampleEnvironment: [String: String]

    static func load() throws -> ComposeFile {
        ComposeFile(root: try YAML.parse(try Repository.text("compose.yaml")),
                    exampleEnvironment: try dotenv(try Repository.text(".env.example")))
    }

    func service(_ name: String) -> YAMLNode? { root["services"]?[name] }
    var serviceNames: [String] { root["services"]?.keys ?? [] }

    /// Compose's .env syntax as used here: KEY=value, comments, blank lines.
    static func dotenv(_ text: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0].range(of: #"^[A-Z][A-Z0-9_]*$"#, options: .regularExpression) != nil else {
                throw DeploymentTestError(".env.example: not KEY=value: \(line)")
            }
            values[parts[0]] = parts[1]
        }
        return values
    }

    /// A `${NAME…}` reference in a value: `${NAME}`, `${NAME:-default}`, `${NAME-default}`,
    /// `${NAME:?message}`, `${NAME?message}`.
    struct Reference: Equatable {
        var name: String
        var fallback: String?
        var required: Bool
        var range: Range<String.Index>
    }

    /// The references in a value, `$$` (a literal dollar) skipped.
    static func references(in text: String) -> [Reference] {
        var found: [Reference] = []
        var i = text.startIndex
        while i < text.endIndex {
            guard text[i] == "$" else { i = text.index(after: i); continue }
            let next = text.index(after: i)
            guard next < text.endIndex else { break }
            if text[next] == "$" { i = text.index(after: next); continue }
            if text[next] == "{", let close = text[next...].firstIndex(of: "}") {
                let body = String(text[text.index(after: next)..<close])
                let name = String(body.prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                let rest = body.dropFirst(name.count)
                var fallback: String?
                var required = false
                if rest.hasPrefix(":-") { fallback = String(rest.dropFirst(2)) } else if rest.hasPrefix("-") { fallback = String(rest.dropFirst()) }
                if rest.hasPrefix(":?") || rest.hasPrefix("?") { required = true }
                found.append(Reference(name: name, fallback: fallback, required: required, range: i..<text.index(after: close)))
                i = text.index(after: close)
            } else {
                // $NAME without braces
                let name = String(text[next...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                let end = text.index(next, offsetBy: name.count)
                found.append(Reference(name: name, fallback: nil, required: false, range: i..<end))
                i = end
            }
        }
        return found
    }

    /// A value as Compose interpolates it with .env.example's values (or, with
    /// `defaultsOnly`, with no .env at all): `$$` becomes `$`.
    func interpolate(_ text: String, defaultsOnly: Bool = false) throws -> String {
        var out = ""
        var cursor = text.startIndex
        for reference in Self.references(in: text) {
            out += text[cursor..<reference.range.lowerBound].replacingOccurrences(of: "$$", with: "$")
            if !defaultsOnly, let value = exampleEnvironment[reference.name], !value.isEmpty {
                out += value
            } else if let fallback = reference.fallback {
                out += fallback
            } else {
                throw DeploymentTestError("${\(reference.name)} has no value in .env.example and no default")
            }
            cursor = reference.range.upperBound
        }
        return out + text[cursor...].replacingOccurrences(of: "$$", with: "$")
    }
}

/// The Dockerfile's stages, ARG defaults, and what each stage installs with apt-get.
struct Dockerfile {
    struct Stage {
        /// The base image with the ARG defaults put in.
        var from: String
        /// The base image as written (`${SWIFT_IMAGE}`).
        var image: String
        var name: String?
        var instructions: [(keyword: String, arguments: String)] = []

        /// Packages named after `apt-get install` in the stage's RUN instructions.
        var aptPackages: [String] {
            instructions.filter { $0.keyword == "RUN" }.flatMap { run -> [String] in
                run.arguments.components(separatedBy: "&&").flatMap { command -> [String] in
                    let words = command.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
                    guard let install = words.firstIndex(of: "install"), words[..<install].contains("apt-get") else { return [] }
                    return words[(install + 1)...].filter { !$0.hasPrefix("-") }
                }
            }
        }

        func arguments(of keyword: String) -> [String] { instructions.filter { $0.keyword == keyword }.map(\.arguments) }
    }

    var arguments: [String: String] = [:]
    var stages: [Stage] = []
    /// Parser directives (`# syntax=…`, `# escape=…`) at the top of the file.
    var directives: [String] = []

    static func load() throws -> Dockerfile {
        var file = Dockerfile()
        var logical: [String] = []
        var current = ""
        var header = true
        for line in try Repository.text("Dockerfile").split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if header, trimmed.range(of: #"^#\s*[a-z]+\s*="#, options: .regularExpression) != nil { file.directives.append(trimmed) }
            header = header && trimmed.hasPrefix("#")
            if trimmed.hasPrefix("#") { continue }
            if trimmed.hasSuffix("\\") {
                current += trimmed.dropLast() + " "
            } else {
                current += trimmed
                if !current.trimmingCharacters(in: .whitespaces).isEmpty { logical.append(current) }
                current = ""
            }
        }
        for instruction in logical {
            let keyword = String(instruction.prefix { $0 != " " }).uppercased()
            let rest = instruction.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)
            switch keyword {
            case "ARG" where file.stages.isEmpty:
                let parts = rest.split(separator: "=", maxSplits: 1).map(String.init)
                file.arguments[parts[0]] = parts.count == 2 ? parts[1] : ""
            case "FROM":
                let words = rest.split(separator: " ").map(String.init)
                var image = words[0]
                for (name, value) in file.arguments { image = image.replacingOccurrences(of: "${\(name)}", with: value) }
                let alias = words.count == 3 && words[1].uppercased() == "AS" ? words[2] : nil
                file.stages.append(Stage(from: image, image: words[0], name: alias))
            default:
                guard !file.stages.isEmpty else { throw DeploymentTestError("Dockerfile: \(keyword) before FROM") }
                file.stages[file.stages.count - 1].instructions.append((keyword, rest))
            }
        }
        return file
    }

    /// An exec-form instruction's words: `["serve", "--listen", "0.0.0.0:8080"]`.
    static func execForm(_ arguments: String) throws -> [String] {
        guard let data = arguments.data(using: .utf8), let words = try JSONSerialization.jsonObject(with: data) as? [String] else {
            throw DeploymentTestError("not exec form (a JSON array): \(arguments)")
        }
        return words
    }
}
