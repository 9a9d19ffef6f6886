import Foundation
import Harness

/// Another commit's `health-warehouse`, built for `--against REV` so a change is measured
/// beside what users run today, in the same run on the same machine.
///
/// The commit's tree is exported (`git archive`) into a temporary folder named after the
/// commit and built there in release mode; the folder is kept, so a second run against the
/// same commit starts at once. The repository is the one the benchmark runs from.
enum AgainstBuild {
    /// The built binary and the full commit it was built from.
    struct Built {
        var binary: String
        var commit: String
        /// `276bb82`
        var short: String { String(commit.prefix(7)) }
    }

    /// Builds (or finds built) `revision` of the repository around the benchmark.
    static func build(_ revision: String) throws -> Built {
        guard let repository = repositoryPath() else {
            throw BenchmarkError.usage("--against needs the repository: run the benchmark from its checkout")
        }
        let resolved = try CLIProcess.runProgram("/usr/bin/git", ["-C", repository, "rev-parse", "--verify", "--quiet", revision + "^{commit}"])
        let commit = resolved.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard resolved.status == 0, commit.count == 40 else {
            throw BenchmarkError.usage("--against \(revision): not a commit of \(repository)")
        }
        let folder = NSTemporaryDirectory() + "hw-against-\(commit.prefix(12))"
        let binary = folder + "/.build/release/health-warehouse"
        if FileManager.default.isExecutableFile(atPath: binary) { return Built(binary: binary, commit: commit) }

        say("--against \(revision): building \(commit.prefix(12)) in \(folder) (release; a few minutes) …")
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let export = try CLIProcess.runProgram("/bin/sh", ["-c", "git -C \"$0\" archive \"$1\" | tar -x -C \"$2\"", repository, commit, folder])
        guard export.status == 0 else { throw BenchmarkError.usage("git archive \(commit) failed: \(export.stderr.suffix(500))") }
        let build = try CLIProcess.runProgram("/usr/bin/env", ["swift", "build", "-c", "release", "--product", "health-warehouse", "--package-path", folder])
        guard build.status == 0, FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchmarkError.usage("building \(commit.prefix(12)) failed: \(build.stdout.suffix(1500)) \(build.stderr.suffix(1500))")
        }
        return Built(binary: binary, commit: commit)
    }

    /// The checkout holding the benchmark.
    static func repositoryPath() -> String? {
        checkoutCandidates().first { FileManager.default.fileExists(atPath: $0 + "/Package.swift") && FileManager.default.fileExists(atPath: $0 + "/.git") }
    }
}

/// Where the checkout around the benchmark may be: the current folder (make runs there), then
/// the folders above the benchmark binary (`.build/<triple>/release`).
func checkoutCandidates() -> [String] {
    var folders = [FileManager.default.currentDirectoryPath]
    var up = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<4 {
        up = up.deletingLastPathComponent()
        folders.append(up.path)
    }
    return folders
}
