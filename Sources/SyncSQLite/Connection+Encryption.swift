internal import CSQLCipher
import SyncKeys
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

    /// Re-encrypts every page of the main database under the 32-byte raw `key`, in place and in one
    /// write transaction (SQLCipher's `sqlite3_rekey`): the salt, the page size and the key
    /// derivation settings stay as they are, and the connection goes on with the new key.
    ///
    /// SQLCipher 3.4.1 reports success even when a page could not be read or written (it rolls
    /// back what it can and returns `SQLITE_OK`), and rekeying a plain database does nothing: the
    /// caller must check the file afterwards with the new key, from a connection of its own.
    ///
    /// The key reaches SQLCipher as the raw-key text `x'<64 hex>'` in a secret buffer that is wiped
    /// when dropped, never as SQL text.
    ///
    /// - Parameter key: The new 32-byte raw key.
    /// - Throws: ``SQLiteError``; ``ResultCode/misuse`` on a connection opened without a key.
    public func rekey(to key: UnsafeRawBufferPointer) throws(SQLiteError) {
        if key.count != 32 { throw .invalidKeyLength(key.count) }
        guard isKeyed else { throw SQLiteError(code: .misuse, message: "only an encrypted database can change its key in place") }
        let db = try requireHandle()
        let rc = Connection.rawKeyText(key).withUnsafeBytes { sqlite3_rekey(db, $0.baseAddress, Int32($0.count)) }
        guard rc == SQLITE_OK else { throw error(rc) }
    }
}
