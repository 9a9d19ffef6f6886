/// The bound on every text that can reach an index: a sample's `type`, `source`, `unit`, `name` or
/// `activityName`, a Stridee text field, an export's `type`, `sourceName`, `unit` (docs/receiver.md).
///
/// PostgreSQL refuses a btree entry over 2,704 bytes (`54000 index row size … exceeds btree
/// maximum`), and `samples (person, type, day, source)` holds two client texts at once: a
/// sample with a long `source` would fail its whole batch on every retry. So each such text is
/// checked where it enters — a healthd sample is quarantined, a Stridee body refused with `400`,
/// an export record quarantined, a file or command-line value refused — with a reason naming the
/// field and its length in UTF-8 bytes. Two texts at the bound plus a person name (at most 64
/// bytes, `PersonName`) fit one index entry even when nothing compresses.
public enum TextLimit {
    /// The most UTF-8 bytes a text that reaches an index may hold.
    public static let maxBytes = 1024

    /// `3000 bytes, at most 1024` when `byteCount` is over the bound; nil within it.
    public static func excess(byteCount: Int) -> String? {
        byteCount > maxBytes ? "\(byteCount) bytes, at most \(maxBytes)" : nil
    }

    /// `excess(byteCount:)` of a text's UTF-8 length.
    public static func excess(_ text: some StringProtocol) -> String? {
        excess(byteCount: text.utf8.count)
    }
}
