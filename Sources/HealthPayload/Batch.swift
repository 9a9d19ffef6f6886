/// One decoded batch: its envelope, its valid samples as one JSON array, and its quarantined samples.
public struct Batch: Sendable {
    /// The format the batch arrived in.
    public var format: PayloadFormat
    /// The batch's envelope.
    public var envelope: Envelope
    /// UTF-8 JSON array of the valid samples. JSON: each element is the exact byte slice of the sample object in the body (no re-serialization: docs/architecture.md, "Decisions"). CSV: the sample object built from the row.
    /// Guaranteed castable to PostgreSQL jsonb without error, and each known numeric key castable to
    /// `double precision` / `integer` (see `PayloadDecoder` for the rules).
    public var samplesJSON: [UInt8]
    /// How many objects `samplesJSON` holds.
    public var validSampleCount: Int
    /// The samples that broke the contract, in batch order.
    public var quarantined: [QuarantinedSample]
    /// Every sample the batch carried: valid plus quarantined.
    public var sampleCount: Int { validSampleCount + quarantined.count }

    /// Creates a batch.
    public init(format: PayloadFormat, envelope: Envelope, samplesJSON: [UInt8], validSampleCount: Int, quarantined: [QuarantinedSample]) {
        self.format = format
        self.envelope = envelope
        self.samplesJSON = samplesJSON
        self.validSampleCount = validSampleCount
        self.quarantined = quarantined
    }
}
