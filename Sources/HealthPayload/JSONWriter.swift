/// Builds JSON text into bytes: objects and arrays with their commas, strings escaped by
/// `JSONString`, numbers in Swift's shortest round-trip form (finite only: callers check).
///
/// The writer of every sample object a decoder makes rather than passes through (the Health
/// app's export, Health Auto Export). Its small methods are inlinable: a mapping writes a dozen
/// members per sample, millions of times.
public struct JSONWriter: Sendable {
    /// The text written so far.
    public var bytes: [UInt8] = []
    /// Per open object or array: whether the next member needs a comma.
    @usableFromInline var needsComma: [Bool] = []
    /// A key was just written: the next value follows it without a comma.
    @usableFromInline var pendingKey = false

    /// An empty writer with room for `capacity` bytes.
    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// Hands the text written over, leaving the writer empty (with `capacity` reserved).
    public mutating func take(reserving capacity: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        swap(&out, &bytes)
        needsComma.removeAll(keepingCapacity: true)
        pendingKey = false
        return out
    }

    @inlinable public mutating func beginObject() { open(UInt8(ascii: "{")) }
    @inlinable public mutating func endObject() { close(UInt8(ascii: "}")) }
    @inlinable public mutating func beginArray() { open(UInt8(ascii: "[")) }
    @inlinable public mutating func endArray() { close(UInt8(ascii: "]")) }

    @inlinable mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma.append(false)
    }

    @inlinable mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma.removeLast()
    }

    /// A member's key; the value written next belongs to it.
    @inlinable public mutating func key(_ key: String) {
        separate()
        quote(key)
        bytes.append(UInt8(ascii: ":"))
        pendingKey = true
    }

    /// A string value.
    @inlinable public mutating func string(_ value: String) {
        separate()
        quote(value)
    }

    /// A string value given as UTF-8 bytes (valid UTF-8, escaped here).
    @inlinable public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        JSONString.append(quotingUTF8: value, to: &bytes)
    }

    /// The concrete String's UTF-8 quoted (the generic `JSONString.append(quoting:)` pays for
    /// its conversion on every call, measurable at millions of records).
    @inlinable mutating func quote(_ text: String) {
        var text = text
        text.withUTF8 { JSONString.append(quotingUTF8: $0, to: &bytes) }
    }

    /// A number in Swift's shortest round-trip form.
    @inlinable public mutating func number(_ value: Double) {
        separate()
        bytes.append(contentsOf: value.description.utf8)
    }

    /// A number as PostgreSQL writes a `double precision` back (its shortest round-trip form,
    /// an integral one without Swift's `.0`: `812`, `0.97`, `1e-05`), so that a stored sample
    /// whose typed column rebuilds the number need not keep it in its payload
    /// (`health_store.compact_payload`). Where the two still differ (exponents at great
    /// magnitudes) the payload keeps the number, as it keeps any number rebuilt otherwise.
    @inlinable public mutating func storedNumber(_ value: Double) {
        separate()
        let text = value.description
        if text.hasSuffix(".0") { bytes.append(contentsOf: text.utf8.dropLast(2)) } else { bytes.append(contentsOf: text.utf8) }
    }

    /// An integer.
    @inlinable public mutating func integer(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Already-valid JSON text as the next value.
    @inlinable public mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Already-valid JSON text as the next value, from a buffer.
    @inlinable public mutating func raw(_ json: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// The next value, written by `write` straight into the text (valid JSON: the caller's care).
    @inlinable public mutating func value(_ write: (inout [UInt8]) -> Void) {
        separate()
        write(&bytes)
    }

    /// A member's key that needs no escaping (the mapping's own names): copied as it is.
    @inlinable public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        pendingKey = true
    }

    /// A member whose name comes from the input (an attribute, a metadata key): escaped.
    @inlinable public mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    /// A member with a string value.
    @inlinable public mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// A member with a number value.
    @inlinable public mutating func field(_ name: StaticString, _ value: Double) {
        key(name)
        number(value)
    }

    @inlinable mutating func separate() {
        if pendingKey {
            pendingKey = false
            return
        }
        guard !needsComma.isEmpty else { return }
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }
}
