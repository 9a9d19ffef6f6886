import Foundation

// What the libFuzzer harnesses (PayloadFuzzer, ExportFuzzer) share: the check of what reaches
// PostgreSQL, the replayer of files without -DFUZZING, and libFuzzer's driver.

/// No NUL in any string or key and every number finite, recursively.
public func isPostgresSafe(_ value: Any) -> Bool {
    switch value {
    case let string as String: return !string.unicodeScalars.contains("\0")
    case let number as NSNumber: return number.doubleValue.isFinite
    case let array as [Any]: return array.allSatisfy(isPostgresSafe)
    case let object as [String: Any]: return object.allSatisfy { !$0.key.unicodeScalars.contains("\0") && isPostgresSafe($0.value) }
    default: return true
    }
}

/// Runs `check` on every file named in `paths` (a folder: its files, in name order) and returns
/// how many it checked; with no path, or one that does not exist, it says so and exits.
public func replayFiles(_ paths: ArraySlice<String>, usage: String, _ check: ([UInt8]) -> Void) throws -> Int {
    guard !paths.isEmpty else {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(64)
    }
    var count = 0
    for path in paths {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            FileHandle.standardError.write(Data("no such file: \(path)\n".utf8))
            exit(1)
        }
        let files = isFolder.boolValue ? try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 } : [path]
        for file in files {
            check(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            count += 1
        }
    }
    return count
}

#if FUZZING
/// libFuzzer's driver (compiler-rt `FuzzerDriver.cpp`), linked by `-sanitize=fuzzer`.
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Hands the command line to libFuzzer's driver with `callback` for each input. SwiftPM links a
/// Linux executable with `--defsym main=<Module>_main` (so tests can link it), which keeps
/// libFuzzer's own `main` out: each harness's `<Module>_main` calls this instead.
public func runLibFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}
#endif
