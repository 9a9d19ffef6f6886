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
    static func decodeJSON(_ b: UnsafeBufferPointer<UInt8>, latest: Int64) throws(PayloadError) -> DecodedBody {
        let start = bodyStart(b)
        if let bad = UTF8Validation.firstInvalidOffset(b, in: start..<b.count) {
            throw PayloadError("body is not valid UTF-8 (byte \(bad))", problem: .invalidJSON)
        }
        let nodes = try JSONParser.parse(b, range: start..<b.count)
        let root = nodes[0]
        guard root.kind == .object else { throw PayloadError("body is not a JSON object") }

        // Envelope keys; where a key repeats, the last occurrence counts.
        var slots = [Int](repeating: -1, count: EnvelopeKey.allCases.count)
        var k = 1
        while k < root.after {
            let key = nodes[k]
            let found: Int? = key.stringFlags.contains(.escaped)
                ? EnvelopeKey.table.index(of: JSONParser.decodeString(b, key))
                : EnvelopeKey.table.index(of: b, key.contentRange)
            if let found { slots[found] = k + 1 }
            k = nodes[k + 1].after
        }
        func node(_ key: EnvelopeKey) -> JSONNode? {
            slots[key.rawValue] < 0 ? nil : nodes[slots[key.rawValue]]
        }

        // schemaVersion before anything else (reference: "Check it before anything else").
        guard let version = node(.schemaVersion) else { throw PayloadError("schemaVersion is missing; only 1 is accepted") }
        let isOne = version.kind == .number && version.end - version.start == 1 && b[version.start] == UInt8(ascii: "1")
        guard isOne else {
            throw PayloadError("schemaVersion is \(snippet(b, version.start..<version.end)); only 1 is accepted")
        }
        if let probe = node(.connectivityTest), probe.kind == .true { return .probe }

        // Every envelope key present with its type.
        func require(_ key: EnvelopeKey) throws(PayloadError) -> JSONNode {
            guard let n = node(key) else { throw PayloadError("\(key.name) is missing") }
            return n
        }
        func bool(_ key: EnvelopeKey) throws(PayloadError) -> Bool {
            let n = try require(key)
            guard n.kind == .true || n.kind == .false else { throw PayloadError("\(key.name) is not a boolean") }
            return n.kind == .true
        }
        func string(_ key: EnvelopeKey) throws(PayloadError) -> String {
            let n = try require(key)
            guard n.kind == .string else { throw PayloadError("\(key.name) is not a string") }
            if n.stringFlags.contains(.nulEscape) { throw PayloadError("\(key.name) contains the escape \\u0000") }
            if n.stringFlags.contains(.loneSurrogate) { throw PayloadError("\(key.name) contains an unpaired surrogate escape") }
            return JSONParser.decodeString(b, n)
        }
        func timestamp(_ key: EnvelopeKey) throws(PayloadError) -> String {
            let text = try string(key)
            guard Timestamp(text) != nil else {
                throw PayloadError("\(key.name) is not a timestamp like 2026-08-21T10:25:30.000+02:00: \"\(snippet(text))\"")
            }
            return text
        }

        _ = try bool(.connectivityTest)
        let exportId = try string(.exportId)
        guard UUIDText.isValid(exportId) else { throw PayloadError("exportId is not a UUID: \"\(snippet(exportId))\"") }
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
        let envelope = Envelope(
            exportId: exportId, generatedAt: generatedAt, batchSequence: Int(sequence), isFinalBatch: isFinal, basis: basis,
            windowStart: try timestamp(.windowStart), windowEnd: try timestamp(.windowEnd),
            occasionStart: try timestamp(.occasionStart), occasionEnd: try timestamp(.occasionEnd)
        )
        let samplesIndex = slots[EnvelopeKey.samples.rawValue]
        guard samplesIndex >= 0 else { throw PayloadError("samples is missing") }
        let samples = nodes[samplesIndex]
        guard samples.kind == .array else { throw PayloadError("samples is not an array") }

        // Each sample: valid ones are copied byte for byte, the others quarantined verbatim.
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
        return .batches([Batch(format: .json, envelope: envelope, samplesJSON: out, validSampleCount: valid, quarantined: quarantined)])
    }
}
