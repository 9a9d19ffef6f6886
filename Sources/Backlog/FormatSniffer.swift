/// Standard input without `--format`.
enum FormatSniffer {
    /// The format of standard input: `{` starts JSON, anything else is CSV. JSON is one body a
    /// line when its first non-blank line is a whole object, else one body.
    static func sniff(_ chunk: [UInt8], jsonOnly: Bool = false) -> BacklogFormat {
        var i = 0
        if chunk.count >= 3, chunk[0] == 0xEF, chunk[1] == 0xBB, chunk[2] == 0xBF { i = 3 }
        while i < chunk.count, chunk[i] == 0x20 || chunk[i] == 0x09 || chunk[i] == 0x0A || chunk[i] == 0x0D { i += 1 }
        guard i < chunk.count, chunk[i] == UInt8(ascii: "{") else { return jsonOnly ? .json : .csv }
        guard let lf = chunk[i...].firstIndex(of: 0x0A) else { return .json }
        var end = lf
        while end > i, chunk[end - 1] == 0x20 || chunk[end - 1] == 0x09 || chunk[end - 1] == 0x0D { end -= 1 }
        return chunk[end - 1] == UInt8(ascii: "}") ? .jsonLines : .json
    }
}
