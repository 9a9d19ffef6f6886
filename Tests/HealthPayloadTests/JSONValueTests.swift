import HealthPayload
import Testing

/// `JSONValue`: the small JSON tree the assistant's protocol is read and written with.
@Suite("JSONValue")
struct JSONValueTests {
    @Test("reads every kind of value, keeps a number's literal exactly, and writes it back on one line")
    func roundTrip() throws {
        let text = #"{"jsonrpc":"2.0","id":12345678901234567890,"params":{"a":[true,false,null,-1.5e3,"x\"y\\z\n\u00e9\ud83d\ude00"],"b":{}}}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value["id"].map { if case .number(let literal) = $0 { return literal } else { return "" } } == "12345678901234567890")
        #expect(value["params"]?["a"].map { if case .array(let items) = $0 { return items.count } else { return 0 } } == 5)
        if case .array(let items)? = value["params"]?["a"] {
            #expect(items[4].stringValue == "x\"y\\z\né😀")
            #expect(items[3].doubleValue == -1500)
        }
        let written = value.text
        #expect(!written.contains("\n"))
        #expect(try JSONValue.parse(Array(written.utf8)).text == written)
        #expect(written.contains(#""id":12345678901234567890"#))
    }

    @Test("the last of a repeated key wins; numbers built from doubles are integral without a fraction, and NaN is null")
    func buildingAndLookup() throws {
        let value = try JSONValue.parse(Array(#"{"a":1,"a":2}"#.utf8))
        #expect(value["a"]?.doubleValue == 2)
        #expect(JSONValue.number(3).text == "3")
        #expect(JSONValue.number(0.1).text == "0.1")
        #expect(JSONValue.number(.nan).text == "null")
        #expect(JSONValue.object([("raw", .raw("[1,2]")), ("s", .string("\u{1}"))]).text == #"{"raw":[1,2],"s":"\u0001"}"#)
    }

    @Test("refuses what RFC 8259 refuses and invalid UTF-8, saying where", arguments: [
        ("{\"a\":1,}", "expected a string key"), ("[1 2]", "expected ',' or ']'"), ("nul", "expected a value"), ("", "empty"),
    ])
    func refusals(text: String, words: String) {
        #expect(throws: PayloadError.self) { try JSONValue.parse(Array(text.utf8)) }
        do {
            _ = try JSONValue.parse(Array(text.utf8))
        } catch {
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(throws: PayloadError.self) { try JSONValue.parse([0x22, 0xFF, 0x22]) }
    }

    @Test("each object of an array as its members: keys decoded, values' text exactly as written; nil for what is not an array of objects")
    func membersOfEachObject() throws {
        let text = #"[ {"a" : 1.50, "b\u0063":{"x": [1, "y"]}}, {}, {"s":"\u00e9", "a":null} ]"#
        let objects = try #require(try JSONValue.membersOfEachObject(Array(text.utf8)))
        #expect(objects.map { $0.map(\.key) } == [["a", "bc"], [], ["s", "a"]])
        #expect(objects.map { $0.map { String(decoding: $0.text, as: UTF8.self) } } == [["1.50", #"{"x": [1, "y"]}"#], [], [#""\u00e9""#, "null"]])
        #expect(try JSONValue.membersOfEachObject(Array(#"{"a":1}"#.utf8)) == nil)
        #expect(try JSONValue.membersOfEachObject(Array(#"[{"a":1}, 2]"#.utf8)) == nil)
        #expect(throws: PayloadError.self) { try JSONValue.membersOfEachObject(Array(#"[{"a":1},]"#.utf8)) }
        #expect(objects[2].map { JSONValue.string($0.text) } == ["é", nil])
        #expect(objects[0].map { JSONValue.string($0.text) } == [nil, nil])
        #expect(JSONValue.string(Array(#""plain""#.utf8)[...]) == "plain")
    }
}
