/// The envelope columns of a CSV document (reference "The columns"): never sample keys.
enum CSVEnvelopeColumn: Int, CaseIterable {
    case schemaVersion, exportId, generatedAt, batchSequence, isFinalBatch, windowStart, windowEnd, basis, occasionStart, occasionEnd

    /// The column name in the header.
    var name: String {
        switch self {
        case .schemaVersion: "schemaVersion"
        case .exportId: "exportId"
        case .generatedAt: "generatedAt"
        case .batchSequence: "batchSequence"
        case .isFinalBatch: "isFinalBatch"
        case .windowStart: "windowStart"
        case .windowEnd: "windowEnd"
        case .basis: "basis"
        case .occasionStart: "occasionStart"
        case .occasionEnd: "occasionEnd"
        }
    }

    /// Lookup by name.
    static let table = KeyTable(allCases.map(\.name))
}

/// Where each header column goes.
private struct CSVColumns {
    /// Column index of each envelope column (all present once validated).
    var envelope: [Int]
    /// Column index of each known sample key, or -1.
    var sample: [Int]
    /// Unknown columns: index and the key written for it (`"name":`).
    var unknown: [(index: Int, keyPrefix: [UInt8])]
}

/// A batch being assembled from the rows that state it.
private struct CSVBatchBuilder {
    var envelope: Envelope
    var samplesJSON: [UInt8] = [UInt8(ascii: "[")]
    var valid = 0
    var rows = 0
    var quarantined: [QuarantinedSample] = []
}

/// The batch a row states.
private struct CSVBatchKey: Hashable {
    var exportId: String
    var sequence: Int
}

extension PayloadDecoder {
    /// The longest header name accepted, in bytes. The reference's longest is 24
    /// (`activeEnergyKilocalories`); an unknown column's name is repeated as a key in every
    /// sample, so its length multiplies the body.
    public static let csvMaxColumnNameBytes = 256
    /// The most columns a CSV header may have (the reference has 26).
    public static let csvMaxColumns = 1024
    /// The samples built from a CSV body (the JSON arrays `store_batch` takes) may be at most
    /// this many times the body's size (at least `csvExpansionFloor` bytes). The app's bodies
    /// build less than their own size: each row's envelope is not repeated in its sample.
    public static let csvMaxExpansion = 4
    /// The least the samples of a small body may take, in bytes.
    public static let csvExpansionFloor = 65_536

    static func decodeCSV(_ body: [UInt8], latest: Int64) throws(PayloadError) -> DecodedBody {
        try body.withUnsafeBufferPointer { (b) throws(PayloadError) -> DecodedBody in
            var scanner = CSVScanner(start: bodyStart(b))
            var refs: [CSVFieldRef] = []
            refs.reserveCapacity(b.count / 16)
            var records: [CSVRawRecord] = []
            var width = 0
            while let record = try scanner.next(b, into: &refs) {
                if record.isBlank {
                    refs.removeSubrange(record.fields)  // an empty line carries nothing
                    continue
                }
                if records.isEmpty {
                    // The header is checked before anything after it is read.
                    try checkHeaderSize(record, refs)
                    width = record.fields.count
                } else if record.fields.count != width {
                    // Every other record is a row or a repeated header: the header's width.
                    throw PayloadError("\(record.fields.count) fields; the header has \(width)", at: record.location)
                }
                records.append(record)
            }
            let limit = max(b.count.multipliedReportingOverflow(by: csvMaxExpansion).overflow ? Int.max : b.count * csvMaxExpansion,
                            csvExpansionFloor)
            return try scanner.side.withUnsafeBufferPointer { (side) throws(PayloadError) -> DecodedBody in
                try decodeCSVRecords(records, refs, CSVFieldBytes(input: b, side: side), expansionLimit: limit, latest: latest)
            }
        }
    }

    /// Refuses a header whose names or width would let the body expand without bound.
    private static func checkHeaderSize(_ header: CSVRawRecord, _ refs: [CSVFieldRef]) throws(PayloadError) {
        if header.fields.count > csvMaxColumns {
            throw PayloadError("the header has \(header.fields.count) columns; at most \(csvMaxColumns) are accepted",
                               problem: .tooLarge, at: header.location)
        }
        for (k, ref) in refs[header.fields].enumerated() where ref.end - ref.start > csvMaxColumnNameBytes {
            throw PayloadError("the header's column \(k + 1) has a name of \(ref.end - ref.start) bytes; at most \(csvMaxColumnNameBytes) are accepted",
                               problem: .tooLarge, at: header.location)
        }
    }

