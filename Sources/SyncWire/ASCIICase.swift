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
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let isUpper = scalar.value >= 0x41 && scalar.value <= 0x5A  // "A"..."Z"
            scalars.append(isUpper ? Unicode.Scalar(UInt8(scalar.value + 0x20)) : scalar)
        }
        return String(scalars)
    }
}
