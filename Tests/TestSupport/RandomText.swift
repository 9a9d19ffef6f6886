/// Texts of an exact UTF-8 length for the bounds tests: random letters mixed with two-, three-
/// and four-byte characters, so nothing compresses (PostgreSQL compresses a long index entry
/// of repeated letters to almost nothing, which would hide a too-long one) and so a count of
/// characters and a count of bytes differ.
public enum RandomText {
    private static let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".unicodeScalars)
    private static let wide: [Unicode.Scalar] = ["é", "ß", "ø", "€", "中", "文", "😀", "🏃"]

    /// A text of exactly `bytes` UTF-8 bytes, the same for the same `seed`.
    public static func bytes(_ bytes: Int, seed: UInt64) -> String {
        var random = SeededGenerator(seed: seed)
        var text = String.UnicodeScalarView()
        var used = 0
        while used < bytes {
            let left = bytes - used
            var scalar = letters[Int(random.next() % UInt64(letters.count))]
            if left >= 4, random.next() % 3 == 0 { scalar = wide[Int(random.next() % UInt64(wide.count))] }
            text.append(scalar)
            used += String(scalar).utf8.count
        }
        return String(text)
    }
}
