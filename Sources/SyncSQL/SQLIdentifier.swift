import SyncWire

/// SQL identifiers (table, column, index names) as they appear in SQL text.
public enum SQLIdentifier {
    /// Quotes an identifier as a delimited identifier: double quotes, an inner double quote
    /// doubled (every one, also one followed by a combining mark: see `DelimitedText`).
    /// SQLite and PostgreSQL read it alike, so this is the one quoting of every SQL text
    /// CipherSync writes; an identifier never reaches SQL any other way.
    ///
    /// - Parameter name: The name as stored.
    /// - Returns: The quoted name, e.g. `"todo"` or `"say ""hi"""`.
    public static func quote(_ name: String) -> String {
        DelimitedText.quote(name, with: "\"")
    }
}
