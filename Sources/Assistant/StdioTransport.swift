import Foundation

/// MCP's stdio transport: one JSON-RPC message per line on standard input, each answer one
/// line on standard output (nothing else is ever written there: logs go to standard error).
public enum StdioTransport {
    /// Answers every line read from standard input for `person`, until the input closes.
    public static func serve(_ server: MCPServer, person: String) {
        while let line = readLine(strippingNewline: true) {
            guard line.contains(where: { !$0.isWhitespace }) else { continue }
            if let answer = server.answer(bytes: Array(line.utf8), person: person) {
                FileHandle.standardOutput.write(Data((answer.text + "\n").utf8))
            }
        }
    }
}
