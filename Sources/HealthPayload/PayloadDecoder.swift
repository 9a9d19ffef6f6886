/// Decodes healthd version 1 bodies (JSON or CSV) into batches: pure, no I/O.
///
/// A body that can never be accepted throws `PayloadError` (the receiver answers `400`). A sample
/// that breaks the contract does not sink its batch: it lands in `Batch.quarantined` with a
/// reason, and the rest of the batch is valid. Valid samples are guaranteed safe for PostgreSQL:
/// `samplesJSON` casts to `jsonb`, `value`/`durationSeconds`/`distanceMeters`/`activeEnergyKilocalories`
/// cast to `double precision` and category `value`/`activityType` to `integer`, without error.
///
/// `now` (milliseconds since the epoch, the wall clock by default) only decides which instants
/// are plausible: a sample dated after the day after tomorrow is quarantined (`Plausibility`).
public enum PayloadDecoder {
    /// One JSON body → `.probe` or `.batches([one batch])`.
    public static func decode(json body: [UInt8], now: Int64 = Plausibility.nowMilliseconds()) throws(PayloadError) -> DecodedBody {
        try body.withUnsafeBufferPointer { (b) throws(PayloadError) -> DecodedBody in
            try decodeJSON(b, latest: Plausibility.latestMilliseconds(now: now))
        }
    }

    /// One CSV document (or several appended bodies from a file) → `.probe` or batches: rows grouped into the batch
    /// they state (exportId + batchSequence), in order of first appearance; records equal to the header row skipped.
    public static func decode(csv body: [UInt8], now: Int64 = Plausibility.nowMilliseconds()) throws(PayloadError) -> DecodedBody {
        try decodeCSV(body, latest: Plausibility.latestMilliseconds(now: now))
    }

    /// Decodes a body in the given format.
    public static func decode(_ body: [UInt8], format: PayloadFormat, now: Int64 = Plausibility.nowMilliseconds()) throws(PayloadError) -> DecodedBody {
        switch format {
        case .json: try decode(json: body, now: now)
        case .csv: try decode(csv: body, now: now)
        }
    }
}

// MARK: - Shared helpers

extension PayloadDecoder {
    /// Offset of the first byte after a leading UTF-8 byte-order mark, if any.
    static func bodyStart(_ b: UnsafeBufferPointer<UInt8>) -> Int {
        b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF ? 3 : 0
    }

    /// 1-based line and column (in bytes) of `offset`.
    static func lineAndColumn(_ b: UnsafeBufferPointer<UInt8>, offset: Int) -> (Int, Int) {
        var line = 1
        var lineStart = 0
        var i = 0
        let stop = min(offset, b.count)
        while i < stop {
            if b[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return (line, offset - lineStart + 1)
    }

    /// A byte named for an error message: `'x'` when printable ASCII, else hex.
    static func describeByte(_ c: UInt8) -> String {
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        let hex = String(c, radix: 16, uppercase: true)
        return "0x" + (hex.count == 1 ? "0" + hex : hex)
    }

    /// The start of `text` in at most `limit` characters (an escape counts as the characters it
    /// takes), with control characters escaped, for an error message.
    static func snippet(_ text: String, limit: Int = 40) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            let escaped = scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : nil
            let width = escaped?.count ?? 1
            if count + width > limit {
                out += "…"
                break
            }
            if let escaped { out += escaped } else { out.unicodeScalars.append(scalar) }
            count += width
        }
        return out
    }

    /// A short snippet of `b[range]` for an error message.
    static func snippet(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, limit: Int = 40) -> String {
        let clipped = range.lowerBound..<min(range.upperBound, range.lowerBound + limit * 4)
        var text = snippet(String(decoding: UnsafeBufferPointer(rebasing: b[clipped]), as: UTF8.self), limit: limit)
        if clipped.count < range.count && !text.hasSuffix("…") { text += "…" }
        return text
    }
}
