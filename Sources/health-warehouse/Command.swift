import Foundation
import Warehouse

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
    /// The exit code: 1, or 64 when what failed is an argument the database refused (an unknown time zone).
    var status: Int32 = 1
    var description: String { message }
}

/// Writes lines to stderr (messages for people; results go to stdout). Each argument is one
/// line: its control characters, line breaks above all, are escaped as `serve`'s log escapes
/// them (`Log.escapingControls`), so nothing a message quotes — a path, a file's or an
/// export's content, an argument — can start a line of its own (a forged `error: …`).
func printError(_ lines: String...) {
    FileHandle.standardError.write(Data(lines.map { Log.escapingControls($0) + "\n" }.joined().utf8))
}

/// Writes our own text of several lines (the usage) to stderr as it is.
func printUsage(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to stdout and flushes it (results for machines).
func printOutput(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
