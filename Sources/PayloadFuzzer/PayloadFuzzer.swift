import Foundation
import HealthPayload

/// Runs one input through both decoders and stops the process if any promise is broken:
/// a decoder only ever answers `.probe`, batches, or a `PayloadError`; a batch's `samplesJSON`
/// parses (Foundation, independently) into exactly `validSampleCount` objects with no NUL and no
/// non-finite number; quarantined raws hold no NUL; the envelope's `jsonText` is a nine-key object.
func checkOneInput(_ bytes: [UInt8]) {
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
}

/// No NUL in any string or key and every number finite, recursively.
func isPostgresSafe(_ value: Any) -> Bool {
    switch value {
    case let string as String: return !string.unicodeScalars.contains("\0")
    case let number as NSNumber: return number.doubleValue.isFinite
    case let array as [Any]: return array.allSatisfy(isPostgresSafe)
    case let object as [String: Any]: return object.allSatisfy { !$0.key.unicodeScalars.contains("\0") && isPostgresSafe($0.value) }
    default: return true
    }
}

#if FUZZING
/// libFuzzer's callback: one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func payloadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    checkOneInput(bytes)
    return 0
}

/// libFuzzer's driver (compiler-rt `FuzzerDriver.cpp`), linked by `-sanitize=fuzzer`.
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

// SwiftPM links a Linux executable with `--defsym main=<Module>_main` (so tests can link it), which
// keeps libFuzzer's own `main` out; this entry point hands the command line to libFuzzer's driver instead.
@_cdecl("PayloadFuzzer_main")
func payloadFuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, payloadFuzzerTestOneInput)
}
#else
/// Without `-DFUZZING`: replays files (e.g. a crash artifact or a corpus folder) through the same checks.
@main
struct PayloadFuzzer {
    static func main() throws {
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            FileHandle.standardError.write(Data("usage: PayloadFuzzer FILE_OR_FOLDER...  (build with scripts/fuzz-payload.sh to fuzz)\n".utf8))
            exit(64)
        }
        var count = 0
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("no such file: \(path)\n".utf8))
                exit(1)
            }
            let files = isFolder.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                checkOneInput(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                count += 1
            }
        }
        print("checked \(count) inputs: all invariants hold")
    }
}
#endif
