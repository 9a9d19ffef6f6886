/// Strict UTF-8 validation (Unicode 15, Table 3-7): no overlongs, no surrogates, nothing above U+10FFFF.
enum UTF8Validation {
    /// The offset of the first byte that starts an invalid sequence in `bytes[range]`, or nil when it is all valid.
    static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var i = range.lowerBound
        let n = range.upperBound
        while i < n {
            // ASCII fast path, eight bytes at a time.
            if i &+ 8 <= n {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    i &+= 8
                    continue
                }
            }
            let c = bytes[i]
            if c < 0x80 {
                i &+= 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return i
            }
            guard i + length <= n else { return i }
            let second = bytes[i + 1]
            guard second >= lower && second <= upper else { return i }
            var k = 2
            while k < length {
                guard bytes[i + k] & 0xC0 == 0x80 else { return i }
                k += 1
            }
            i += length
        }
        return nil
    }
}
