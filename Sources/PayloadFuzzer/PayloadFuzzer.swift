import Foundation
import FuzzSupport
import HealthPayload

/// Runs one input through the five decoders and stops the process if any promise is broken:
/// a decoder only ever answers `.probe`, batches, or a `PayloadError`; a batch's `samplesJSON`
/// parses (Foundation, independently) into exactly `validSampleCount` objects with no NUL and no
/// non-finite number; quarantined raws hold no NUL; the envelope's `jsonText` is a nine-key object.
/// The Stridee decoders: see `checkStrideeWorkout` and `checkStrideeWellness`; Health Auto
/// Export's: `checkHAE`. Returns which of them accepted the input, for the replayer's tally.
@discardableResult
func checkOneInput(_ bytes: [UInt8]) -> (workout: Bool, wellness: Bool, hae: Bool) {
    let accepted = (workout: checkStrideeWorkout(bytes), wellness: checkStrideeWellness(bytes),
                    hae: checkHAE(bytes, aggregation: nil) && checkHAE(bytes, aggregation: "days"))
    for format in [PayloadFormat.json, .csv] {
        let decoded: DecodedBody
        do {
            decoded = try PayloadDecoder.decode(bytes, format: format)
        } catch {
            if error.message.count > 400 { fatalError("\(format): error message too long (\(error.message.count) characters)") }
            continue
        }
        guard case .batches(let batches) = decoded else { continue }
        if batches.isEmpty { fatalError("\(format): .batches with no batch") }
        for batch in batches {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(batch.samplesJSON)) else {
                fatalError("\(format): samplesJSON does not parse: \(String(decoding: batch.samplesJSON.prefix(200), as: UTF8.self))")
            }
            guard let objects = parsed as? [[String: Any]], objects.count == batch.validSampleCount else {
                fatalError("\(format): samplesJSON is not \(batch.validSampleCount) objects")
            }
            if !objects.allSatisfy(isPostgresSafe) { fatalError("\(format): a valid sample holds NUL or a non-finite number") }
            var last = 0
            for sample in batch.quarantined {
                if sample.raw.utf8.contains(0) { fatalError("\(format): quarantined raw holds NUL") }
                if sample.position <= last || sample.position > batch.sampleCount { fatalError("\(format): quarantine positions out of order") }
                last = sample.position
            }
            let envelope = try? JSONSerialization.jsonObject(with: Data(batch.envelope.jsonText.utf8)) as? [String: Any]
            if envelope?.count != 9 { fatalError("\(format): envelope jsonText is not a nine-key object") }
        }
    }
    return accepted
}

/// A `healthkit.v1` decode answers a workout or a short `StrideePayloadError` that is not
/// `.tooManyItems`; a workout has an upper-case UUID, end not before start, duration and every
/// number finite with |x| ≤ 1e15, columns of one length sorted by time, lat/lon in range, and a
/// `headerJSON` that parses into an object without the five arrays, with no NUL or non-finite number.
/// Returns whether the workout was accepted.
@discardableResult
func checkStrideeWorkout(_ bytes: [UInt8]) -> Bool {
    let w: StrideeWorkout
    do {
        w = try StrideeDecoder.decodeWorkout(bytes)
    } catch {
        checkStrideeError(error, "workout")
        if error.reason == .tooManyItems { fatalError("workout: refused for too many items") }
        return false
    }
    func bounded(_ values: [Double]) -> Bool { values.allSatisfy { $0.isFinite && $0.magnitude <= 1e15 } }
    func sorted(_ times: [Int64]) -> Bool { zip(times, times.dropFirst()).allSatisfy { $0 <= $1 } }
    if w.uuid != w.uuid.uppercased() || w.uuid.utf8.count != 36 { fatalError("workout: uuid \(w.uuid)") }
    if w.endDate.microsecondsSinceEpoch < w.startDate.microsecondsSinceEpoch { fatalError("workout: ends before it starts") }
    if !(w.duration >= 0 && w.duration <= 1e15) || !bounded([w.totalDistanceMeters, w.totalEnergyKcal].compactMap { $0 }) {
        fatalError("workout: header number out of bounds")
    }
    for stream in [w.heartRate, w.runningPower, w.cyclingPower, w.cyclingCadence] {
        if stream.times.count != stream.values.count || !sorted(stream.times) || !bounded(stream.values) { fatalError("workout: bad stream") }
    }
    let r = w.route
    let optionals = [r.altitudes, r.speeds, r.courses, r.horizontalAccuracies, r.verticalAccuracies]
    if ([r.latitudes.count, r.longitudes.count] + optionals.map(\.count)).contains(where: { $0 != r.count }) { fatalError("workout: route columns differ") }
    if !sorted(r.times) || !r.latitudes.allSatisfy({ abs($0) <= 90 }) || !r.longitudes.allSatisfy({ abs($0) <= 180 })
        || !optionals.allSatisfy({ bounded($0.compactMap { $0 }) }) {
        fatalError("workout: bad route")
    }
    guard let header = try? JSONSerialization.jsonObject(with: Data(w.headerJSON.utf8)) as? [String: Any], isPostgresSafe(header),
          Set(header.keys).isDisjoint(with: ["heartRate", "runningPower", "cyclingPower", "cyclingCadence", "route"])
    else { fatalError("workout: headerJSON \(w.headerJSON.prefix(200))") }
    return true
}

