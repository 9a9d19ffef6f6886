import HealthPayload

/// An element's attributes, copied out of the parser in the order written.
struct ElementAttributes: Sendable {
    var pairs: [(name: String, value: String)] = []

    init(_ element: XMLStartElement) {
        pairs.reserveCapacity(element.attributeCount)
        for i in 0..<element.attributeCount {
            let a = element.attribute(i)
            pairs.append((String(cString: a.name), XMLBytes.text(a.value)))
        }
    }

    init(pairs: [(name: String, value: String)]) {
        self.pairs = pairs
    }

    /// The value of the attribute `name`; nil when absent.
    subscript(_ name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }
}

/// A `Record` element: its attributes, `MetadataEntry` children and HRV beat list.
struct ExportRecord: Sendable {
    var attributes: ElementAttributes
    var metadata: [(key: String, value: String)] = []
    var beats: [(bpm: String, time: String)] = []
    /// The line of its start tag.
    var line: Int
}

/// A `Workout` element with what it holds.
struct ExportWorkout: Sendable {
    var attributes: ElementAttributes
    var metadata: [(key: String, value: String)] = []
    var events: [ElementAttributes] = []
    var statistics: [ElementAttributes] = []
    var activities: [ElementAttributes] = []
    /// The `WorkoutRoute` elements' own attributes.
    var routes: [ElementAttributes] = []
    /// The route files `FileReference`s name, in order, each once.
    var routeFiles: [String] = []
    /// Points of inline `Location` elements (exports before iOS 13).
    var inlineRoute = WorkoutRoute()
    var line: Int
}

/// An `ActivitySummary` element.
struct ExportActivitySummary: Sendable {
    var attributes: ElementAttributes
    var line: Int
}

/// Something of the export that is not stored as a sample: named with its line, and left out —
/// skipped when it could not be read at all (malformed XML, a route file), or quarantined (kept
/// in `health.quarantine` with its reason) when it was read but cannot be stored as a sample, as
/// a healthd sample would be.
public struct SkippedElement: Sendable, Equatable, CustomStringConvertible {
    /// The element's name (`Record`, `Workout`, …), or what else it was (`text`, a route file).
    public var name: String
    /// The line in the export document (0 when it has none: a route file).
    public var line: Int
    /// Why it was left out.
    public var reason: String
    /// True for a record, workout or activity summary quarantined (kept with its reason), not skipped.
    public var isQuarantined: Bool
    /// For a quarantined element: true when a bound every way in applies refused it (a text over
    /// 1,024 bytes, an implausible value or date), so no sample held can be its twin; false when
    /// something it holds could not be read (an attribute missing, a date or number that is not
    /// one, a unit with no conversion), so a sample held may be the reading it stands for.
    public var isBound: Bool

    /// A skipped (or, with `isQuarantined`, quarantined) element.
    public init(name: String, line: Int, reason: String, isQuarantined: Bool = false, isBound: Bool = false) {
        self.name = name
        self.line = line
        self.reason = reason
        self.isQuarantined = isQuarantined
        self.isBound = isBound
    }

    /// A record, workout or activity summary the mapping refused: quarantined.
    init(name: String, line: Int, refused failure: MappingFailure) {
        self.init(name: name, line: line, reason: failure.reason, isQuarantined: true, isBound: failure.isBound)
    }

    /// `line 5: Record skipped: attributes construct error`, `line 9: Record quarantined: …`
    public var description: String {
        let what = "\(name) \(isQuarantined ? "quarantined" : "skipped"): \(reason)"
        return line > 0 ? "line \(line): " + what : what
    }
}

/// One unit of an export, in document order: the import's position counts these.
enum ExportItem: Sendable {
    case record(ExportRecord)
    case workout(ExportWorkout)
    case activitySummary(ExportActivitySummary)
    /// An element that could not be read (a Record among them counts as a Record read).
    case skipped(SkippedElement)
}
