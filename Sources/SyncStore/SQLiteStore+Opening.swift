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
    /// taken here unless the caller already `holding` it. Opened read-only, the database is not
    /// prepared (nothing is written) and no file is created.
    static func openDatabase(
        at url: URL, key: UnsafeRawBufferPointer?, options: StoreOptions, holding heldLock: StoreLock? = nil
    ) throws -> OpenedDatabase {
        let path = url.path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists {
            guard options.createIfMissing else { throw StoreError.storeNotFound(path) }
            try StoreFiles.createEmptyFile(at: path)
        }
        let absentSideFiles = sideFiles(of: url).filter { !FileManager.default.fileExists(atPath: $0.path) }
        let lock: StoreLock?
        do {
            lock = try heldLock ?? StoreLock.acquire(for: url, mode: .shared, create: !options.readOnly)
        } catch {
            if !exists { removeDatabaseFiles(at: url) }
            throw error
        }
        do {
            let mode = options.readOnly ? StoreFiles.readOnlyMode(of: url) : .readWrite
            let connection = try Connection.open(path: path, mode: mode, key: key)
            let tables: [ColumnKey: [String: ColumnType]]
            do {
                tables = try options.readOnly ? SchemaCache.load(connection) : prepare(connection, options: options)
            } catch {
                connection.close()
                throw error
            }
            return OpenedDatabase(connection: connection, lock: lock, tables: tables)
        } catch let error as SQLiteError {
            if !exists { removeDatabaseFiles(at: url) } else { removeEmptyFiles(absentSideFiles) }
            throw mapOpenError(error, url: url, keyed: key != nil)
        }
    }

    /// Removes those of `files` that exist and hold only zeros: the `-wal`/`-shm` a failed open
    /// made (on a full disk SQLite creates them and cannot fill them), which would make the next
    /// read-only open look for a connection that is not there.
    private static func removeEmptyFiles(_ files: [URL]) {
        for file in files where StoreFiles.isEmptyFile(file) { try? FileManager.default.removeItem(at: file) }
    }

    private static func mapOpenError(_ error: SQLiteError, url: URL, keyed: Bool) -> StoreError {
        guard ResultCode.notADatabase ~= error.code else { return StoreError(error, database: url) }
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