    /// The batches of a scanned body: repeated headers dropped, schemaVersion and the envelope
    /// columns checked (`checkCSVEnvelopeColumns`), then each row added to its batch (`CSVBatches`).
    private static func decodeCSVRecords(_ records: [CSVRawRecord], _ refs: [CSVFieldRef], _ f: CSVFieldBytes,
                                         expansionLimit: Int, latest: Int64) throws(PayloadError) -> DecodedBody {
        guard let header = records.first else { throw PayloadError("body is empty; expected a CSV header row") }
        let columns = try csvColumns(refs[header.fields].map(f.string), header)
        let width = header.fields.count

        // Appended bodies: every body repeats the header row (reference "Appending bodies to one file").
        let rows = records.dropFirst().filter { record in
            for k in 0..<width where !f.equal(refs[record.fields.lowerBound + k], refs[header.fields.lowerBound + k]) {
                return true
            }
            return false
        }
        if rows.isEmpty { return .probe }
        try checkCSVEnvelopeColumns(rows, header, columns, refs, f)

        var batches = CSVBatches(columns: columns, refs: refs, f: f, expansionLimit: expansionLimit, latest: latest)
        for row in rows {
            try batches.add(row)
        }
        return .batches(batches.finished())
    }

    /// schemaVersion on every row before anything else (a later version may rename other
    /// columns), then every envelope column in the header.
    private static func checkCSVEnvelopeColumns(_ rows: [CSVRawRecord], _ header: CSVRawRecord, _ columns: CSVColumns,
                                                _ refs: [CSVFieldRef], _ f: CSVFieldBytes) throws(PayloadError) {
        let versionColumn = columns.envelope[CSVEnvelopeColumn.schemaVersion.rawValue]
        guard versionColumn >= 0 else { throw PayloadError("the header has no schemaVersion column", at: header.location) }
        for row in rows {
            let cell = f[refs[row.fields.lowerBound + versionColumn]]
            if !(cell.count == 1 && cell[0] == UInt8(ascii: "1")) {
                throw PayloadError("schemaVersion is \"\(snippet(String(decoding: cell, as: UTF8.self)))\"; only 1 is accepted", at: row.location)
            }
        }
        for column in CSVEnvelopeColumn.allCases where columns.envelope[column.rawValue] < 0 {
            throw PayloadError("the header has no \(column.name) column", at: header.location)
        }
    }

    /// Maps header columns by name; rejects a header without `uuid` (first: a body without its
    /// header row has a data row there, whose cells may well repeat) or with a repeated name.
    private static func csvColumns(_ names: [String], _ header: CSVRawRecord) throws(PayloadError) -> CSVColumns {
        guard names.contains("uuid") else {
            throw PayloadError("the header has no uuid column; is this a healthd CSV body, its header row first?", at: header.location)
        }
        var seen = Set<String>()
        var columns = CSVColumns(
            envelope: [Int](repeating: -1, count: CSVEnvelopeColumn.allCases.count),
            sample: [Int](repeating: -1, count: SampleKey.allCases.count),
            unknown: []
        )
        for (index, name) in names.enumerated() {
            guard seen.insert(name).inserted else {
                throw PayloadError("the header repeats the column \"\(snippet(name))\"", at: header.location)
            }
            if let e = CSVEnvelopeColumn.table.index(of: name) {
                columns.envelope[e] = index
            } else if let s = SampleKey.table.index(of: name) {
                columns.sample[s] = index
            } else {
                var prefix: [UInt8] = []
                JSONString.append(quoting: name, to: &prefix)
                prefix.append(UInt8(ascii: ":"))
                columns.unknown.append((index, prefix))
            }
        }
        return columns
    }

