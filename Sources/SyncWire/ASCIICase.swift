/// ASCII case folding: how SQLite compares identifiers and `NOCASE` text, and how CipherSync
/// matches table names, column names and item ids.
///
/// Only the 26 ASCII capitals fold (`A`–`Z` to `a`–`z`); every other character stays as it is, so
/// `ONE` and `one` match while `Äpfel` and `äpfel` do not. It is exactly SQLite's `NOCASE` rule.
public enum ASCIICase {
    /// `text` with its ASCII capitals lowercased and every other character unchanged.
    /// - Parameter text: any text.
    /// - Returns: the folded text; two texts match when their folds are equal.
    public static func fold(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        // Byte by byte: the bytes of "A"..."Z" never occur inside a longer UTF-8 sequence, so
        // lowering them changes exactly the ASCII capitals and keeps the text valid UTF-8.
        let utf8 = text.utf8
        return String(unsafeUninitializedCapacity: utf8.count) { buffer in
            var written = 0
            for byte in utf8 {
                buffer[written] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                written += 1
            }
            return written
        }
    }
}
