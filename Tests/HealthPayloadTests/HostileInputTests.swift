import Foundation
import FuzzSupport
import HealthPayload
import Testing
import TestSupport

/// What one body gave, after its invariants were checked.
enum Outcome: Equatable {
    case probe
    case batches(valid: Int, quarantined: Int)
    case rejected(String)
}

/// Decodes `bytes` and checks what every answer must satisfy, returning the outcome.
///
/// Batches: `samplesJSON` parses (Foundation) into exactly `validSampleCount` objects, with no NUL
/// character and no non-finite number anywhere; quarantined raws hold no NUL; positions rise
/// from 1; the envelope's `jsonText` parses into nine keys. Errors: short messages.
func checkedOutcome(_ bytes: [UInt8], _ format: PayloadFormat, sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
    let decoded: DecodedBody
    do {
        decoded = try PayloadDecoder.decode(bytes, format: format)
    } catch {
        #expect(error.message.count < 400, "error message too long: \(error.message.prefix(120))", sourceLocation: sourceLocation)
        return .rejected(error.message)
    }
    guard case .batches(let batches) = decoded else { return .probe }
    #expect(!batches.isEmpty, sourceLocation: sourceLocation)
    var valid = 0
    var quarantined = 0
    for batch in batches {
        valid += batch.validSampleCount
        quarantined += batch.quarantined.count
        do {
            let parsed = try JSONSerialization.jsonObject(with: Data(batch.samplesJSON))
            let objects = parsed as? [[String: Any]]
            #expect(objects?.count == batch.validSampleCount, "samplesJSON is an array of validSampleCount objects", sourceLocation: sourceLocation)
            #expect(objects.map { $0.allSatisfy(isPostgresSafe) } ?? false, "a valid sample holds NUL or a non-finite number", sourceLocation: sourceLocation)
        } catch {
            Issue.record("samplesJSON does not parse: \(error)", sourceLocation: sourceLocation)
        }
        var last = 0
        for sample in batch.quarantined {
            #expect(!sample.raw.utf8.contains(0), sourceLocation: sourceLocation)
            #expect(sample.position > last && sample.position <= batch.sampleCount, sourceLocation: sourceLocation)
            last = sample.position
        }
        let envelope = try? JSONSerialization.jsonObject(with: Data(batch.envelope.jsonText.utf8)) as? [String: Any]
        #expect(envelope?.count == 9, sourceLocation: sourceLocation)
    }
    return .batches(valid: valid, quarantined: quarantined)
}

@Suite("Hostile input")
struct HostileInputTests {
    @Test("deeply nested JSON is rejected without exhausting the stack")
    func deepNesting() {
        for open in ["[", "{\"a\":"] {
            let body = Array(String(repeating: open, count: 200_000).utf8)
            guard case .rejected(let message) = checkedOutcome(body, .json) else {
                Issue.record("accepted")
                continue
            }
            #expect(message.hasSuffix("nesting deeper than 64"))
        }
        // Envelope (1) › samples (2) › sample (3): the 62nd bracket inside the sample is level 65.
        let inSample = Array(Body.json(samples: [Body.quantity(["deep": String(repeating: "[", count: 100_000)])]).utf8)
        let offset = inSample.firstRange(of: Array("\"deep\":".utf8))!.upperBound + 61
        #expect(checkedOutcome(inSample, .json) == .rejected("not valid JSON at byte \(offset) (line 1, column \(offset + 1)): nesting deeper than 64"))
    }

    @Test("huge numbers are quarantined or rejected, never overflow")
    func hugeNumbers() {
        let digits = String(repeating: "9", count: 5000)
        let cases = [
            Body.quantity(["value": digits]), Body.quantity(["value": "1e99999999999999999999999"]),
            Body.quantity(["value": "-1e-99999999999999999999999"]), Body.quantity(["value": "0." + digits]),
            Body.quantity(["other": "1" + digits + "e-5000"]),
            Body.category(["value": digits]), Body.workout(["activityType": "-" + digits]),
        ]
        #expect(checkedOutcome(Array(Body.json(samples: cases).utf8), .json) == .batches(valid: 0, quarantined: cases.count))
        let sequence = Body.json(samples: [], overriding: ["batchSequence": "1" + digits])
        #expect(checkedOutcome(Array(sequence.utf8), .json) == .rejected("batchSequence does not fit a 32-bit integer"))
        let csv = CSVBody.document([CSVBody.row(["value": digits]), CSVBody.row(["batchSequence": "1" + digits])])
        #expect(checkedOutcome(Array(csv.utf8), .csv) == .rejected("record 3 (line 3): batchSequence is not an integer from 1 to 2147483647: \"1999999999999999999999999999999999999999…\""))
    }

