import Civil

/// Timestamps as the Health app's export and Health Auto Export write them, and every
/// timestamp written back in the reference's shape.
extension Timestamp {
    /// Rewrites a written timestamp into the reference's shape in `out` (29 bytes of room) and
    /// returns how many bytes it holds (24 with `Z`, else 29); nil for any other text. Read:
    /// `2019-06-11 15:00:00 +0100` (the export since iOS 9, Health Auto Export), `20150915113529+0200`
    /// (the export of iOS 8), and ISO 8601 as GPX files write it (`2019-06-11T22:00:42Z`, with or
    /// without fractional seconds or a colon in the offset). Milliseconds are kept; the ranges are
    /// `Timestamp`'s to check.
    public static func shapeWritten(_ b: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        // Date and time: 14 digits, separators - : T and spaces between them, into their slots.
        var i = 0, d = 0
        while d < 14 {
            guard i < b.count else { return nil }
            let c = b[i]
            if c &- 0x30 < 10 {
                out[digitSlots[d]] = c
                d += 1
            } else if !(c == UInt8(ascii: "-") || c == UInt8(ascii: ":") || c == UInt8(ascii: " ") || c == UInt8(ascii: "T")) {
                return nil
            }
            i += 1
        }
        out[4] = UInt8(ascii: "-"); out[7] = UInt8(ascii: "-"); out[10] = UInt8(ascii: "T")
        out[13] = UInt8(ascii: ":"); out[16] = UInt8(ascii: ":"); out[19] = UInt8(ascii: ".")
        // Fractional seconds: milliseconds kept.
        var f = 0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            while i < b.count, b[i] &- 0x30 < 10 {
                if f < 3 { out[20 + f] = b[i]; f += 1 }
                i += 1
            }
            guard f > 0 else { return nil }
        }
        while f < 3 { out[20 + f] = UInt8(ascii: "0"); f += 1 }
        while i < b.count, b[i] == UInt8(ascii: " ") { i += 1 }
        if i + 1 == b.count, b[i] == UInt8(ascii: "Z") {
            out[23] = UInt8(ascii: "Z")
            return 24
        }
        guard i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") else { return nil }
        out[23] = b[i]
        i += 1
        var o = 0
        while i < b.count {
            let c = b[i]
            if c &- 0x30 < 10 {
                guard o < 4 else { return nil }
                out[o < 2 ? 24 + o : 25 + o] = c
                o += 1
            } else if c != UInt8(ascii: ":") || o != 2 {
                return nil
            }
            i += 1
        }
        guard o == 4 else { return nil }
        out[26] = UInt8(ascii: ":")
        return 29
    }

    /// Where the 14 digits of date and time go in the shaped text.
    private static let digitSlots = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]

    /// Parses a timestamp written in one of `shapeWritten`'s shapes; nil for any other text or
    /// one naming no real instant.
    public init?(written b: UnsafeBufferPointer<UInt8>) {
        let parsed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 29) { out -> Timestamp? in
            guard let count = Self.shapeWritten(b, into: out) else { return nil }
            return Timestamp(utf8: UnsafeBufferPointer(rebasing: out[0..<count]))
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Appends the instant in the reference's shape, in its written offset, always numeric
    /// (`2026-08-21T10:25:30.000+02:00`, `+00:00` for UTC): the text PostgreSQL's write path
    /// keeps as columns (`health_store.stamp_offset`). Sub-millisecond digits are dropped.
    public func appendReferenceText(to out: inout [UInt8]) {
        let offset = Int64(offsetSeconds) / 60
        let local = CivilDate.floorDivide(microsecondsSinceEpoch, 1000) + offset * 60_000
        let days = CivilDate.floorDivide(local, 86_400_000)
        let inDay = Int(local - days * 86_400_000)
        let (y, m, d) = CivilDate.civil(fromDays: Int(days))
        func two(_ v: Int) {
            out.append(UInt8(ascii: "0") + UInt8(v / 10))
            out.append(UInt8(ascii: "0") + UInt8(v % 10))
        }
        two(y / 100); two(y % 100)
        out.append(UInt8(ascii: "-")); two(m)
        out.append(UInt8(ascii: "-")); two(d)
        out.append(UInt8(ascii: "T")); two(inDay / 3_600_000)
        out.append(UInt8(ascii: ":")); two(inDay / 60_000 % 60)
        out.append(UInt8(ascii: ":")); two(inDay / 1000 % 60)
        let ms = inDay % 1000
        out.append(UInt8(ascii: ".")); out.append(UInt8(ascii: "0") + UInt8(ms / 100)); two(ms % 100)
        out.append(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        two(Int(abs(offset) / 60))
        out.append(UInt8(ascii: ":"))
        two(Int(abs(offset) % 60))
    }
}
