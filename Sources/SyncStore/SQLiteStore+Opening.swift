public import Foundation
import SyncKeyMaintenance
import SyncSQL
import SyncSQLite
import SyncWire

extension SQLiteStore {
    /// Whether the file at `url` starts with the plain SQLite header (an unencrypted database).
    ///
    /// - Parameter url: A database file.
    /// - Returns: `false` for an encrypted database, a file that is not a database, or no file.
    public static func isPlainDatabase(at url: URL) -> Bool {
        StoreFiles.isPlainDatabase(at: url)
    }

    /// A database opened for a store: its connection, prepared; the shared store lock; its tables.
    struct OpenedDatabase {
        var connection: Connection
        var lock: StoreLock?
        var tables: [ColumnKey: [String: ColumnType]]
    }

    /// Opens (or creates) the database file with an optional raw key, mapping failures to
    /// ``StoreError``. A new file is created with mode 0600 before SQLite touches it; an existing
    /// file is never created, truncated or rewritten by a failed open. The shared store lock is
    /// taken here unless the caller already `holding` it.
    static func openDatabase(
        at url: URL, key: UnsafeRawBufferPointer?, create: Bool, holding heldLock: StoreLock? = nil
    ) throws -> OpenedDatabase {
        let path = url.path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard create else { throw StoreError.storeNotFound(path) }
            try StoreFiles.createEmptyFile(at: path)
        }
        let lock: StoreLock?
        do {
            lock = try heldLock ?? StoreLock.acquire(for: url, mode: .shared)
        } catch {
            if !exists { removeDatabaseFiles(at: url) }
            throw error
        }
        do {
            let connection = try Connection.open(path: path, mode: .readWrite, key: key)
            let tables: [ColumnKey: [String: ColumnType]]
            do {
                tables = try prepare(connection)
            } catch {
                connection.close()
                throw error
            }
            return OpenedDatabase(connection: connection, lock: lock, tables: tables)
        } catch let error as SQLiteError {
            if !exists { removeDatabaseFiles(at: url) }
            throw mapOpenError(error, url: url, keyed: key != nil)
        }
    }

    private static func mapOpenError(_ error: SQLiteError, url: URL, keyed: Bool) -> StoreError {
        guard ResultCode.notADatabase ~= error.code else { return .database(error) }
        let plain = isPlainDatabase(at: url)
        switch (keyed, plain) {
        case (true, true):
            return .encryptionMismatch("The store at \(url.path) is not encrypted; open it without a key or encrypt it first.")
        case (false, false):
            return .encryptionMismatch("The store at \(url.path) is encrypted or damaged; open it with its passphrase.")
        default:
            return .corruptOrKeyMismatch
        }
    }

    /// The side files SQLite may leave beside a database (`-wal`, `-shm`, `-journal`).
    ///
    /// - Parameter url: A database file.
    /// - Returns: Their URLs, whether they exist or not.
    public static func sideFiles(of url: URL) -> [URL] {
        StoreFiles.sideFiles(of: url)
    }

    /// Removes a database file and its side files (used only for files this process just made).
    static func removeDatabaseFiles(at url: URL) {
        for file in [url] + sideFiles(of: url) { try? FileManager.default.removeItem(at: file) }
    }
}
