import AppleExport
import Foundation
import FuzzSupport
import HealthPayload

/// The catalog the fuzzer maps with: a type of each rule and kind (the mapping's branches).
let catalog = ExportCatalog(entries: [
    "HKQuantityTypeIdentifierStepCount": .init(group: "activity", kind: "quantity", unit: "count", rule: "total"),
    "HKQuantityTypeIdentifierDistanceWalkingRunning": .init(group: "activity", kind: "quantity", unit: "m", rule: "total"),
    "HKQuantityTypeIdentifierHeartRate": .init(group: "heart", kind: "quantity", unit: "count/min", rule: "reading"),
    "HKQuantityTypeIdentifierBodyMass": .init(group: "body", kind: "quantity", unit: "kg", rule: "latest"),
    "HKQuantityTypeIdentifierBodyTemperature": .init(group: "body", kind: "quantity", unit: "degC", rule: "reading"),
    "HKQuantityTypeIdentifierOxygenSaturation": .init(group: "heart", kind: "quantity", unit: "%", rule: "reading"),
    "HKQuantityTypeIdentifierActiveEnergyBurned": .init(group: "activity", kind: "quantity", unit: "kcal", rule: "total"),
    "HKCategoryTypeIdentifierSleepAnalysis": .init(group: "sleep", kind: "category", unit: nil, rule: "sleep"),
    "HKWorkoutTypeIdentifier": .init(group: "workouts", kind: "workout", unit: nil, rule: "workout"),
])

/// Runs one input through the export reader as export.xml and as a GPX file, and stops the
/// process if a promise is broken: every sample and summary it makes is a JSON object with no
/// NUL and no non-finite number, a sample has an upper-case UUID and start and end in the
/// reference's shape; every skipped element names a line within the document and a short,
/// non-empty reason; a clean document (nothing skipped) gives the same samples whatever the
/// chunk size; a route has one value per point in every column, coordinates in range, times in
/// order, and no more points than allowed. Returns how many samples the document gave.
@discardableResult
func checkOneInput(_ bytes: [UInt8]) -> Int {
    let whole = ExportDocumentCheck.read(bytes, catalog: catalog, chunkSize: 1 << 16)
    for sample in whole.samples {
        guard let object = try? JSONSerialization.jsonObject(with: Data(sample)) as? [String: Any], isPostgresSafe(object) else {
            fatalError("a sample is not a JSON object PostgreSQL takes: \(String(decoding: sample.prefix(200), as: UTF8.self))")
        }
        guard let uuid = object["uuid"] as? String, uuid.utf8.count == 36, uuid == uuid.uppercased() else { fatalError("sample uuid \(object["uuid"] ?? "none")") }
        for key in ["start", "end"] {
            guard let text = object[key] as? String, Timestamp(text) != nil else { fatalError("sample \(key) \(object[key] ?? "none")") }
        }
    }
    for summary in whole.summaries {
        guard let object = try? JSONSerialization.jsonObject(with: Data(summary)) as? [String: Any], isPostgresSafe(object) else {
            fatalError("a summary is not a JSON object: \(String(decoding: summary.prefix(200), as: UTF8.self))")
        }
    }
    for s in whole.skipped where s.line < 0 || s.line > whole.lines || s.reason.isEmpty || s.reason.count > 1000 {
        fatalError("skipped element named badly: \(s.line) of \(whole.lines) lines: \(s.reason.prefix(200))")
    }
    if whole.skipped.isEmpty && bytes.count <= 16384 {
        // Small chunks split every token somewhere (7 bytes for small inputs; fewer calls for larger ones).
        let chunk = bytes.count <= 4096 ? 7 : 61
        let small = ExportDocumentCheck.read(bytes, catalog: catalog, chunkSize: chunk)
        if small.skipped.isEmpty && small.samples != whole.samples { fatalError("a clean document read in \(chunk)-byte chunks gives other samples") }
    }
    checkRoute(bytes)
    return whole.samples.count
}

/// The same bytes as a route file.
func checkRoute(_ bytes: [UInt8]) {
    let maxPoints = 1000
    guard case .success(let r) = ExportDocumentCheck.readGPX(bytes, chunkSize: 4096, maxPoints: maxPoints) else { return }
    let optionals = [r.altitudes, r.speeds, r.courses, r.horizontalAccuracies, r.verticalAccuracies]
    if ([r.latitudes.count, r.longitudes.count] + optionals.map(\.count)).contains(where: { $0 != r.count }) { fatalError("route columns differ") }
    if r.count > maxPoints { fatalError("route of \(r.count) points, more than \(maxPoints)") }
    if !zip(r.times, r.times.dropFirst()).allSatisfy({ $0 <= $1 }) { fatalError("route not in time order") }
    if !r.latitudes.allSatisfy({ abs($0) <= 90 }) || !r.longitudes.allSatisfy({ abs($0) <= 180 }) { fatalError("route coordinates out of range") }
    if !optionals.allSatisfy({ $0.allSatisfy { $0.map { $0.isFinite } ?? true } }) { fatalError("route number not finite") }
}

#if FUZZING
/// libFuzzer's callback: one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func exportFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    checkOneInput(bytes)
    return 0
}

// SwiftPM links a Linux executable with `--defsym main=<Module>_main`: this entry point hands
// the command line to libFuzzer's driver (FuzzSupport).
@_cdecl("ExportFuzzer_main")
func exportFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, exportFuzzerTestOneInput)
}
#else
/// Without `-DFUZZING`: replays files (a crash artifact, a corpus folder, the real exports) through the same checks.
@main
struct ExportFuzzer {
    static func main() throws {
        var samples = 0
        let count = try replayFiles(CommandLine.arguments.dropFirst(),
                                    usage: "usage: ExportFuzzer FILE_OR_FOLDER...  (build with scripts/fuzz-payload.sh to fuzz)") { bytes in
            samples += checkOneInput(bytes)
        }
        print("checked \(count) inputs: all invariants hold (\(samples) samples made)")
    }
}
#endif
