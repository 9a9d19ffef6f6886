/// Short keys (A, B, … Z, AA, AB, …) for the sources named on a page, so a table can name a
/// day's winner in a cell and the full names stand once, in the legend above it: the name people
/// know a source by (`health.sources`), with its identifier (a bundle identifier, often 50
/// characters) one hover away.
struct SourceKeys {
    /// The sources' identifiers in byte order, each with its key.
    private(set) var names: [String] = []
    private var keys: [String: String] = [:]
    /// Names shown for identifiers that have one.
    private let shownNames: [String: String]

    /// Keys for `sources`, given in byte order of the identifiers; `shownNames` the names of those
    /// that have one.
    init<S: Sequence>(_ sources: S, shownNames: [String: String] = [:]) where S.Element == String {
        names = Array(Set(sources)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for (index, name) in names.enumerated() { keys[name] = Self.key(index) }
        self.shownNames = shownNames
    }

    /// The key of `source`.
    subscript(source: String) -> String { keys[source] ?? "?" }

    /// The legend: each key and its source as `shown` writes it.
    func legend() -> String {
        var out = "<dl class=\"sources\">"
        for name in names {
            out += "<div><dt>\(self[name])</dt><dd>\(Self.shown(name, as: shownNames[name]))</dd></div>"
        }
        return out + "</dl>"
    }

    /// A source as the page writes it: its name with the identifier as the element's title (on
    /// hover), or the identifier when it has no name; both escaped.
    static func shown(_ source: String, as name: String?) -> String {
        guard let name, name != source else { return HTML.escape(source) }
        return "<span class=\"named\" title=\"\(HTML.escape(source))\">\(HTML.escape(name))</span>"
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
