import Foundation

/// Files of this repository, found from this source file's path (tests run from anywhere).
enum Repository {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func url(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: url(relativePath), encoding: .utf8)
    }

    static func exists(_ relativePath: String) -> Bool {
        FileManager.default.fileExists(atPath: url(relativePath).path)
    }

    /// File names (not paths) in a folder of the repository with the given extension, sorted.
    static func files(in folder: String, withExtension ext: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(folder).path)
            .filter { $0.hasSuffix("." + ext) }
            .sorted()
    }
}

/// A failed precondition of a test, with what was found.
struct DeploymentTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