    /// Parses and checks one row's envelope cells (in `CSVEnvelopeColumn` order).
    fileprivate static func csvEnvelope(_ row: CSVRawRecord, _ cells: [String]) throws(PayloadError) -> Envelope {
        func cell(_ column: CSVEnvelopeColumn) -> String { cells[column.rawValue] }
        func fail(_ column: CSVEnvelopeColumn, _ what: String) -> PayloadError {
            PayloadError("\(column.name) \(what): \"\(snippet(cell(column)))\"", at: row.location)
        }
        func timestamp(_ column: CSVEnvelopeColumn) throws(PayloadError) -> String {
            guard Timestamp(cell(column)) != nil else { throw fail(column, "is not a timestamp like 2026-08-21T10:25:30.000+02:00") }
            return cell(column)
        }
        let exportId = cell(.exportId)
        guard UUIDText.isValid(exportId) else { throw fail(.exportId, "is not a UUID") }
        let generatedAt = try timestamp(.generatedAt)
        var sequenceText = cell(.batchSequence)
        let sequence: Int32? = sequenceText.withUTF8 { s in
            guard let info = JSONNumber.isLiteral(s, 0..<s.count), info.contains(.integer) else { return nil }
            return JSONNumber.int32Value(s, 0..<s.count)
        }
        guard let sequence, sequence >= 1 else { throw fail(.batchSequence, "is not an integer from 1 to 2147483647") }
        let isFinal: Bool
        switch cell(.isFinalBatch) {
        case "true": isFinal = true
        case "false": isFinal = false
        default: throw fail(.isFinalBatch, "is not true or false")
        }
        let basis = cell(.basis)
        guard !basis.isEmpty else { throw PayloadError("basis is empty", at: row.location) }
        return Envelope(
            exportId: exportId, generatedAt: generatedAt, batchSequence: Int(sequence), isFinalBatch: isFinal, basis: basis,
            windowStart: try timestamp(.windowStart), windowEnd: try timestamp(.windowEnd),
            occasionStart: try timestamp(.occasionStart), occasionEnd: try timestamp(.occasionEnd)
        )
    }

    /// The first envelope column whose value differs, or nil.
    fileprivate static func differingColumn(_ a: Envelope, _ b: Envelope) -> String? {
        if a.generatedAt != b.generatedAt { return "generatedAt" }
        if a.isFinalBatch != b.isFinalBatch { return "isFinalBatch" }
        if a.basis != b.basis { return "basis" }
        if a.windowStart != b.windowStart { return "windowStart" }
        if a.windowEnd != b.windowEnd { return "windowEnd" }
        if a.occasionStart != b.occasionStart { return "occasionStart" }
        if a.occasionEnd != b.occasionEnd { return "occasionEnd" }
        return nil
    }

