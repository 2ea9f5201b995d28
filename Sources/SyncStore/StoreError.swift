public import SyncSQLite

/// An error of the local store.
///
/// The cases a user can act on are distinct: a wrong passphrase is not a damaged file, and
/// neither is a missing key envelope. Messages never contain keys, passphrases or item values.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The passphrase does not unlock the store's key envelope.
    case wrongPassphrase
    /// The key envelope beside the database is missing or unreadable.
    case keyMaterialMissing
    /// The key envelope was modified or is not a valid envelope.
    case keyMaterialCorrupt(String)
    /// The passphrase is not acceptable (empty, too long).
    case invalidPassphrase(String)
    /// The key opened the envelope but not the database: the file is damaged or belongs to
    /// another key.
    case corruptOrKeyMismatch
    /// There is no store at the path (and creating one was not asked for).
    case storeNotFound(String)
    /// A store already exists at the path.
    case storeAlreadyExists(String)
    /// The file is an encrypted store but was opened without a key, or the reverse.
    case encryptionMismatch(String)
    /// A table name that is not allowed.
    case invalidTableName(String)
    /// An item (or table definition) the store cannot hold: no valid string `id`, too many
    /// properties, or two properties whose names differ only by case (SQLite column names
    /// ignore ASCII case, so both would be one column).
    case invalidItem(String)
    /// An invalid query (unknown column, unsupported expression).
    case invalidQuery(String)
    /// The store was closed.
    case closed
    /// An SQLite error that has no better description.
    case database(SQLiteError)
    /// A file-system operation failed.
    case fileSystem(String)
    /// Another program holds the store, or a key rotation is running on it.
    case storeInUse(String)
    /// A re-encrypted copy failed its check; the original database was kept.
    case verificationFailed(String)

    public var description: String {
        switch self {
        case .wrongPassphrase: return "The passphrase is wrong."
        case .keyMaterialMissing: return "The store's key file is missing or unreadable."
        case .keyMaterialCorrupt(let why): return "The store's key file is damaged or was modified: \(why)"
        case .invalidPassphrase(let why): return why
        case .corruptOrKeyMismatch:
            return "The database file is damaged or does not belong to this key."
        case .storeNotFound(let path): return "No store at \(path)."
        case .storeAlreadyExists(let path): return "A store already exists at \(path)."
        case .encryptionMismatch(let why): return why
        case .invalidTableName(let name): return "'\(name)' is not a valid table name."
        case .invalidItem(let why): return "Invalid item: \(why)"
        case .invalidQuery(let why): return "Invalid query: \(why)"
        case .closed: return "The store is closed."
        case .database(let error): return error.description
        case .fileSystem(let why): return why
        case .storeInUse(let why): return why
        case .verificationFailed(let why):
            return "The re-encrypted copy failed its check (\(why)); the store was left unchanged."
        }
    }
}
