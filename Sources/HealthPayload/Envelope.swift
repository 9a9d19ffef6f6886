/// A batch's envelope, values as sent (timestamps as their exact text).
///
/// The same nine values arrive on every CSV row and once per JSON body; `schemaVersion` (always 1)
/// and `connectivityTest` (always false on a batch) are not kept.
public struct Envelope: Sendable, Equatable {
    /// The export run's UUID, as sent (the reference sends it uppercase).
    public var exportId: String
    /// When the run's batches were built, as sent.
    public var generatedAt: String
    /// The 1-based position of this batch in its run; fits `Int32`.
    public var batchSequence: Int
    /// `true` on the last batch of the run only.
    public var isFinalBatch: Bool
    /// `window` or `anchor` today; any non-empty text is accepted.
    public var basis: String
    /// No sample in the batch starts before it.
    public var windowStart: String
    /// No sample in the batch ends after it.
    public var windowEnd: String
    /// Start of the run this batch belongs to: a label, not a filter.
    public var occasionStart: String
    /// End of the run this batch belongs to.
    public var occasionEnd: String

    /// Creates an envelope from its nine values.
    public init(
        exportId: String, generatedAt: String, batchSequence: Int, isFinalBatch: Bool, basis: String,
        windowStart: String, windowEnd: String, occasionStart: String, occasionEnd: String
    ) {
        self.exportId = exportId
        self.generatedAt = generatedAt
        self.batchSequence = batchSequence
        self.isFinalBatch = isFinalBatch
        self.basis = basis
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.occasionStart = occasionStart
        self.occasionEnd = occasionEnd
    }

    /// A JSON object with exactly these nine keys (exportId, generatedAt, batchSequence,
    /// isFinalBatch, basis, windowStart, windowEnd, occasionStart, occasionEnd), properly escaped.
    public var jsonText: String {
        var out = "{\"exportId\":"
        JSONString.append(quoting: exportId, to: &out)
        out += ",\"generatedAt\":"
        JSONString.append(quoting: generatedAt, to: &out)
        out += ",\"batchSequence\":"
        out += String(batchSequence)
        out += ",\"isFinalBatch\":"
        out += isFinalBatch ? "true" : "false"
        out += ",\"basis\":"
        JSONString.append(quoting: basis, to: &out)
        out += ",\"windowStart\":"
        JSONString.append(quoting: windowStart, to: &out)
        out += ",\"windowEnd\":"
        JSONString.append(quoting: windowEnd, to: &out)
        out += ",\"occasionStart\":"
        JSONString.append(quoting: occasionStart, to: &out)
        out += ",\"occasionEnd\":"
        JSONString.append(quoting: occasionEnd, to: &out)
        out += "}"
        return out
    }
}
