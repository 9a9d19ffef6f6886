/// The two body formats healthd sends (reference "Receiver setup": `Content-Type` picks one).
public enum PayloadFormat: String, Sendable {
    /// `application/json`: one envelope object per body.
    case json
    /// `text/csv; charset=utf-8`: a header row, then one row per sample with the envelope repeated.
    case csv
}