/// A `healthkit.wellness.v1` decode answers at most 2,000 items or a short `StrideePayloadError`;
/// each item's `json` parses into an object of the item's kind with no NUL or non-finite number,
/// its end is not before its start and its offset within ±18 h.
/// Returns whether the body was accepted.
@discardableResult
func checkStrideeWellness(_ bytes: [UInt8]) -> Bool {
    let items: [WellnessItem]
    do {
        items = try StrideeDecoder.decodeWellness(bytes)
    } catch {
        checkStrideeError(error, "wellness")
        return false
    }
    if items.count > StrideeDecoder.maxWellnessItems { fatalError("wellness: \(items.count) items") }
    for item in items {
        guard let object = try? JSONSerialization.jsonObject(with: Data(item.json.utf8)) as? [String: Any], isPostgresSafe(object),
              object["kind"] as? String == item.kind.rawValue
        else { fatalError("wellness: item json \(item.json.prefix(200))") }
        if let end = item.end, end.microsecondsSinceEpoch < item.start.microsecondsSinceEpoch { fatalError("wellness: ends before it starts") }
        if let offset = item.tzOffsetSeconds, abs(offset) > 64_800 { fatalError("wellness: offset \(offset)") }
    }
    return true
}

/// A Health Auto Export decode answers a body or a short `StrideePayloadError`; a body's metric
/// samples, written out, parse (Foundation, independently) into exactly `metricSampleCount`
/// objects with no NUL and no non-finite number, each with a uuid, a start not after its end, and
/// a value of a catalog type within its plausible range; every workout's sample parses likewise
/// with its streams sorted and its route's columns of one length; the records parse; the
/// quarantine's positions are distinct and its raws hold no NUL. Returns whether it was accepted.
@discardableResult
func checkHAE(_ bytes: [UInt8], aggregation: String?) -> Bool {
    let body: HAEBody
    do {
        body = try HAEDecoder.decode(bytes, aggregation: aggregation)
    } catch {
        checkStrideeError(error, "hae")
        return false
    }
    guard let samples = try? JSONSerialization.jsonObject(with: Data(body.samplesJSON(0..<body.metricSampleCount))) as? [[String: Any]],
          samples.count == body.metricSampleCount, samples.allSatisfy(isPostgresSafe) else {
        fatalError("hae: samplesJSON is not \(body.metricSampleCount) PostgreSQL-safe objects")
    }
    for sample in samples {
        guard let type = sample["type"] as? String, (sample["uuid"] as? String)?.utf8.count == 36,
              let start = (sample["start"] as? String).flatMap({ Timestamp($0) }), let end = (sample["end"] as? String).flatMap({ Timestamp($0) }),
              start.microsecondsSinceEpoch <= end.microsecondsSinceEpoch else { fatalError("hae: sample \(sample)") }
        if let value = (sample["value"] as? NSNumber)?.doubleValue, sample["kind"] as? String == "quantity",
           let range = Plausibility.range(of: type), !range.contains(value) { fatalError("hae: implausible \(type) \(value)") }
    }
    for workout in body.workouts {
        guard let object = try? JSONSerialization.jsonObject(with: Data(workout.sampleJSON)) as? [String: Any], isPostgresSafe(object),
              workout.start.microsecondsSinceEpoch <= workout.end.microsecondsSinceEpoch else { fatalError("hae: workout sample") }
        for (_, stream) in workout.streams where !zip(stream.times, stream.times.dropFirst()).allSatisfy({ $0 <= $1 }) {
            fatalError("hae: stream out of order")
        }
        let r = workout.route
        if [r.latitudes.count, r.longitudes.count, r.altitudes.count, r.speeds.count].contains(where: { $0 != r.count }) { fatalError("hae: route") }
    }
    guard (try? JSONSerialization.jsonObject(with: Data(body.recordsJSON()))) is [Any] else { fatalError("hae: recordsJSON does not parse") }
    if Set(body.quarantined.map(\.position)).count != body.quarantined.count { fatalError("hae: quarantine positions repeat") }
    if body.quarantined.contains(where: { $0.raw.utf8.contains(0) }) { fatalError("hae: quarantined raw holds NUL") }
    return true
}

/// A refusal's description is short and not empty; its path is part of it.
func checkStrideeError(_ error: StrideePayloadError, _ decoder: String) {
    let text = error.description
    if text.isEmpty || text.count > 400 { fatalError("\(decoder): error message of \(text.count) characters") }
    if !text.hasPrefix(error.path) { fatalError("\(decoder): description does not start with its path") }
}

#if FUZZING
/// libFuzzer's callback: one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func payloadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    checkOneInput(bytes)
    return 0
}

// SwiftPM links a Linux executable with `--defsym main=<Module>_main`: this entry point hands
// the command line to libFuzzer's driver (FuzzSupport).
@_cdecl("PayloadFuzzer_main")
func payloadFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, payloadFuzzerTestOneInput)
}
#else
/// Without `-DFUZZING`: replays files (e.g. a crash artifact or a corpus folder) through the same checks.
@main
struct PayloadFuzzer {
    static func main() throws {
        var workouts = 0
        var wellnessBodies = 0
        var haeBodies = 0
        let count = try replayFiles(CommandLine.arguments.dropFirst(),
                                    usage: "usage: PayloadFuzzer FILE_OR_FOLDER...  (build with scripts/fuzz-payload.sh to fuzz)") { bytes in
            let accepted = checkOneInput(bytes)
            if accepted.workout { workouts += 1 }
            if accepted.wellness { wellnessBodies += 1 }
            if accepted.hae { haeBodies += 1 }
        }
        print("checked \(count) inputs: all invariants hold (\(workouts) accepted as healthkit.v1, \(wellnessBodies) as healthkit.wellness.v1, \(haeBodies) as Health Auto Export)")
    }
}
#endif
