import Foundation
import HealthPayload

/// One file to consider, as found on disk.
public struct BacklogFile: Sendable, Equatable {
    /// The path as the user would write it (the argument, or the folder joined with names).
    public var displayPath: String
    /// The absolute path with symlinks resolved: the ledger key and the delivery's `file`.
    /// `-` for standard input.
    public var absolutePath: String
    /// Size in bytes when walked (0 for standard input).
    public var size: Int64
    /// Modification time, nanoseconds since the epoch.
    public var modifiedNanoseconds: Int64
    /// How the file holds bodies; nil when neither its name nor `--format` says.
    public var format: BacklogFormat?
    /// True for `.gz`.
    public var compressed: Bool

    /// True for `-`.
    public var isStandardInput: Bool { absolutePath == "-" }
}

/// Expands paths into files in a deterministic order: a file is itself, a folder is walked
/// depth first with names in byte order (hidden names and names of unknown formats skipped),
/// `-` is standard input. A file reached twice is listed once. A walk never leaves the folder
/// it was given: a symbolic link in it that leads out of it is skipped and named.
public enum BacklogWalker {
    /// The files, and a failure for each path that does not exist or cannot be read.
    public static func walk(_ paths: [String], format override: BacklogFormat?) -> (files: [BacklogFile], failures: [(path: String, error: BacklogError)]) {
        var files: [BacklogFile] = []
        var failures: [(String, BacklogError)] = []
        var seen = Set<String>()
        var visitedFolders = Set<String>()

        /// `root`: the real path of the folder given, for what is found in it.
        func add(_ display: String, explicit: Bool, root: String?) {
            guard let real = realPath(display) else {
                failures.append((display, BacklogError("cannot read: \(String(cString: strerror(errno)))")))
                return
            }
            if let root, !real.hasPrefix(root == "/" ? "/" : root + "/") {
                failures.append((display, BacklogError("a symbolic link out of the folder given (to \(real)): skipped")))
                return
            }
            var info = stat()
            guard stat(real, &info) == 0 else {
                failures.append((display, BacklogError("cannot read: \(String(cString: strerror(errno)))")))
                return
            }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                guard visitedFolders.insert(real).inserted else { return }  // a symlink loop, or named twice
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: display)
                } catch {
                    failures.append((display, BacklogError("cannot list the folder: \(String(cString: strerror(errno)))")))
                    return
                }
                for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where !name.hasPrefix(".") {
                    let child = display.hasSuffix("/") ? display + name : display + "/" + name
                    var childInfo = stat()
                    guard stat(child, &childInfo) == 0 else { continue }  // a dangling symlink
                    if (childInfo.st_mode & S_IFMT) == S_IFDIR || BacklogFormat.of(fileName: name) != nil {
                        add(child, explicit: false, root: root ?? real)
                    }
                }
                return
            }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                if explicit { failures.append((display, BacklogError("not a regular file or folder"))) }
                return
            }
            // The ledger keys its row by this path (health_store.ingested_files), an index entry.
            if let excess = TextLimit.excess(real) {
                failures.append((display, BacklogError("its path is \(excess)")))
                return
            }
            guard seen.insert(real).inserted else { return }
            let named = BacklogFormat.of(fileName: (display as NSString).lastPathComponent)
            files.append(BacklogFile(
                displayPath: display, absolutePath: real, size: Int64(info.st_size),
                modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                format: named?.format ?? override, compressed: named?.compressed ?? false))
        }

        for path in paths {
            if path == "-" {
                if seen.insert("-").inserted {
                    files.append(BacklogFile(displayPath: "-", absolutePath: "-", size: 0, modifiedNanoseconds: 0,
                                             format: override, compressed: false))
                }
                continue
            }
            add(path, explicit: true, root: nil)
        }
        return (files, failures)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
