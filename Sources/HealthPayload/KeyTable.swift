/// Looks up a fixed set of key names by their UTF-8 bytes without allocating.
struct KeyTable: Sendable {
    private let names: [[UInt8]]
    /// Indices into `names`, bucketed by name length.
    private let byLength: [[Int]]

    init(_ names: [String]) {
        self.names = names.map { Array($0.utf8) }
        var buckets = [[Int]](repeating: [], count: (self.names.map(\.count).max() ?? 0) + 1)
        for (index, name) in self.names.enumerated() { buckets[name.count].append(index) }
        byLength = buckets
    }

    /// The index of the name equal to `b[range]`, or nil.
    @inline(__always)
    func index(of b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        let count = range.count
        guard count < byLength.count else { return nil }
        for candidate in byLength[count] {
            let matched = names[candidate].withUnsafeBufferPointer { memoryEquals(b, range.lowerBound, $0, 0, count) }
            if matched { return candidate }
        }
        return nil
    }

    /// The index of the name equal to `text`, or nil.
    func index(of text: String) -> Int? {
        var text = text
        return text.withUTF8 { index(of: $0, 0..<$0.count) }
    }
}

/// Recognising the UUID text form.
enum UUIDText {
    /// True for 8-4-4-4-12 hexadecimal digits, either case.
    static func isValid(_ b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard range.count == 36 else { return false }
        var k = 0
        while k < 36 {
            let c = b[range.lowerBound + k]
            if k == 8 || k == 13 || k == 18 || k == 23 {
                if c != UInt8(ascii: "-") { return false }
            } else {
                let isHex = (c &- UInt8(ascii: "0")) < 10 || ((c | 0x20) &- UInt8(ascii: "a")) < 6
                if !isHex { return false }
            }
            k += 1
        }
        return true
    }

    /// True when `text` is a UUID in text form.
    static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0, 0..<$0.count) }
    }
}
