/// Text between delimiters, a delimiter inside written twice: how OData writes a string literal
/// (`'it''s'`) and SQL a delimited identifier (`"say ""hi"""`).
package enum DelimitedText {
    /// `text` between two `delimiter`s, each `delimiter` in it doubled.
    ///
    /// The text is read scalar by scalar, as the lexers that read it back do: a delimiter
    /// followed by a combining mark (`'` U+0301) is still a delimiter to them, though Swift sees
    /// one character (`replacingOccurrences(of:with:)` compares characters and would leave that
    /// delimiter single, so the text would end there and what follows would be read as syntax).
    ///
    /// - Parameters:
    ///   - text: The text to delimit.
    ///   - delimiter: The delimiter, such as `'` or `"`.
    /// - Returns: The delimited text.
    package static func quote(_ text: String, with delimiter: Unicode.Scalar) -> String {
        let mark = String(delimiter)
        // Without a delimiter inside, nothing is doubled (a scalar test: see above).
        guard text.unicodeScalars.contains(delimiter) else { return mark + text + mark }
        var scalars = String.UnicodeScalarView()
        scalars.append(delimiter)
        for scalar in text.unicodeScalars {
            if scalar == delimiter { scalars.append(delimiter) }
            scalars.append(scalar)
        }
        scalars.append(delimiter)
        return String(scalars)
    }
}
