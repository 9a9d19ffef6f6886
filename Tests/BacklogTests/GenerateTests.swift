import Civil
import DemoData
import Foundation
import HealthPayload
import Testing

@Suite("Demo data")
struct GenerateTests {
    /// Eight weeks across the spring DST change, so both offsets appear.
    static let options = DemoGenerator.Options(start: CivilDate("2026-03-02")!, days: 56, format: .json, seed: 42)

    static func samples(_ body: DemoGenerator.Body) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.bytes)) as? [String: Any])
        return try #require(object["samples"] as? [[String: Any]])
    }

    @Test("every body passes the receiver's own validation: no error, no quarantine, at most 1000 samples, under 1 MB", arguments: [PayloadFormat.json, .csv])
    func validBodies(format: PayloadFormat) throws {
        var options = Self.options
        options.format = format
        let bodies = DemoGenerator(options).bodies()
        #expect(bodies.count > 100)
        var total = 0
        for body in bodies {
            #expect(body.bytes.count < 1_000_000)
            #expect(body.sampleCount <= 1000)
            guard case .batches(let batches) = try PayloadDecoder.decode(body.bytes, format: format) else {
                Issue.record("\(body.fileName) decoded as a probe")
                continue
            }
            #expect(batches.count == 1)
            #expect(batches[0].quarantined == [], "\(body.fileName)")
            #expect(batches[0].validSampleCount == body.sampleCount)
            #expect(batches[0].envelope.exportId == body.exportId)
            #expect(batches[0].envelope.batchSequence == body.batchSequence)
            #expect(batches[0].envelope.isFinalBatch == body.isFinalBatch)
            total += body.sampleCount
        }
        #expect(total > 40_000, "about 1000 samples a day")
        // Runs: batchSequence 1…N, isFinalBatch on the last only; files named in delivery order.
        var runs: [String: [DemoGenerator.Body]] = [:]
        for body in bodies { runs[body.exportId, default: []].append(body) }
        for (_, run) in runs {
            #expect(run.map(\.batchSequence) == Array(1...run.count))
            #expect(run.map(\.isFinalBatch) == Array(repeating: false, count: run.count - 1) + [true])
        }
        #expect(runs.values.contains { $0.count > 1 }, "some run needs more than one batch")
        #expect(bodies.map(\.fileName) == bodies.map(\.fileName).sorted())
        #expect(Set(bodies.map(\.basis)) == ["anchor", "window"])
    }

    @Test("manual exports every 30 days: full batches of 1000 samples, basis window, every sample inside its window")
    func manualExports() throws {
        var options = Self.options
        options.manualExportDays = 30
        let bodies = DemoGenerator(options).bodies()
        #expect(Set(bodies.map(\.basis)) == ["window"])
        #expect(bodies.filter { $0.sampleCount == 1000 }.count >= bodies.count - 3)
        for body in bodies {
            guard case .batches(let batches) = try PayloadDecoder.decode(json: body.bytes) else { continue }
            #expect(batches[0].quarantined == [])
            let from = Timestamp(batches[0].envelope.windowStart)!.millisecondsSinceEpoch
            let to = Timestamp(batches[0].envelope.windowEnd)!.millisecondsSinceEpoch
            for sample in try Self.samples(body) {
                #expect(Timestamp(sample["start"] as! String)!.millisecondsSinceEpoch >= from)
                #expect(Timestamp(sample["end"] as! String)!.millisecondsSinceEpoch <= to)
            }
        }
        let regular = DemoGenerator(Self.options).bodies().reduce(0) { $0 + $1.sampleCount }
        #expect(bodies.reduce(0) { $0 + $1.sampleCount } < regular, "no 3-hour resends")
    }

    @Test("JSON bodies have exactly the reference's shape: the twelve envelope keys, sorted and unindented")
    func jsonShape() throws {
        let bodies = DemoGenerator(Self.options).bodies()
        let envelopeKeys = ["basis", "batchSequence", "connectivityTest", "exportId", "generatedAt", "isFinalBatch", "occasionEnd",
                            "occasionStart", "samples", "schemaVersion", "windowEnd", "windowStart"]
        let uuidPattern = try Regex("^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$")
        let stampPattern = try Regex("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}\\+0[12]:00$")
        var offsets = Set<String>()
        for (index, body) in bodies.enumerated() {
            let text = String(decoding: body.bytes, as: UTF8.self)
            #expect(!text.contains("\n") && !text.contains(": ") && !text.contains("null"))
            #expect(text.hasPrefix("{\"basis\":\"") && text.hasSuffix("}"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.bytes)) as? [String: Any])
            #expect(object.keys.sorted() == envelopeKeys)
            #expect(object["schemaVersion"] as? Int == 1)
            #expect(object["connectivityTest"] as? Bool == false)
            let exportId = try #require(object["exportId"] as? String)
            #expect(exportId.wholeMatch(of: uuidPattern) != nil)
            for key in ["generatedAt", "windowStart", "windowEnd", "occasionStart", "occasionEnd"] {
                let stamp = try #require(object[key] as? String)
                #expect(stamp.wholeMatch(of: stampPattern) != nil, "\(stamp)")
                offsets.insert(String(stamp.suffix(6)))
            }
            guard index % 10 == 0 else { continue }  // samples of every tenth body: the regexes are slow in debug builds
            for sample in try Self.samples(body) {
                #expect((sample["uuid"] as? String)?.wholeMatch(of: uuidPattern) != nil)
                let id = try #require(sample["id"] as? String)
                #expect(id.count == 64 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
                #expect((sample["start"] as? String)?.wholeMatch(of: stampPattern) != nil)
                #expect(String((sample["start"] as? String ?? "").suffix(6)) == String((object["generatedAt"] as? String ?? "").suffix(6)),
                        "every timestamp in the offset of the export")
            }
            // Keys of each sample in byte order, as the app writes them.
            let samplesStart = try #require(text.range(of: "\"samples\":[")).upperBound
            let samplesEnd = try #require(text.range(of: "],\"schemaVersion\":1,")).lowerBound
            var rest = text[samplesStart..<samplesEnd]
            while let open = rest.range(of: "{\"") {
                let close = rest[open.lowerBound...].firstIndex(of: "}")!
                let object = rest[open.lowerBound...close]
                let keys = object.matches(of: try Regex("\"([A-Za-z]+)\":")).map { String(object[$0.range].dropFirst().dropLast(2)) }
                #expect(keys == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "\(keys)")
                rest = rest[rest.index(after: close)...]
            }
        }
        #expect(offsets == ["+01:00", "+02:00"], "Europe/Berlin before and after the DST change")
    }

    @Test("CSV bodies: the 26 columns in order, a header on every body, LF after every row, minimal quoting")
    func csvShape() throws {
        var options = Self.options
        options.format = .csv
        options.days = 7
        let header = "schemaVersion,exportId,generatedAt,batchSequence,isFinalBatch,windowStart,windowEnd,uuid,id,type,group,source,start,end,kind,value,unit,name,activityType,activityName,durationSeconds,distanceMeters,activeEnergyKilocalories,basis,occasionStart,occasionEnd"
        for body in DemoGenerator(options).bodies() {
            let text = String(decoding: body.bytes, as: UTF8.self)
            #expect(text.hasPrefix(header + "\n"))
            #expect(text.hasSuffix("\n") && !text.contains("\r") && !text.contains("\""))
            let rows = text.split(separator: "\n").dropFirst()
            #expect(rows.count == body.sampleCount)
            #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 26 && $0.hasPrefix("1,") })
            #expect(!rows.contains { $0.contains(",0,count,") && $0.contains("StepCount") }, "no step count of zero")
        }
    }

    @Test("byte-for-byte repeatable for a seed and start date; another seed gives other bytes")
    func repeatable() {
        let first = DemoGenerator(Self.options).bodies()
        let second = DemoGenerator(Self.options).bodies()
        #expect(first.map(\.fileName) == second.map(\.fileName))
        #expect(first.map(\.bytes) == second.map(\.bytes))
        var other = Self.options
        other.seed = 43
        let third = DemoGenerator(other).bodies()
        #expect(third.map(\.bytes) != first.map(\.bytes))
        func uuids(_ bodies: [DemoGenerator.Body]) -> Set<String> {
            var out = Set<String>()
            for body in bodies {
                for sample in (try? Self.samples(body)) ?? [] {
                    if let uuid = sample["uuid"] as? String { out.insert(uuid) }
                }
            }
            return out
        }
        #expect(uuids(third).isDisjoint(with: uuids(first)))
    }

    @Test("JSON and CSV of one seed carry the same samples")
    func sameSamplesBothFormats() throws {
        var options = Self.options
        options.days = 5
        let json = DemoGenerator(options).bodies()
        options.format = .csv
        let csv = DemoGenerator(options).bodies()
        #expect(json.map { $0.fileName.replacingOccurrences(of: ".json", with: "") } == csv.map { $0.fileName.replacingOccurrences(of: ".csv", with: "") })
        for (j, c) in zip(json, csv) {
            guard case .batches(let a) = try PayloadDecoder.decode(json: j.bytes), case .batches(let b) = try PayloadDecoder.decode(csv: c.bytes) else {
                Issue.record("probe")
                continue
            }
            #expect(a[0].envelope == b[0].envelope)
            let left = try #require(try JSONSerialization.jsonObject(with: Data(a[0].samplesJSON)) as? [NSDictionary])
            let right = try #require(try JSONSerialization.jsonObject(with: Data(b[0].samplesJSON)) as? [NSDictionary])
            #expect(left == right)
        }
    }

    @Test("realistic content: two devices overlapping, dense workout heart rate, sleep stages with an unnamed one, weekly weight, ~4 workouts a week, vitals")
    func realistic() throws {
        let bodies = DemoGenerator(Self.options).bodies()
        var byType: [String: [[String: Any]]] = [:]
        var seen = Set<String>()
        for body in bodies where body.basis == "anchor" {
            for sample in try Self.samples(body) where seen.insert(sample["uuid"] as! String).inserted {
                byType[sample["type"] as! String, default: []].append(sample)
            }
        }
        func quantity(_ name: String) -> [[String: Any]] { byType["HKQuantityTypeIdentifier" + name] ?? [] }
        func sources(_ samples: [[String: Any]]) -> Set<String> { Set(samples.compactMap { $0["source"] as? String }) }
        func start(_ s: [String: Any]) -> Double { Double(Timestamp(s["start"] as! String)!.millisecondsSinceEpoch) / 1000 }

        // iPhone and Watch both write steps, distance and energy.
        for type in ["StepCount", "DistanceWalkingRunning", "ActiveEnergyBurned"] {
            #expect(sources(quantity(type)).filter { $0.hasPrefix("com.apple.health.") }.count == 2, "\(type)")
        }
        // Heart rate every few minutes, every 4–7 s in workouts.
        let heart = quantity("HeartRate").map(start).sorted()
        let gaps = zip(heart.dropFirst(), heart).map { $0 - $1 }
        #expect(gaps.filter { $0 < 8 }.count > 1000)
        #expect(gaps.filter { $0 >= 200 && $0 <= 460 }.count > 5000)
        #expect(quantity("HeartRate").allSatisfy { ($0["value"] as? Double).map { $0 >= 38 && $0 < 200 } == true })
        #expect(quantity("RestingHeartRate").count >= 50 && quantity("WalkingHeartRateAverage").count >= 40)
        #expect(quantity("HeartRateVariabilitySDNN").count >= 100)
        // Sleep: values 0…5 named, and an unknown value with no name key.
        let sleep = byType["HKCategoryTypeIdentifierSleepAnalysis"] ?? []
        let named = Dictionary(grouping: sleep, by: { $0["value"] as! Int })
        #expect(Set(named.keys).isSuperset(of: [0, 2, 3, 4, 5]))
        #expect(named[6]?.isEmpty == false)
        #expect(named[6]?.allSatisfy { $0["name"] == nil } == true)
        #expect(named[4]?.allSatisfy { $0["name"] as? String == "asleepDeep" } == true)
        // Weekly weight on Mondays (8 weeks), with body fat as a fraction.
        #expect(quantity("BodyMass").count == 8)
        #expect(quantity("BodyFatPercentage").allSatisfy { ($0["value"] as? Double).map { $0 > 0.1 && $0 < 0.3 } == true })
        // About four workouts a week (the watch's), some without distance, some of deprecated types unnamed.
        let workouts = (byType["HKWorkoutTypeIdentifier"] ?? []).filter { ($0["source"] as? String)?.hasPrefix("com.apple.health.") == true }
        #expect(workouts.count >= 8 * 3 && workouts.count <= 8 * 5)
        #expect(workouts.contains { $0["distanceMeters"] == nil })
        #expect(workouts.contains { $0["distanceMeters"] != nil })
        let deprecated = workouts.filter { [14, 15, 30].contains($0["activityType"] as? Int ?? 0) }
        #expect(!deprecated.isEmpty)
        #expect(deprecated.allSatisfy { $0["activityName"] == nil })
        #expect(workouts.filter { $0["activityName"] != nil }.allSatisfy { ($0["activityName"] as? String)?.first?.isLowercase == true })
        // Vitals: SpO2 as a fraction, respiratory rate, some blood pressure.
        #expect(quantity("OxygenSaturation").allSatisfy { ($0["value"] as? Double).map { $0 > 0.85 && $0 <= 1 } == true && $0["unit"] as? String == "fraction" })
        #expect(quantity("RespiratoryRate").count > 100)
        #expect(!quantity("BloodPressureSystolic").isEmpty)
        #expect(quantity("BloodPressureSystolic").count == quantity("BloodPressureDiastolic").count)
    }

    @Test("Europe/Berlin's offset switches at 01:00 UTC on the last Sundays of March and October")
    func berlinOffsets() {
        func ms(_ text: String) -> Int64 { Timestamp(text)!.millisecondsSinceEpoch }
        #expect(CentralEuropeanTime.offsetMinutes(atMilliseconds: ms("2026-03-29T00:59:59.000Z")) == 60)
        #expect(CentralEuropeanTime.offsetMinutes(atMilliseconds: ms("2026-03-29T01:00:00.000Z")) == 120)
        #expect(CentralEuropeanTime.offsetMinutes(atMilliseconds: ms("2026-10-25T00:59:59.000Z")) == 120)
        #expect(CentralEuropeanTime.offsetMinutes(atMilliseconds: ms("2026-10-25T01:00:00.000Z")) == 60)
        #expect(DemoTimestamp.text(ms("2026-08-21T08:25:30.000Z") + 7, offsetMinutes: 120) == "2026-08-21T10:25:30.007+02:00")
        #expect(CentralEuropeanTime.localDate(atMilliseconds: ms("2026-08-20T22:30:00.000Z")).description == "2026-08-21")
    }
}
