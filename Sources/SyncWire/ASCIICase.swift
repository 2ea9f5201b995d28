/// ASCII case folding: how SQLite compares identifiers and `NOCASE` text, and how CipherSync
/// matches table names, column names and item ids.
///
/// Only the 26 ASCII capitals fold (`A`–`Z` to `a`–`z`); every other character stays as it is, so
/// `ONE` and `one` match while `Äpfel` and `äpfel` do not. It is exactly SQLite's `NOCASE` rule.
package enum ASCIICase {
    /// `text` with its ASCII capitals lowercased and every other character unchanged.
    /// - Parameter text: any text.
    /// - Returns: the folded text; two texts match when their folds are equal.
    package static func fold(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(where: isCapital) else { return text }
        // A capital is one byte in UTF-8 (every byte of a longer scalar is 0x80 or above), so
        // folding the bytes folds the scalars and keeps the text valid UTF-8.
        return String(unsafeUninitializedCapacity: utf8.count) { buffer in
            var count = 0
            for byte in utf8 {
                buffer[count] = isCapital(byte) ? byte + 0x20 : byte
                count += 1
            }
            return count
        }
    }

    /// Whether `a` and `b` have equal folds (``fold(_:)``), compared byte by byte without making them.
    package static func equal(_ a: String, _ b: String) -> Bool {
        let (left, right) = (a.utf8, b.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy { x, y in x == y || (isCapital(x) ? x + 0x20 : x) == (isCapital(y) ? y + 0x20 : y) }
    }

    /// Whether a UTF-8 byte is an ASCII capital, `A`–`Z`.
    private static func isCapital(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
}
