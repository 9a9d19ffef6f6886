/// The twelve envelope keys of a JSON body (reference "The envelope").
enum EnvelopeKey: Int, CaseIterable {
    case schemaVersion, connectivityTest, exportId, generatedAt, batchSequence, isFinalBatch
    case basis, windowStart, windowEnd, occasionStart, occasionEnd, samples

    /// The key as spelled in JSON and in the CSV header.
    var name: String {
        switch self {
        case .schemaVersion: "schemaVersion"
        case .connectivityTest: "connectivityTest"
        case .exportId: "exportId"
        case .generatedAt: "generatedAt"
        case .batchSequence: "batchSequence"
        case .isFinalBatch: "isFinalBatch"
        case .basis: "basis"
        case .windowStart: "windowStart"
        case .windowEnd: "windowEnd"
        case .occasionStart: "occasionStart"
        case .occasionEnd: "occasionEnd"
        case .samples: "samples"
        }
    }

    /// Lookup by bytes.
    static let table = KeyTable(allCases.map(\.name))
}

extension PayloadDecoder {
    /// A JSON body → its one batch: the envelope checked in the reference's order
    /// (`JSONEnvelopeReader`), then each sample (`jsonBatch`).
    static func decodeJSON(_ b: UnsafeBufferPointer<UInt8>, latest: Int64) throws(PayloadError) -> DecodedBody {
        let start = bodyStart(b)
        if let bad = UTF8Validation.firstInvalidOffset(b, in: start..<b.count) {
            throw PayloadError("body is not valid UTF-8 (byte \(bad))", problem: .invalidJSON)
        }
        let nodes = try JSONParser.parse(b, range: start..<b.count)
        guard nodes[0].kind == .object else { throw PayloadError("body is not a JSON object") }
        let reader = JSONEnvelopeReader(b, nodes)

        // schemaVersion before anything else (reference: "Check it before anything else").
        try reader.checkSchemaVersion()
        if let probe = reader.node(.connectivityTest), probe.kind == .true { return .probe }
        let envelope = try reader.envelope()
        let samplesIndex = reader.slots[EnvelopeKey.samples.rawValue]
        guard samplesIndex >= 0 else { throw PayloadError("samples is missing") }
        guard nodes[samplesIndex].kind == .array else { throw PayloadError("samples is not an array") }
        return .batches([jsonBatch(b, nodes, samples: samplesIndex, envelope, latest: latest)])
    }

    /// The batch of the `samples` array at `nodes[samplesIndex]`: valid samples are copied byte
    /// for byte, the others quarantined verbatim.
    private static func jsonBatch(_ b: UnsafeBufferPointer<UInt8>, _ nodes: [JSONNode], samples samplesIndex: Int,
                                  _ envelope: Envelope, latest: Int64) -> Batch {
        let samples = nodes[samplesIndex]
        var out: [UInt8] = []
        out.reserveCapacity(samples.end - samples.start)
        out.append(UInt8(ascii: "["))
        var valid = 0
        var quarantined: [QuarantinedSample] = []
        var position = 0
        var s = samplesIndex + 1
        while s < samples.after {
            position += 1
            let sample = nodes[s]
            let raw = UnsafeBufferPointer(rebasing: b[sample.start..<sample.end])
            if let reason = SampleValidator.reason(b, nodes, s, latest: latest) {
                quarantined.append(QuarantinedSample(position: position, reason: reason, raw: String(decoding: raw, as: UTF8.self)))
            } else {
                if valid > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: raw)
                valid += 1
            }
            s = sample.after
        }
        out.append(UInt8(ascii: "]"))
        return Batch(format: .json, envelope: envelope, samplesJSON: out, validSampleCount: valid, quarantined: quarantined)
    }
}

/// The envelope members of a parsed JSON body (whose root object is `nodes[0]`), read by key.
private struct JSONEnvelopeReader {
    let b: UnsafeBufferPointer<UInt8>
    let nodes: [JSONNode]
    /// The value node of each `EnvelopeKey`, or -1; where a key repeats, the last occurrence counts.
    let slots: [Int]

