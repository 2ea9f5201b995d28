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
public actor SQLiteStore: LocalStore, PushCacheHints {
    /// The connection and the store lock while the store is open.
    private let resources = OpenResources()
    private let schema = SchemaCache(tables: [:])
    /// The pushes under way (``willPush(operations:)`` without its ``didPush()`` yet), and the
    /// page cache setting they raised, restored when the last one ends.
    private var pushes = 0
    private var cacheBeforePushes: Int64?
    /// The store's serial queue.
    private nonisolated let executor: StoreExecutor
    /// The database file.
    public nonisolated let url: URL
    /// Whether the database is encrypted.
    public nonisolated let isEncrypted: Bool
    /// Whether the store was opened for reading only (`StoreOptions/readOnly`).
    public nonisolated let isReadOnly: Bool
    /// The topics each committed write transaction changed (user tables, queue, errors, config),
    /// published after the commit. In memory only.
    public nonisolated let changes: StoreChanges? = StoreChanges()
    /// Where the store keeps attachment content (`<database>.attachments/`).
    package nonisolated let attachmentVault: AttachmentVault

    /// The store's executor: its own serial dispatch queue, on which every SQLite call runs.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// A store not yet connected; ``open(at:encryption:options:)`` connects it.
    init(url: URL, isEncrypted: Bool, isReadOnly: Bool = false) {
        self.url = url
        self.isEncrypted = isEncrypted
        self.isReadOnly = isReadOnly
        self.executor = StoreExecutor(label: "ciphersync.store")
        self.attachmentVault = AttachmentVault(database: url, isEncrypted: isEncrypted)
    }

    /// Makes `database` this store's connection (on the store's queue, like everything it does).
    func adopt(_ database: sending OpenedDatabase) {
        resources.connection = database.connection
        resources.lock = database.lock
        schema.tables = database.tables
    }

    /// Whether the caller runs on the store's own queue.
    nonisolated var isRunningOnStoreQueue: Bool { executor.isCurrent }

    /// Sets up a freshly opened connection: WAL journal, every commit synced to the disk before it
    /// returns, the system tables, the migration of a database made by an earlier version
    /// (``SchemaMigration``), the schema cache.
    ///
    /// `synchronous = FULL`: a commit returns once its write-ahead log frames are on the disk
    /// (`fdatasync`), so a write call that returned survives a power cut; a failed sync fails the
    /// commit, which is rolled back. (`NORMAL` would sync only at checkpoints.)
    static func prepare(_ connection: Connection, options: StoreOptions = StoreOptions()) throws -> [ColumnKey: [String: ColumnType]] {
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute(options.syncsEveryCommit ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
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
        try writeTransaction { _, writer in try body(writer) }
    }

    /// Runs `body` in one write transaction, with the transaction's session beside the writer
    /// that records what changed (the store's own tables are reached through the session).
    func writeTransaction<T: Sendable>(_ body: (StoreSession, any SyncRecordsWriter) throws -> T) throws -> T {
        let connection = try requireConnection()
        guard !isReadOnly else { throw StoreError.fileSystem("The store at \(url.path) was opened for reading only.") }
        let plain = StoreSession(connection: connection, schema: schema)
        let session = ChangeRecordingWriter(plain)
        do {
            let result = try mapDamage { try connection.transaction { try body(plain, session) } }
            changes?.publish(session.topics)
            return result
        } catch {
            // A rolled-back transaction may have created tables or columns the cache recorded. The
            // write's own error is the one to report (a reload on a failing disk fails too).
            try? schema.reload(connection)
            throw error
        }
    }

    /// Runs `body` with the connection itself, outside any transaction (maintenance: checks,
    /// checkpoints, compliance probes). Prefer ``read(_:)`` and ``write(_:)``.
    @_spi(Testing)
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
    /// throw `StoreError/closed`; calling it again does nothing.
    ///
    /// The store is closed even when this throws. Every write that returned is on the disk already
    /// (each commit is synced), so a failed checkpoint loses nothing: the log keeps those writes
    /// and the next open replays them.
    ///
    /// - Throws: `StoreError/diskFull`, `StoreError/ioError` or another `StoreError` when the
    ///   checkpoint or the close fails.
    public func close() throws {
        guard let connection = resources.connection else { return }
        resources.connection = nil
        attachmentVault.lock()
        defer { resources.lock = nil }
        if isReadOnly { return connection.close() }
        let failure: SQLiteError
        do {
            try connection.checkpointAndClose()
            return
        } catch {
            failure = error
        }
        throw Self.closeError(failure, database: url)
    }

    /// The store's error for a failed checkpoint or close: a full or failing disk says that every
    /// saved change is kept.
    static func closeError(_ error: SQLiteError, database url: URL) -> StoreError {
        let mapped = StoreError(error, database: url)
        guard mapped == .diskFull || mapped == .ioError else { return mapped }
        let what = mapped == .diskFull ? "The disk holding \(url.path) is full" : "A disk I/O error occurred on \(url.path)"
        return StoreError(
            mapped,
            reason: "\(what): the store's write-ahead log could not be copied into the database when it was closed. "
                + "Every saved change is kept (in the log, \(url.lastPathComponent)-wal) and the next open copies it; "
                + (mapped == .diskFull ? "free some disk space." : "check the disk."))
    }

    /// The page cache a push gets per operation: the pages of its queue row and its item's row,
    /// with their index entries, and room for the rows' neighbours (measured: a push of 20,000
    /// encrypted updates reads its pages again from the file with SQLite's 2 MiB cache, each
    /// decrypted anew, and does not with 16 MiB).
    package static let pushCacheBytesPerOperation = 1024
    /// The most page cache a push raises the store's to.
    package static let pushCacheBytesLimit = 64 << 20

    /// Raises the connection's page cache for the push's working set, about
    /// ``pushCacheBytesPerOperation`` per operation (at most ``pushCacheBytesLimit``), when that
    /// is more than the cache already has; ``didPush()`` puts it back. A larger cache all the time
    /// would cost memory and slows the pull (measured), so it lasts the push only.
    ///
    /// The sync engine calls it (``PushCacheHints``) when a push starts.
    package func willPush(operations: Int) async {
        pushes += 1
        guard let connection = resources.connection, let current = try? connection.scalar("PRAGMA cache_size")?.integerValue
        else { return }
        let wanted = Int64(min(operations, Self.pushCacheBytesLimit / Self.pushCacheBytesPerOperation) * Self.pushCacheBytesPerOperation)
        // A negative setting is a size in KiB, a positive one a number of pages.
        let bytes = current < 0 ? -current * 1024 : current * Int64(Connection.pageSize)
        guard wanted > bytes else { return }
        if cacheBeforePushes == nil { cacheBeforePushes = current }
        // A hint: a cache left as it was costs speed, not correctness, so a failure is not the push's.
        try? connection.execute("PRAGMA cache_size = -\(wanted / 1024)")
    }

    /// Puts back the page cache of the store when the last push under way ends.
    package func didPush() async {
        pushes = max(pushes - 1, 0)
        guard pushes == 0, let before = cacheBeforePushes else { return }
        cacheBeforePushes = nil
        try? resources.connection?.execute("PRAGMA cache_size = \(before)")
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { resources.connection == nil }

    /// Reports SQLite's failures by what the user can do: a page that fails to decrypt or verify
    /// (or a truncated file) as ``StoreError/corruptOrKeyMismatch``, a full disk as
    /// ``StoreError/diskFull``, an I/O error as ``StoreError/ioError``.
    private func mapDamage<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError(error, database: url)
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
