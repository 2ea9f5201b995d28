import SyncSQL

extension Connection {
    /// `PRAGMA cipher_version`: the SQLCipher release, or `nil` on a plain SQLite library.
    public func cipherVersion() throws(SQLiteError) -> String? {
        try scalar("PRAGMA cipher_version")?.textValue
    }

    /// `PRAGMA cipher_provider`: `openssl` on a keyed SQLCipher connection, `nil` when unkeyed.
    public func cipherProvider() throws(SQLiteError) -> String? {
        try scalar("PRAGMA cipher_provider")?.textValue
    }

    /// Reads an integer pragma such as `temp_store` or `secure_delete`.
    public func integerPragma(_ name: String) throws(SQLiteError) -> Int64? {
        precondition(name.allSatisfy { $0.isLetter || $0 == "_" }, "pragma names are identifiers")
        // SQLCipher's own pragmas answer with text ("4096"); SQLite's with integers.
        switch try scalar("PRAGMA \(name)") {
        case .integer(let value)?: return value
        case .text(let text)?: return Int64(text)
        default: return nil
        }
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound database, otherwise the problems found.
    public func integrityCheck() throws(SQLiteError) -> [String] {
        try rows("PRAGMA integrity_check").compactMap { $0.first?.textValue }
    }
}