    /// Writes the sample object a row stands for: known keys in reference order, then unknown columns
    /// as strings. An empty cell is an absent key. A numeric column's cell that is a JSON number
    /// literal is written as that literal (CSV spells numbers as JSON does); any other text is written as
    /// a string, which the validator then quarantines where the key must be a number.
    fileprivate static func buildSample(_ cells: ArraySlice<CSVFieldRef>, _ columns: CSVColumns, _ f: CSVFieldBytes, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(UInt8(ascii: "{"))
        var first = true
        let base = cells.startIndex
        for key in SampleKey.allCases {
            let column = columns.sample[key.rawValue]
            guard column >= 0 else { continue }
            let cell = f[cells[base + column]]
            guard !cell.isEmpty else { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(contentsOf: Self.sampleKeyPrefixes[key.rawValue])
            switch key {
            case .value, .activityType, .durationSeconds, .distanceMeters, .activeEnergyKilocalories:
                if JSONNumber.isLiteral(cell, 0..<cell.count) != nil {
                    out.append(contentsOf: cell)
                } else {
                    JSONString.append(quotingUTF8: cell, to: &out)
                }
            default:
                JSONString.append(quotingUTF8: cell, to: &out)
            }
        }
        for (index, prefix) in columns.unknown {
            let cell = f[cells[base + index]]
            guard !cell.isEmpty else { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(contentsOf: prefix)
            JSONString.append(quotingUTF8: cell, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `"key":` for each known sample key.
    private static let sampleKeyPrefixes: [[UInt8]] = SampleKey.allCases.map { Array("\"\($0.name)\":".utf8) }
}

/// The batches of one CSV body, assembled row by row: each row joins the batch its envelope
/// states, and its sample is built, checked and appended there or quarantined.
private struct CSVBatches {
    let columns: CSVColumns
    let refs: [CSVFieldRef]
    let f: CSVFieldBytes
    /// The most bytes the valid samples may take (`PayloadDecoder.csvMaxExpansion`).
    let expansionLimit: Int
    let latest: Int64
    var builders: [CSVBatchBuilder] = []
    var indexOfBatch: [CSVBatchKey: Int] = [:]
    /// The last row added and its batch.
    var previous: (row: CSVRawRecord, batch: Int)?
    /// The current row's sample as JSON text, and its nodes: reused from row to row.
    var scratch: [UInt8] = []
    var nodes: [JSONNode] = []
    /// Bytes the valid samples take so far, with their separators.
    var built = 0

    init(columns: CSVColumns, refs: [CSVFieldRef], f: CSVFieldBytes, expansionLimit: Int, latest: Int64) {
        self.columns = columns
        self.refs = refs
        self.f = f
        self.expansionLimit = expansionLimit
        self.latest = latest
        scratch.reserveCapacity(1024)
        nodes.reserveCapacity(64)
    }

    /// Adds one row's sample to its batch.
    mutating func add(_ row: CSVRawRecord) throws(PayloadError) {
        let batchIndex = try batch(of: row)
        previous = (row, batchIndex)
        try addSample(row, to: batchIndex)
    }

    /// The batches, in the order their first rows came.
    func finished() -> [Batch] {
        builders.map { builder in
            var json = builder.samplesJSON
            json.append(UInt8(ascii: "]"))
            return Batch(format: .csv, envelope: builder.envelope, samplesJSON: json, validSampleCount: builder.valid, quarantined: builder.quarantined)
        }
    }

    /// The index of the batch the row states, opened at its first row; its other envelope cells
    /// must match the batch's.
    private mutating func batch(of row: CSVRawRecord) throws(PayloadError) -> Int {
        // Consecutive rows usually repeat their envelope: parse it only when a cell changes.
        if let previous, columns.envelope.allSatisfy({ f.equal(refs[row.fields.lowerBound + $0], refs[previous.row.fields.lowerBound + $0]) }) {
            return previous.batch
        }
        let envelope = try PayloadDecoder.csvEnvelope(row, columns.envelope.map { f.string(refs[row.fields.lowerBound + $0]) })
        let key = CSVBatchKey(exportId: envelope.exportId, sequence: envelope.batchSequence)
        if let existing = indexOfBatch[key] {
            if let column = PayloadDecoder.differingColumn(builders[existing].envelope, envelope) {
                throw PayloadError("\(column) differs from earlier rows of the same batch (exportId \(envelope.exportId), batchSequence \(envelope.batchSequence))",
                                   at: row.location)
            }
            return existing
        }
        let opened = builders.count
        indexOfBatch[key] = opened
        builders.append(CSVBatchBuilder(envelope: envelope))
        return opened
    }

    /// The sample object, built as JSON text and checked by the same rules as a JSON sample:
    /// appended to the batch, or quarantined with the row's text.
    private mutating func addSample(_ row: CSVRawRecord, to batchIndex: Int) throws(PayloadError) {
        PayloadDecoder.buildSample(refs[row.fields], columns, f, into: &scratch)
        builders[batchIndex].rows += 1
        let reason: String?
        do throws(PayloadError) {
            nodes = try scratch.withUnsafeBufferPointer { (s) throws(PayloadError) -> [JSONNode] in
                try JSONParser.parse(s, range: 0..<s.count, reusing: nodes)
            }
            reason = scratch.withUnsafeBufferPointer { SampleValidator.reason($0, nodes, 0, latest: latest) }
        } catch {
            // Cannot happen: every piece is escaped or a checked number literal. Quarantine rather than crash.
            reason = "the row could not be turned into a JSON object (\(error.message))"
        }
        if let reason {
            let raw = String(decoding: UnsafeBufferPointer(rebasing: f.input[row.byteRange]), as: UTF8.self)
            builders[batchIndex].quarantined.append(QuarantinedSample(position: builders[batchIndex].rows, reason: reason, raw: raw))
        } else {
            built += scratch.count + 1
            if built > expansionLimit {
                throw PayloadError("the samples built from this body would take more than \(PayloadDecoder.csvMaxExpansion) times its \(f.input.count) bytes "
                                   + "(every row repeats the header's names as keys)", problem: .tooLarge, at: row.location)
            }
            if builders[batchIndex].valid > 0 { builders[batchIndex].samplesJSON.append(UInt8(ascii: ",")) }
            builders[batchIndex].samplesJSON.append(contentsOf: scratch)
            builders[batchIndex].valid += 1
        }
    }
}
