public import Foundation
import SyncSQL
public import SyncSQLite
import SyncWire

/// The local store over SQLite: plain, or encrypted with SQLCipher when opened with a key.
///
/// One implementation serves both: a plain store is the same type opened without a key. User
/// tables and the sync system tables (operation queue, operation errors, config) live in the
/// same database file. An actor that owns one connection; safe to share. Every `read`/`write`
/// closure is synchronous and runs as one transaction.
///
/// The store runs on its own serial dispatch queue (its ``unownedExecutor``), not on Swift's
/// cooperative thread pool: SQLite's blocking calls, and the key derivation of
/// ``open(at:encryption:options:)``, never hold a thread that other tasks are waiting for.
public actor SQLiteStore: LocalStore {
    /// The connection and the store lock while the store is open.
    private let resources = OpenResources()
    private let schema = SchemaCache(tables: [:])
    /// The store's serial queue.
    private nonisolated let executor: StoreExecutor
    /// The database file.
    public nonisolated let url: URL
    /// Whether the database is encrypted.
    public nonisolated let isEncrypted: Bool
    /// The topics each committed write transaction changed (user tables, queue, errors, config),
    /// published after the commit. In memory only.
    public nonisolated let changes: StoreChanges? = StoreChanges()

    /// The store's executor: its own serial dispatch queue, on which every SQLite call runs.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// A store not yet connected; ``open(at:encryption:options:)`` connects it.
    init(url: URL, isEncrypted: Bool) {
        self.url = url
        self.isEncrypted = isEncrypted
        self.executor = StoreExecutor(label: "ciphersync.store")
    }

    /// Makes `database` this store's connection (on the store's queue, like everything it does).
    func adopt(_ database: sending OpenedDatabase) {
        resources.connection = database.connection
        resources.lock = database.lock
        schema.tables = database.tables
    }

    /// Whether the caller runs on the store's own queue.
    nonisolated var isRunningOnStoreQueue: Bool { executor.isCurrent }

    /// Sets up a freshly opened connection: WAL journal, the system tables, the migration of a
    /// database made by an earlier version (``SchemaMigration``), the schema cache.
    static func prepare(_ connection: Connection) throws -> [ColumnKey: [String: ColumnType]] {
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
        try connection.transaction { try connection.execute(StoreSQL.createSystemTables) }
        try SchemaMigration.run(connection)
        return try SchemaCache.load(connection)
    }

    /// Runs `body` in a read transaction.
    public func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
        let connection = try requireConnection()
        let session = StoreSession(connection: connection, schema: schema)
        return try mapDamage { try connection.readTransaction { try body(session) } }
    }

    /// Runs `body` in one write transaction: all of its writes commit, or none do.
    public func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
        let connection = try requireConnection()
        let session = ChangeRecordingWriter(StoreSession(connection: connection, schema: schema))
        do {
            let result = try mapDamage { try connection.transaction { try body(session) } }
            changes?.publish(session.topics)
            return result
        } catch {
            // A rolled-back transaction may have created tables or columns the cache recorded.
            try schema.reload(connection)
            throw error
        }
    }

    /// Runs `body` with the connection itself, outside any transaction (maintenance: checks,
    /// checkpoints, compliance probes). Prefer ``read(_:)`` and ``write(_:)``.
    public func withConnection<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
        try body(try requireConnection())
    }

    /// Reads every page of the database (`PRAGMA integrity_check`) and returns the problems
    /// found; empty when the database is sound.
    ///
    /// - Throws: `StoreError/corruptOrKeyMismatch` when a page fails to decrypt or verify.
    public func checkIntegrity() throws -> [String] {
        let connection = try requireConnection()
        do {
            let results = try connection.integrityCheck()
            return results == ["ok"] ? [] : results
        } catch {
            // SQLCipher reports a page that fails its HMAC here as a generic error: either way
            // the database cannot be read in full.
            throw StoreError.corruptOrKeyMismatch
        }
    }

    /// Checkpoints the WAL into the database file and closes the connection. Later calls
    /// throw `StoreError/closed`.
    public func close() {
        guard let connection = resources.connection else { return }
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
        resources.connection = nil
        resources.lock = nil
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { resources.connection == nil }

    /// Reports a page that fails to decrypt or verify as ``StoreError/corruptOrKeyMismatch``.
    private func mapDamage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError
            where ResultCode.notADatabase ~= error.code || ResultCode.corrupt ~= error.code
        {
            throw StoreError.corruptOrKeyMismatch
        } catch let error as SQLiteError {
            throw StoreError.database(error)
        }
    }

    private func requireConnection() throws -> Connection {
        guard let connection = resources.connection else { throw StoreError.closed }
        return connection
    }
}

/// What an open ``SQLiteStore`` holds: its connection and the shared store lock.
///
/// The store owns its connection: a store dropped without ``SQLiteStore/close()`` still closes it
/// here, when the store (the only owner of this object) goes away. Not Sendable; used only on the
/// store's queue, and by `deinit` once nothing else can reach it.
private final class OpenResources {
    var connection: Connection?
    /// Keeps key rotations away while the store is open; released with the connection.
    var lock: StoreLock?

    deinit {
        connection?.close()
    }
}