    @Test("NaN and Infinity spellings are not JSON, and not numbers in CSV")
    func nanAndInfinity() {
        for spelling in ["NaN", "-NaN", "nan", "Infinity", "-Infinity", "inf", "+Inf", "1e", "0x10"] {
            let body = Body.json(samples: [Body.quantity(["value": spelling])])
            guard case .rejected(let message) = checkedOutcome(Array(body.utf8), .json) else {
                Issue.record("\(spelling) accepted in JSON")
                continue
            }
            #expect(message.hasPrefix("not valid JSON at byte"))
            let csv = CSVBody.document([CSVBody.row(["value": spelling])])
            #expect(checkedOutcome(Array(csv.utf8), .csv) == .batches(valid: 0, quarantined: 1), "\(spelling) in CSV")
        }
    }

    @Test("invalid UTF-8 is rejected by both decoders")
    func invalidUTF8() throws {
        for bad in [[0xFF], [0xFE], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xBF, 0xBF], [0xF5, 0x80, 0x80, 0x80], [0xF0, 0x9F, 0x98]] as [[UInt8]] {
            var json = Array(Body.json(samples: [Body.quantity(["source": "\"@\""])]).utf8)
            let jsonAt = try #require(json.firstIndex(of: UInt8(ascii: "@")))
            json.replaceSubrange(jsonAt..<jsonAt + 1, with: bad)
            guard case .rejected = checkedOutcome(json, .json) else {
                Issue.record("JSON accepted \(bad)")
                continue
            }
            var csv = Array(CSVBody.document([CSVBody.row(["source": "@"])]).utf8)
            let at = try #require(csv.firstIndex(of: UInt8(ascii: "@")))
            csv.replaceSubrange(at..<at + 1, with: bad)
            guard case .rejected(let message) = checkedOutcome(csv, .csv) else {
                Issue.record("CSV accepted \(bad)")
                continue
            }
            #expect(message.hasPrefix("record 2 (line 2): invalid UTF-8"))
        }
    }

    @Test("a leading byte-order mark is tolerated; elsewhere it is just a character or not JSON")
    func byteOrderMarks() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(checkedOutcome(bom + (try Fixture.bytes("contract-example.json")), .json) == .batches(valid: 3, quarantined: 0))
        #expect(checkedOutcome(bom + (try Fixture.bytes("contract-example.csv")), .csv) == .batches(valid: 3, quarantined: 0))
        #expect(checkedOutcome(bom + bom + (try Fixture.bytes("probe.json")), .json) == .rejected("not valid JSON at byte 3 (line 1, column 4): unexpected character 0xEF; expected a value"))
    }

    @Test("NUL bytes are rejected wherever they are")
    func nulBytes() throws {
        let json = try Fixture.bytes("contract-example.json")
        for at in [0, 1, 200, json.count - 1, json.count] {
            var body = json
            body.insert(0, at: at)
            guard case .rejected = checkedOutcome(body, .json) else {
                Issue.record("JSON with NUL at \(at) accepted")
                continue
            }
        }
        let csv = try Fixture.bytes("contract-example.csv")
        for at in [0, 5, 400, csv.count - 1, csv.count] {
            var body = csv
            body.insert(0, at: at)
            guard case .rejected(let message) = checkedOutcome(body, .csv) else {
                Issue.record("CSV with NUL at \(at) accepted")
                continue
            }
            #expect(message.contains("NUL byte"))
        }
    }

    @Test("1000 samples with the same uuid are all valid (deduplication is the store's job)")
    func sameUUID() {
        let samples = Array(repeating: Body.quantity(), count: 1000)
        #expect(checkedOutcome(Array(Body.json(samples: samples).utf8), .json) == .batches(valid: 1000, quarantined: 0))
        let csv = CSVBody.document(Array(repeating: CSVBody.row(), count: 1000))
        #expect(checkedOutcome(Array(csv.utf8), .csv) == .batches(valid: 1000, quarantined: 0))
    }

    @Test("a 1 MB source string is quarantined whole (JSON and CSV), naming its length in bytes: it could never be indexed")
    func megabyteSource() throws {
        let source = String(repeating: "ab,\"c\né", count: 1_048_576 / 8)
        let reason = "source is \(source.utf8.count) bytes, at most 1024"
        let json = Body.json(samples: [Body.quantity(["source": JSONString.quoted(source)])])
        let batch = try jsonBatch(json)
        #expect(batch.validSampleCount == 0)
        #expect(batch.quarantined.map(\.reason) == [reason])
        #expect(batch.quarantined.first?.raw.contains(JSONString.quoted(source)) == true, "kept verbatim")
        let csv = try CSVBody.batch(CSVBody.document([CSVBody.row(["source": source])]))
        #expect(csv.quarantined.map(\.reason) == [reason])
    }

    @Test("CSV with unbalanced quotes is rejected")
    func unbalancedQuotes() throws {
        var text = try Fixture.text("contract-example.csv")
        text = text.replacingOccurrences(of: ",com.apple.Health,2026-08-21T07", with: ",\"com.apple.Health,2026-08-21T07")
        #expect(checkedOutcome(Array(text.utf8), .csv) == .rejected("record 4 (line 4): unterminated quoted field"))
    }

    @Test("a CSV header with duplicate names is rejected")
    func duplicateHeader() throws {
        let text = try Fixture.text("contract-example.csv").replacingOccurrences(of: ",unit,", with: ",value,")
        #expect(checkedOutcome(Array(text.utf8), .csv) == .rejected("record 1 (line 1): the header repeats the column \"value\""))
    }

    @Test("a CSV header name over 256 bytes is refused before any row is read; 256 are fine")
    func longColumnName() throws {
        let refused = Bodies.expandingCSV(nameBytes: 257, totalBytes: 4_000)
        let error = #expect(throws: PayloadError.self) { try PayloadDecoder.decode(csv: refused) }
        #expect(error?.message == "record 1 (line 1): the header's column 27 has a name of 257 bytes; at most 256 are accepted")
        #expect(error?.problem == .tooLarge)
        #expect(error?.location == PayloadLocation(record: 1, line: 1, byteOffset: 0))
        let accepted = Bodies.expandingCSV(nameBytes: 256, totalBytes: 4_000)
        let rows = accepted.filter { $0 == 0x0A }.count - 1
        #expect(rows > 5)
        #expect(checkedOutcome(accepted, .csv) == .batches(valid: rows, quarantined: 0))
    }

    @Test("the 2 MB column name of a 4 MiB body is refused at once, not built into gigabytes")
    func twoMegabyteColumnName() throws {
        let body = Bodies.expandingCSV(nameBytes: 2_000_000, totalBytes: 4 << 20)
        #expect(body.count >= 4_000_000)
        #expect(checkedOutcome(body, .csv) == .rejected("record 1 (line 1): the header's column 27 has a name of 2000000 bytes; at most 256 are accepted"))
    }

    @Test("a CSV header of more than 1024 columns is refused")
    func tooManyColumns() {
        let names = (0..<1025).map { "c\($0)" }
        #expect(checkedOutcome(Array((Bodies.csvHeader + "," + names.joined(separator: ",") + "\n").utf8), .csv)
                == .rejected("record 1 (line 1): the header has 1051 columns; at most 1024 are accepted"))
    }

    @Test("samples built beyond 4 times the body's size are refused, naming the row that crossed it")
    func expansionBound() throws {
        // 200 unknown columns of 250-byte names: every row's cells of `x` become 200 keys of 250 bytes.
        let names = (0..<200).map { String(format: "%03d", $0) + String(repeating: "n", count: 247) }
        var text = Bodies.csvHeader + "," + names.joined(separator: ",") + "\n"
        for row in 1...12 {
            text += CSVWriter.row(CSVBody.columns.map { CSVBody.row(["uuid": String(format: "A1B2C3D4-0000-4000-8000-%012d", row)])[$0] ?? "" }
                                  + Array(repeating: "x", count: 200))
        }
        let body = Array(text.utf8)
        let error = #expect(throws: PayloadError.self) { try PayloadDecoder.decode(csv: body) }
        #expect(error?.problem == .tooLarge)
        #expect(error?.reason == "the samples built from this body would take more than 4 times its \(body.count) bytes (every row repeats the header's names as keys)")
        // Each row builds ~52 KB of samples; 4 times the ~61 KB body is crossed by the fifth row.
        #expect(error?.location?.record == 6)
        // The same columns with a few rows stay under the bound and decode.
        let few = text.split(separator: "\n").prefix(3).joined(separator: "\n") + "\n"
        #expect(checkedOutcome(Array(few.utf8), .csv) == .batches(valid: 2, quarantined: 0))
    }

    @Test("the app's CSV bodies build samples smaller than themselves: far inside the bound")
    func appBodiesExpandLittle() throws {
        for name in ["contract-example.csv", "quoted-source.good.csv", "appended-bodies.good.csv"] {
            let body = try Fixture.bytes(name)
            let built = try batches(try PayloadDecoder.decode(csv: body)).reduce(0) { $0 + $1.samplesJSON.count }
            #expect(built < body.count, "\(name): \(built) bytes of samples from \(body.count)")
        }
    }

    @Test("CR-only line ends are row ends")
    func crOnly() throws {
        #expect(checkedOutcome(try Fixture.bytes("cr-line-ends.good.csv"), .csv) == .batches(valid: 3, quarantined: 0))
    }

    @Test("seeded random mutations of fixtures and generated bodies never crash or hang, and keep every invariant")
    func mutationFuzz() throws {
        var seeds: [[UInt8]] = []
        for name in ["contract-example.json", "contract-example.csv", "probe.json", "probe.csv", "quoted-source.good.csv",
                     "appended-bodies.good.csv", "malformed-samples.partial.json", "shared-id.good.json", "cr-line-ends.good.csv"] {
            seeds.append(try Fixture.bytes(name))
        }
        seeds.append(Array(Body.json(samples: [Body.quantity(), Body.category(), Body.workout(), Body.quantity(["x": #"[{"y":"\ud83d\ude00"}]"#])]).utf8))
        seeds.append(Array(CSVBody.document([CSVBody.row(["source": "a,\"b\"\nc"]), CSVBody.row(["kind": "category", "value": "4", "unit": ""])]).utf8))
        let tokens: [[UInt8]] = [
            "\\u0000", "\\ud800", "\\udc00", "1e400", "1e-400", "NaN", "Infinity", "null", "true", "\"\"", ",", "\r\n", "\r", "\n",
            "\"", "\u{FEFF}", "-0", "2147483648", "{\"a\":", "[[[[", "]]]]", "schemaVersion", "1", "2", "\\", "}", "{", "[", "]", ":",
            "\"connectivityTest\":true,", "\"value\":", "9e999", "0.0000001e-300", "uuid,uuid\n", "😀",
        ].map { Array($0.utf8) } + [[0], [0xFF], [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90], [0x80]]
        var rng = SeededGenerator(seed: 0x5EED_F022)
        let iterations = 30_000
        var counts: [String: Int] = [:]
        let started = ContinuousClock.now
        for _ in 0..<iterations {
            var body = seeds.randomElement(using: &rng)!
            // Mostly one mutation, so many inputs stay close enough to valid to reach the sample rules.
            let mutations = Bool.random(using: &rng) ? 1 : Int.random(in: 2...4, using: &rng)
            for _ in 0..<mutations {
                mutate(&body, seeds: seeds, tokens: tokens, rng: &rng)
            }
            for format in [PayloadFormat.json, .csv] {
                switch checkedOutcome(body, format) {
                case .probe: counts["\(format) probe", default: 0] += 1
                case .batches: counts["\(format) batches", default: 0] += 1
                case .rejected: counts["\(format) rejected", default: 0] += 1
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        // Each outcome should be reached, or the mutator is too weak to mean anything.
        for key in ["json batches", "json rejected", "json probe", "csv batches", "csv rejected", "csv probe"] {
            #expect(counts[key, default: 0] > 0, "\(key) never reached")
        }
        print("mutation fuzz: \(iterations) inputs × 2 decoders in \(elapsed): \(counts.sorted { $0.key < $1.key })")
    }

    private func mutate(_ body: inout [UInt8], seeds: [[UInt8]], tokens: [[UInt8]], rng: inout SeededGenerator) {
        let position = body.isEmpty ? 0 : Int.random(in: 0..<body.count, using: &rng)
        switch Int.random(in: 0..<8, using: &rng) {
        case 0 where !body.isEmpty:
            body[position] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
        case 1 where !body.isEmpty:
            body[position] = [0, 0xFF, 0x22, 0x2C, 0x0A, 0x0D, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x3A, 0x2D, 0x30, 0x65, 0xC3, 0xED, 0x80].randomElement(using: &rng)!
        case 2, 3:
            body.insert(contentsOf: tokens.randomElement(using: &rng)!, at: position)
        case 4 where !body.isEmpty:
            let length = Int.random(in: 1...16, using: &rng)
            body.removeSubrange(position..<min(body.count, position + length))
        case 5 where !body.isEmpty:
            let length = Int.random(in: 1...64, using: &rng)
            let chunk = body[position..<min(body.count, position + length)]
            body.insert(contentsOf: chunk, at: Int.random(in: 0...body.count, using: &rng))
        case 6:
            let other = seeds.randomElement(using: &rng)!
            let cut = other.isEmpty ? 0 : Int.random(in: 0..<other.count, using: &rng)
            body = Array(body[..<position]) + other[cut...]
        default:
            body.removeSubrange(min(position + 1, body.count)...)
        }
    }
}
