import CLibPQ
import Foundation

/// A connection's settings as libpq keyword/value pairs (`host`, `port`, `dbname`, `user`…).
///
/// Made from a connection string or URI by libpq itself (`PQconninfoParse`), never by hand, and
/// changed by keyword: `setting("dbname", to: "other")` replaces the database whatever form
/// the string had. A connection is opened from the pairs (`PQconnectdbParams`), so no value
/// is ever spliced into a string. `description` never shows the password.
public struct PostgresConnectionInfo: Sendable, CustomStringConvertible {
    /// The settings given, in order, each keyword once; libpq's `PG*` variables and defaults
    /// fill in the rest when connecting.
    public private(set) var parameters: [(keyword: String, value: String)]

    /// Settings from keyword/value pairs; a keyword given twice keeps its later value.
    public init(_ parameters: [(keyword: String, value: String)] = []) {
        self.parameters = []
        for parameter in parameters { set(parameter.keyword, parameter.value) }
    }

    /// Parses a libpq keyword string (`host=… dbname=…`) or URI (`postgresql://…`) with libpq.
    ///
    /// An empty string gives no settings (libpq's `PG*` variables then decide). Throws
    /// `PostgresError.Kind.invalidConnectionString` when libpq cannot read it; libpq's reason
    /// is kept only with its quoted fragments removed, since they can hold a password
    /// (`invalid percent-encoded token: "hunter2%zz"`).
    public init(parsing connectionString: String) throws(PostgresError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(connectionString, &errorMessage) else {
            var reason = "out of memory"
            if let errorMessage {
                reason = Self.redactingQuotedText(String(cString: errorMessage).trimmingTrailingNewlines())
                PQfreemem(errorMessage)
            }
            throw PostgresError(kind: .invalidConnectionString, message: reason)
        }
        defer { PQconninfoFree(options) }
        var parsed: [(keyword: String, value: String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                parsed.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        self.init(parsed)
    }

    /// The value given for `keyword`, or nil.
    public subscript(keyword: String) -> String? {
        parameters.first { $0.keyword == keyword }?.value
    }

    /// Sets `keyword` to `value`, replacing an earlier value (later keywords override earlier ones).
    public mutating func set(_ keyword: String, _ value: String) {
        if let index = parameters.firstIndex(where: { $0.keyword == keyword }) {
            parameters[index].value = value
        } else {
            parameters.append((keyword, value))
        }
    }

    /// A copy with `keyword` set to `value`.
    public func setting(_ keyword: String, to value: String) -> PostgresConnectionInfo {
        var copy = self
        copy.set(keyword, value)
        return copy
    }

    /// These settings, then `other`'s, which win where both name a keyword.
    public func merging(_ other: PostgresConnectionInfo) -> PostgresConnectionInfo {
        var copy = self
        for parameter in other.parameters { copy.set(parameter.keyword, parameter.value) }
        return copy
    }

    /// The settings as a keyword/value connection string, every value single-quoted with `\`
    /// and `'` escaped (libpq's own quoting), so paths with spaces survive. It holds the
    /// password when one is set: hand it to libpq or psql, never to a log.
    public var connectionString: String {
        parameters.map { "\($0.keyword)=\(Self.quoted($0.value))" }.joined(separator: " ")
    }

    /// The settings with the password replaced by `***`: safe to log.
    public var description: String {
        parameters.map { "\($0.keyword)=\($0.keyword == "password" ? "***" : Self.quoted($0.value))" }.joined(separator: " ")
    }

    /// `value` as a libpq keyword-string value: bare when it is a plain word, else in single
    /// quotes with `\` and `'` escaped (libpq docs, "Keyword/Value Connection Strings").
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/._-:@".unicodeScalars.contains($0))
        }
        if plain { return value }
        var out = "'"
        for character in value {
            if character == "\\" || character == "'" { out.append("\\") }
            out.append(character)
        }
        return out + "'"
    }

    /// A connection failure's message, fit for an error: libpq quotes what it was given
    /// (`invalid sslmode value: "…"`, `could not translate host name "…"`), and a password
    /// with an unencoded `@` ends up in the host. The password is removed wherever it
    /// appears, and a quoted fragment is kept only when it is this connection's host,
    /// socket, port, user or database (and holds no `@`).
    func redacting(_ message: String) -> String {
        var text = message
        if let password = self["password"], !password.isEmpty {
            text = text.replacingOccurrences(of: password, with: "…")
        }
        let known = ["host", "hostaddr", "port", "user", "dbname"].compactMap { self[$0] }
            .flatMap { $0.split(separator: ",").map(String.init) }
            .filter { !$0.isEmpty && !$0.contains("@") }
        return Self.redactingQuotedText(text) { fragment in
            known.contains { fragment == $0 || fragment.hasPrefix($0 + "/") }
        }
    }

    /// libpq's parse errors quote the offending text, which may be part of a password: keep
    /// only quoted text that is `=`, a connection keyword or accepted by `keep`, replace the
    /// rest with `…`.
    static func redactingQuotedText(_ message: String, keep: (String) -> Bool = { _ in false }) -> String {
        var out = ""
        var quoted: String?
        for character in message {
            if character == "\"" {
                if let text = quoted {
                    out += "\"" + (text == "=" || knownKeywords.contains(text) || keep(text) ? text : "…") + "\""
                    quoted = nil
                } else {
                    quoted = ""
                }
            } else if quoted != nil {
                quoted!.append(character)
            } else {
                out.append(character)
            }
        }
        // An unterminated quote: its text goes too.
        if quoted != nil { out += "\"…" }
        return out
    }

    /// Every keyword this libpq knows (`PQconndefaults`).
    static let knownKeywords: Set<String> = {
        guard let defaults = PQconndefaults() else { return [] }
        defer { PQconninfoFree(defaults) }
        var names: Set<String> = []
        var option = defaults
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()
}
