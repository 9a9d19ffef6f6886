import Foundation
import HealthPayload

/// A timestamp as the export writes it, turned into the reference's shape.
///
/// Read: `2019-06-11 15:00:00 +0100` (every export since iOS 9), `20150915113529+0200` (iOS 8),
/// and ISO 8601 as in GPX files (`2019-06-11T22:00:42Z`, with or without fractional seconds or a
/// colon in the offset). Written: `2019-06-11T15:00:00.000+01:00`, the offset kept (it decides
/// the day when no time zone is set), ranges checked by `Timestamp`.
struct ExportTimestamp: Sendable {
    /// The reference's shape.
    var text: String
    /// Milliseconds since the epoch.
    var milliseconds: Int64
    /// The offset written, in minutes east of UTC.
    var offsetMinutes: Int

    /// Parses `written`; nil when it is not one of the shapes above or names no real instant.
    init?(_ written: String) {
        var copy = written
        guard let parsed = copy.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    /// The parse itself, on the bytes, into a 29-byte buffer of the reference's shape
    /// (`Timestamp.shapeWritten`; no allocation but the result's text: this runs two or three
    /// times per record).
    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> ExportTimestamp? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 29) { out -> ExportTimestamp? in
            guard let count = Timestamp.shapeWritten(b, into: out) else { return nil }
            let shaped = UnsafeBufferPointer(rebasing: out[0..<count])
            guard let stamp = Timestamp(utf8: shaped) else { return nil }
            return ExportTimestamp(text: String(decoding: shaped, as: UTF8.self), milliseconds: stamp.millisecondsSinceEpoch,
                                   offsetMinutes: stamp.offsetMinutes)
        }
    }

    init(text: String, milliseconds: Int64, offsetMinutes: Int) {
        self.text = text
        self.milliseconds = milliseconds
        self.offsetMinutes = offsetMinutes
    }

    /// How the export writes an instant (`2015-01-17 18:41:28 +0100`) in a given offset, seconds
    /// only: the text `health_store.export_stamp_text` gives back.
    static func exportText(milliseconds: Int64, offsetMinutes: Int) -> [UInt8] {
        var shaped: [UInt8] = []
        shaped.reserveCapacity(29)
        Timestamp(millisecondsSinceEpoch: milliseconds, offsetMinutes: offsetMinutes).appendReferenceText(to: &shaped)
        // 2015-01-17T18:41:28.000+01:00 → 2015-01-17 18:41:28 +0100
        var text = Array(shaped[0..<10])
        text.append(UInt8(ascii: " "))
        text += shaped[11..<19]
        text.append(UInt8(ascii: " "))
        text += shaped[23..<26]
        text += shaped[27..<29]
        return text
    }
}

/// Numbers as the export writes them: decimal, optionally signed, with a fraction and an
/// exponent; a decimal comma (a locale's, in an old export) is read as a point. Nothing else
/// (no `inf`, `nan` or hexadecimal, which Swift's own parser would take).
enum ExportNumber {
    /// The finite value of `text`; nil when it is not a plain decimal number.
    static func parse(_ text: String) -> Double? {
        var copy = text
        return copy.withUTF8 { b -> Double? in
            guard b.count > 0, b.count < 400 else { return nil }
            var commas = 0, points = 0
            for c in b {
                if c == UInt8(ascii: ",") { commas += 1 } else if c == UInt8(ascii: ".") { points += 1 }
            }
            if commas == 1 && points == 0 {
                let pointed = b.map { $0 == UInt8(ascii: ",") ? UInt8(ascii: ".") : $0 }
                return pointed.withUnsafeBufferPointer { number($0) }
            }
            return number(b)
        }
    }

    /// The value of plain decimal bytes (sign, digits, a point, an exponent), else nil.
    private static func number(_ b: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        func digits() -> Int {
            let start = i
            while i < b.count, b[i] &- 0x30 < 10 { i += 1 }
            return i - start
        }
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
        var count = digits()
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            count += digits()
        }
        guard count > 0 else { return nil }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
            guard digits() > 0 else { return nil }
        }
        guard i == b.count, let value = Double(Substring(decoding: b, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// Seconds after midnight of an HRV beat's `time`, in any of the ways phones write it:
    /// `00:20:37,80`, `7:47:41.86 PM`, `19:47:41.86`. Nil when unreadable.
    static func secondsOfDay(_ text: String) -> Double? {
        var t = text.trimmingCharacters(in: .whitespaces)
        var pm: Bool?
        for (suffix, isPM) in [("AM", false), ("PM", true), ("am", false), ("pm", true)] where t.hasSuffix(suffix) {
            pm = isPM
            t = String(t.dropLast(2)).trimmingCharacters(in: .whitespaces)
        }
        let parts = t.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = Int(parts[0]), let m = Int(parts[1]), m < 60,
              let s = parse(String(parts[2])), s >= 0, s < 61 else { return nil }
        var hour = h
        if let pm {
            guard h >= 1 && h <= 12 else { return nil }
            hour = h % 12 + (pm ? 12 : 0)
        }
        guard hour < 24 else { return nil }
        return Double(hour * 3600 + m * 60) + s
    }
}
