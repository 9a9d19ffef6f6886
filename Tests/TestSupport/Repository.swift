import Foundation

/// Files of this repository, found from this source file's path (tests run from anywhere).
public enum Repository {
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func url(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    /// The absolute path of a file of the repository.
    public static func path(_ relativePath: String) -> String { url(relativePath).path }

    public static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: url(relativePath), encoding: .utf8)
    }

    public static func exists(_ relativePath: String) -> Bool {
        FileManager.default.fileExists(atPath: url(relativePath).path)
    }

    /// File names (not paths) in a folder of the repository with the given extension, sorted.
    public static func files(in folder: String, withExtension ext: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url(folder).path)
            .filter { $0.hasSuffix("." + ext) }
            .sorted()
    }
}

