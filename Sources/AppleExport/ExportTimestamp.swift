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

    /// Parses `written`; nil when it is not one of the shapes above or names no real instant.
    init?(_ written: String) {
        var digits: [UInt8] = []
        digits.reserveCapacity(17)
        var bytes = Array(written.utf8)[...]
        // Date and time: 14 digits, separators - : T and spaces between them.
        while digits.count < 14, let c = bytes.first {
            if c >= 0x30 && c <= 0x39 {
                digits.append(c)
            } else if !(c == UInt8(ascii: "-") || c == UInt8(ascii: ":") || c == UInt8(ascii: " ") || c == UInt8(ascii: "T")) {
                return nil
            }
            bytes.removeFirst()
        }
        guard digits.count == 14 else { return nil }
        // Fractional seconds: up to milliseconds kept.
        var fraction: [UInt8] = []
        if bytes.first == UInt8(ascii: ".") || bytes.first == UInt8(ascii: ",") {
            bytes.removeFirst()
            while let c = bytes.first, c >= 0x30 && c <= 0x39 {
                if fraction.count < 3 { fraction.append(c) }
                bytes.removeFirst()
            }
            guard !fraction.isEmpty else { return nil }
        }
        while fraction.count < 3 { fraction.append(UInt8(ascii: "0")) }
        while bytes.first == UInt8(ascii: " ") { bytes.removeFirst() }
        var offset: [UInt8]
        if bytes.elementsEqual([UInt8(ascii: "Z")]) {
            offset = Array("Z".utf8)
        } else {
            guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
            let rest = bytes.dropFirst().filter { $0 != UInt8(ascii: ":") }
            guard rest.count == 4, rest.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            offset = [sign] + Array(rest.prefix(2)) + [UInt8(ascii: ":")] + Array(rest.suffix(2))
        }
        let d = digits
        let shaped: [UInt8] = Array(d[0..<4]) + [UInt8(ascii: "-")] + Array(d[4..<6]) + [UInt8(ascii: "-")] + Array(d[6..<8])
            + [UInt8(ascii: "T")] + Array(d[8..<10]) + [UInt8(ascii: ":")] + Array(d[10..<12]) + [UInt8(ascii: ":")]
            + Array(d[12..<14]) + [UInt8(ascii: ".")] + fraction + offset
        guard let stamp = shaped.withUnsafeBufferPointer({ Timestamp(utf8: $0) }) else { return nil }
        text = String(decoding: shaped, as: UTF8.self)
        milliseconds = stamp.millisecondsSinceEpoch
    }
}

/// Numbers as the export writes them: decimal, optionally signed, with a fraction and an
/// exponent; a decimal comma (a locale's, in an old export) is read as a point. Nothing else
/// (no `inf`, `nan` or hexadecimal, which Swift's own parser would take).
enum ExportNumber {
    /// The finite value of `text`; nil when it is not a plain decimal number.
    static func parse(_ text: String) -> Double? {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count < 400 else { return nil }
        if bytes.filter({ $0 == UInt8(ascii: ",") }).count == 1 && !bytes.contains(UInt8(ascii: ".")) {
            bytes = bytes.map { $0 == UInt8(ascii: ",") ? UInt8(ascii: ".") : $0 }
        }
        var i = 0
        func digits() -> Int {
            let start = i
            while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { i += 1 }
            return i - start
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
        var count = digits()
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            count += digits()
        }
        guard count > 0 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
            guard digits() > 0 else { return nil }
        }
        guard i == bytes.count, let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
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

extension ExportTimestamp {
    /// The instant `milliseconds` after the epoch, written in UTC (`…Z`).
    init(milliseconds: Int64) {
        let day = milliseconds >= 0 ? milliseconds / 86_400_000 : (milliseconds - 86_399_999) / 86_400_000
        let inDay = Int(milliseconds - day * 86_400_000)
        // Howard Hinnant's civil_from_days.
        let z = Int(day) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d, inDay / 3_600_000, inDay / 60_000 % 60,
                      inDay / 1000 % 60, inDay % 1000)
        self.milliseconds = milliseconds
    }
}
