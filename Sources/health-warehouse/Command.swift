import Foundation

/// One `health-warehouse` command: parsed completely before it does anything, so a bad
/// command line never touches the database.
protocol Command: Sendable {
    /// The word after `health-warehouse`.
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full `--help` text.
    static var help: String { get }
    /// Parses the arguments after the command name; throws `UsageError`.
    init(arguments: [String]) throws
    /// Does the work and returns the exit code (0 success, 1 failure).
    func run() throws -> Int32
}

/// A failure to report as `error: …` with one hint line, exit 1.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    var hint: String?
    var description: String { message }
}

/// Writes a line to stderr (messages for people; results go to stdout).
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to stdout and flushes it (results for machines).
func printOutput(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
