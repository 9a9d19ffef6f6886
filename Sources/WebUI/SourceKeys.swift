/// Short keys (A, B, … Z, AA, AB, …) for the sources named on a page, so a table can name a
/// day's winner in a cell and the full names (bundle identifiers, often 50 characters) stand
/// once, in the legend above it.
struct SourceKeys {
    /// The sources in byte order, each with its key.
    private(set) var names: [String] = []
    private var keys: [String: String] = [:]

    /// Keys for `sources`, given in byte order of the names.
    init<S: Sequence>(_ sources: S) where S.Element == String {
        names = Array(Set(sources)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, name) in names.enumerated() { keys[name] = Self.key(index) }
    }

    /// The key of `source`.
    subscript(source: String) -> String { keys[source] ?? "?" }

    /// The legend: each key and its full name, escaped.
    func legend() -> String {
        var out = "<dl class=\"sources\">"
        for name in names {
            out += "<div><dt>\(self[name])</dt><dd>\(HTML.escape(name))</dd></div>"
        }
        return out + "</dl>"
    }

    /// A, B, … Z, AA, AB, … for 0, 1, 2, …
    static func key(_ index: Int) -> String {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        var n = index
        var out = ""
        repeat {
            out = String(letters[n % 26]) + out
            n = n / 26 - 1
        } while n >= 0
        return out
    }
}
