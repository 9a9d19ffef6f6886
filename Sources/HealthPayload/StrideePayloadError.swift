/// Why a Stridee body (`healthkit.v1` or `healthkit.wellness.v1`) is refused, and where.
///
/// `path` names the field as data, indexes from 0 (`route[3].lat`, `items[12]`, `uuid`; empty for
/// the body as a whole); `description` joins it to the problem as docs/stridee.md words it:
/// `route[3].lat: 95.2 is outside [-90, 90]`. Never more than a short, escaped snippet of the
/// body, so it is safe to log and to answer in `{"error": …}`.
public struct StrideePayloadError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of refusal it is: the one thing the receiver maps to a status code.
    public enum Reason: Sendable, Equatable {
        /// Malformed JSON, a field missing, mistyped or out of range (`400`).
        case invalid
        /// `format` is neither absent, `null`, nor the body's own format name (`400`).
        case unsupportedFormat
        /// A wellness body with more than `StrideeDecoder.maxWellnessItems` items (`413`).
        case tooManyItems
    }

    /// What kind of refusal it is.
    public var reason: Reason
    /// The field, e.g. `route[3].lat`; empty when the problem is the body as a whole.
    public var path: String
    /// What is wrong with it, e.g. `95.2 is outside [-90, 90]`.
    public var problem: String

    /// Creates an error.
    public init(_ reason: Reason = .invalid, path: String, _ problem: String) {
        self.reason = reason
        self.path = path
        self.problem = problem
    }

    /// `path: problem`, or the problem alone for the body as a whole.
    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}
