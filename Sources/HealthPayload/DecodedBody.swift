/// What one body decodes to.
public enum DecodedBody: Sendable {
    /// The app's "Test connection" probe: answer `200`, store nothing.
    case probe
    /// One batch (JSON) or one or more batches (CSV, possibly several appended bodies), in order of first appearance.
    case batches([Batch])
}