    init(_ b: UnsafeBufferPointer<UInt8>, _ nodes: [JSONNode]) {
        self.b = b
        self.nodes = nodes
        var slots = [Int](repeating: -1, count: EnvelopeKey.allCases.count)
        var k = 1
        while k < nodes[0].after {
            let key = nodes[k]
            let found: Int? = key.stringFlags.contains(.escaped)
                ? EnvelopeKey.table.index(of: JSONParser.decodeString(b, key))
                : EnvelopeKey.table.index(of: b, key.contentRange)
            if let found { slots[found] = k + 1 }
            k = nodes[k + 1].after
        }
        self.slots = slots
    }

    /// The value of `key`, or nil when the body has none.
    func node(_ key: EnvelopeKey) -> JSONNode? {
        slots[key.rawValue] < 0 ? nil : nodes[slots[key.rawValue]]
    }

    /// Only schemaVersion 1 is accepted.
    func checkSchemaVersion() throws(PayloadError) {
        guard let version = node(.schemaVersion) else { throw PayloadError("schemaVersion is missing; only 1 is accepted") }
        let isOne = version.kind == .number && version.end - version.start == 1 && b[version.start] == UInt8(ascii: "1")
        guard isOne else {
            throw PayloadError("schemaVersion is \(PayloadDecoder.snippet(b, version.start..<version.end)); only 1 is accepted")
        }
    }

    /// Every envelope key but `samples` present with its type, in the reference's order.
    func envelope() throws(PayloadError) -> Envelope {
        _ = try bool(.connectivityTest)
        let exportId = try string(.exportId)
        guard UUIDText.isValid(exportId) else { throw PayloadError("exportId is not a UUID: \"\(PayloadDecoder.snippet(exportId))\"") }
        let generatedAt = try timestamp(.generatedAt)
        let sequenceNode = try require(.batchSequence)
        guard sequenceNode.kind == .number, sequenceNode.numberInfo.contains(.integer) else {
            throw PayloadError("batchSequence is not an integer")
        }
        guard let sequence = JSONNumber.int32Value(b, sequenceNode.start..<sequenceNode.end) else {
            throw PayloadError("batchSequence does not fit a 32-bit integer")
        }
        guard sequence >= 1 else { throw PayloadError("batchSequence is \(sequence); it must be at least 1") }
        let isFinal = try bool(.isFinalBatch)
        let basis = try string(.basis)
        guard !basis.isEmpty else { throw PayloadError("basis is empty") }
        return Envelope(
            exportId: exportId, generatedAt: generatedAt, batchSequence: Int(sequence), isFinalBatch: isFinal, basis: basis,
            windowStart: try timestamp(.windowStart), windowEnd: try timestamp(.windowEnd),
            occasionStart: try timestamp(.occasionStart), occasionEnd: try timestamp(.occasionEnd)
        )
    }

    private func require(_ key: EnvelopeKey) throws(PayloadError) -> JSONNode {
        guard let n = node(key) else { throw PayloadError("\(key.name) is missing") }
        return n
    }

    private func bool(_ key: EnvelopeKey) throws(PayloadError) -> Bool {
        let n = try require(key)
        guard n.kind == .true || n.kind == .false else { throw PayloadError("\(key.name) is not a boolean") }
        return n.kind == .true
    }

    private func string(_ key: EnvelopeKey) throws(PayloadError) -> String {
        let n = try require(key)
        guard n.kind == .string else { throw PayloadError("\(key.name) is not a string") }
        if n.stringFlags.contains(.nulEscape) { throw PayloadError("\(key.name) contains the escape \\u0000") }
        if n.stringFlags.contains(.loneSurrogate) { throw PayloadError("\(key.name) contains an unpaired surrogate escape") }
        return JSONParser.decodeString(b, n)
    }

    private func timestamp(_ key: EnvelopeKey) throws(PayloadError) -> String {
        let text = try string(key)
        guard Timestamp(text) != nil else {
            throw PayloadError("\(key.name) is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"\(PayloadDecoder.snippet(text))\"")
        }
        return text
    }
}
