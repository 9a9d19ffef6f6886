import Foundation

/// Error messages in a file's own numbers.
enum ErrorLocation {
    /// `record 2 (line 3): …` of a body starting at record 10, line 20 → `record 11 (line 22): …`.
    static func relocate(_ message: String, from start: StreamPosition) -> String {
        let scanner = Scanner(string: message)
        scanner.charactersToBeSkipped = nil
        if scanner.scanString("record ") != nil, let record = scanner.scanInt64(), scanner.scanString(" (line ") != nil,
           let line = scanner.scanInt64(), scanner.scanString(")") != nil {
            let rest = String(message[scanner.currentIndex...])
            return "record \(start.records + record) (line \(start.line - 1 + line))" + rest
        }
        return "body starting at record \(start.records + 1) (line \(start.line)): " + message
    }
}
