/// A sample that breaks the contract: kept verbatim with the reason, while the rest of its batch is stored.
public struct QuarantinedSample: Sendable, Equatable {
    /// 1-based position of the sample within its batch (JSON: index in `samples`; CSV: the row's index among its batch's rows).
    public var position: Int
    /// Names the key and what is wrong, e.g. "uuid is not a UUID", "value is missing (kind quantity)".
    public var reason: String
    /// The sample exactly as sent: the JSON object's bytes, or the CSV record's bytes without its terminator. Valid UTF-8, no NUL.
    public var raw: String

    /// Creates a quarantined sample.
    public init(position: Int, reason: String, raw: String) {
        self.position = position
        self.reason = reason
        self.raw = raw
    }
}
