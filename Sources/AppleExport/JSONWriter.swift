import HealthPayload

/// Builds JSON text into bytes: objects and arrays with their commas, strings escaped by
/// `JSONString`, numbers in Swift's shortest round-trip form (finite only: callers check).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Per open object or array: whether the next member needs a comma.
    private var needsComma: [Bool] = []

    init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma.removeLast()
    }

    /// A member's key; the value written next belongs to it.
    mutating func key(_ key: String) {
        separate()
        quote(key)
        bytes.append(UInt8(ascii: ":"))
        pendingKey = true
    }

    mutating func string(_ value: String) {
        separate()
        quote(value)
    }

    /// The concrete String's UTF-8 quoted (the generic `JSONString.append(quoting:)` pays for
    /// its conversion on every call, measurable at millions of records).
    private mutating func quote(_ text: String) {
        var text = text
        text.withUTF8 { JSONString.append(quotingUTF8: $0, to: &bytes) }
    }

    mutating func number(_ value: Double) {
        separate()
        bytes.append(contentsOf: value.description.utf8)
    }

    mutating func integer(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Already-valid JSON text as the next value.
    mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// A member's key that needs no escaping (the mapping's own names): copied as it is.
    mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        pendingKey = true
    }

    /// A member whose name comes from the export (an attribute, a metadata key): escaped.
    mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Double) {
        key(name)
        number(value)
    }

    private var pendingKey = false

    private mutating func separate() {
        if pendingKey {
            pendingKey = false
            return
        }
        guard !needsComma.isEmpty else { return }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }
}
