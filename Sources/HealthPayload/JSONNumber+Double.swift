extension JSONNumber {
    /// Powers of ten that are exact as `Double` (10^22 is the last one).
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    #if arch(x86_64)
    /// Powers of ten that are exact as `Float80` (5^27 < 2^64, so 10^27 is the last one).
    private static let exactExtendedPowersOfTen: [Float80] = (0...27).map { exponent in
        var value: Float80 = 1
        for _ in 0..<exponent { value *= 10 }
        return value
    }
    #endif

    /// The value of a number literal that `scan` accepted, correctly rounded.
    ///
    /// Most literals in a body (`47.3769`, `112`, `2789.0`) have at most 15 significant digits
    /// and a small exponent: their digits and their power of ten are both exact doubles, so one
    /// multiplication or division rounds correctly (Clinger's fast path). A coordinate printed
    /// in full (`8.541712345678901`, 16–17 digits) has digits that fit 64 bits: on x86-64 one
    /// `Float80` operation rounds them correctly to 64 bits, and rounding that to a `Double`
    /// is correct unless it lands exactly halfway between two doubles (its 11 extra bits
    /// `10000000000`), which goes to the standard library's parser like everything else.
    /// Overflow gives an infinity, underflow zero.
    static func doubleValue(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double {
        var i = range.lowerBound
        let end = range.upperBound
        var negative = false
        if i < end && b[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var seenNonZero = false
        while i < end, case let d = b[i] &- UInt8(ascii: "0"), d < 10 {
            if d != 0 || seenNonZero {
                seenNonZero = true
                significant += 1
                if significant <= 19 { mantissa = mantissa &* 10 &+ UInt64(d) } else { exponent += 1 }
            }
            i += 1
        }
        if i < end && b[i] == UInt8(ascii: ".") {
            i += 1
            while i < end, case let d = b[i] &- UInt8(ascii: "0"), d < 10 {
                if d != 0 || seenNonZero {
                    seenNonZero = true
                    significant += 1
                    if significant <= 19 {
                        mantissa = mantissa &* 10 &+ UInt64(d)
                        exponent -= 1
                    }
                } else {
                    exponent -= 1
                }
                i += 1
            }
        }
        var written = 0
        if i < end && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            var negativeExponent = false
            if i < end && (b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-")) {
                negativeExponent = b[i] == UInt8(ascii: "-")
                i += 1
            }
            while i < end, case let d = b[i] &- UInt8(ascii: "0"), d < 10 {
                if written < 100_000 { written = written * 10 + Int(d) }
                i += 1
            }
            if negativeExponent { written = -written }
        }
        if mantissa == 0 && significant == 0 { return negative ? -0.0 : 0.0 }
        let power = exponent + written
        if significant <= 19 && mantissa <= 1 << 53 && power >= -22 && power <= 22 {
            let m = Double(mantissa)
            let value = power >= 0 ? m * exactPowersOfTen[power] : m / exactPowersOfTen[-power]
            return negative ? -value : value
        }
        #if arch(x86_64)
        if significant <= 19 && power >= -27 && power <= 27 {
            let m = Float80(mantissa)
            let extended = power >= 0 ? m * exactExtendedPowersOfTen[power] : m / exactExtendedPowersOfTen[-power]
            if extended.significandBitPattern & 0x7FF != 0x400 {
                let value = Double(extended)
                return negative ? -value : value
            }
        }
        #endif
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
        return Double(text) ?? (negative ? -Double.infinity : Double.infinity)
    }
}
