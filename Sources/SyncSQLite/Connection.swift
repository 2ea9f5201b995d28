internal import CSQLCipher
import Foundation
import SyncKeys
public import SyncSQL

/// One connection to an SQLCipher database file, plain or keyed.
///
/// Not Sendable: a connection has one owner (the store actor) that uses it from one task at a
/// time. Closing is explicit (``close()``): a connection that is deinitialized while still open
/// fails an assertion in debug builds (release builds close it quietly).
public final class Connection {
    /// How to open the file.
    public enum OpenMode: Sendable {
        /// Open an existing file for reading and writing; never create one.
        case readWrite
        /// Open an existing file, or create it when absent.
        case readWriteCreate
        /// Open an existing file read-only.
        case readOnly
        /// Open an existing file read-only as a file that nothing changes meanwhile (SQLite's
        /// `immutable`): no lock is taken, and no `-wal` or `-shm` is read or created. Only for a
        /// database that no connection has open and whose log is empty (a store closed cleanly).
        case immutable
    }

    /// The page size every CipherSync database uses. SQLCipher 3.4.1 does not record it in a
    /// keyed file, so it is declared again on every keyed open.
    public static let pageSize = 4096

    /// The SQLCipher release this build must link (checked at every open).
    public static let expectedCipherVersion = "3.4.1"

    private var handle: OpaquePointer?
    /// The database file path.
    public let path: String
    /// Whether this connection was opened with a key.
    public let isKeyed: Bool

    private init(handle: OpaquePointer, path: String, isKeyed: Bool) {
        self.handle = handle
        self.path = path
        self.isKeyed = isKeyed
    }

    deinit {
        // Closing is explicit (`close()`), by the connection's one owner. A handle still open here
        // was forgotten: a failed assertion in debug builds, closed all the same in release builds.
        assert(handle == nil, "a connection to \(path) was not closed")
        if let handle { sqlite3_close_v2(handle) }
    }

    /// Opens a database file, applies `key` if given, and checks it at once.
    ///
    /// With a key, the key is applied through `sqlite3_key` as the raw-key text `x'<64 hex>'`
    /// (built in a buffer that is wiped afterwards, never in an SQL string), then the page size is
    /// declared, the library is checked to be SQLCipher, and `sqlite_master` is read so that a
    /// wrong key fails here with ``ResultCode/notADatabase`` instead of at the first query.
    /// Every connection then runs with `temp_store = MEMORY` and `secure_delete = ON`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - mode: Whether the file may be created.
    ///   - key: A 32-byte raw key, or `nil` for a plain database.
    /// - Throws: ``SQLiteError``; nothing is left open on failure.
    public static func open(
        path: String, mode: OpenMode, key: UnsafeRawBufferPointer? = nil
    ) throws(SQLiteError)
        -> sending Connection
    {
        if let key, key.count != 32 { throw .invalidKeyLength(key.count) }
        var flags: Int32 = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .immutable: flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(mode == .immutable ? immutableURI(path) : path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open the database"
            sqlite3_close_v2(db)
            throw SQLiteError(code: ResultCode(rawValue: rc), message: message)
        }
        if let key {
            // The key goes through sqlite3_key, never into SQL text; its text is a secret, wiped when dropped.
            let rc = rawKeyText(key).withUnsafeBytes { sqlite3_key(db, $0.baseAddress, Int32($0.count)) }
            guard rc == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(db))
                sqlite3_close_v2(db)
                throw SQLiteError(code: ResultCode(rawValue: rc), message: message)
            }
        }
        let connection = Connection(handle: db, path: path, isKeyed: key != nil)
        do {
            if connection.isKeyed { try connection.execute("PRAGMA cipher_page_size = \(Connection.pageSize)") }
            try connection.configure()
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// The `file:` URI of `path` with `immutable=1` (the characters a URI reserves escaped).
    static func immutableURI(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let escaped = path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
        return "file:\(escaped)?immutable=1"
    }

    /// The raw-key text SQLCipher expects, `x'<64 hex>'`, written straight into a secret buffer
    /// (wiped when the last copy goes away).
    static func rawKeyText(_ key: UnsafeRawBufferPointer) -> SecretBytes {
        let hexDigits: StaticString = "0123456789abcdef"
        return SecretBytes(count: 3 + 2 * key.count) { text in
            text[0] = UInt8(ascii: "x")
            text[1] = UInt8(ascii: "'")
            hexDigits.withUTF8Buffer { hex in
                for (i, byte) in key.enumerated() {
                    text[2 + 2 * i] = hex[Int(byte >> 4)]
                    text[3 + 2 * i] = hex[Int(byte & 0x0F)]
                }
            }
            text[text.count - 1] = UInt8(ascii: "'")
        }
    }

    private func configure() throws(SQLiteError) {
        guard try scalar("PRAGMA cipher_version")?.textValue == Connection.expectedCipherVersion else {
            throw .notSQLCipher()
        }
        // The first page read: a wrong key, a missing key or a damaged first page fails here.
        _ = try scalar("SELECT count(*) FROM sqlite_master")
        if !isKeyed { try execute("PRAGMA page_size = \(Connection.pageSize)") }
        try execute("PRAGMA temp_store = MEMORY")
        try execute("PRAGMA secure_delete = ON")
        sqlite3_busy_timeout(try requireHandle(), 5_000)
    }

    /// Copies the write-ahead log into the database file, empties it, and closes the connection;
    /// each failure is thrown, not ignored (a full disk, an I/O error while syncing). The
    /// connection is closed even when the checkpoint fails: what the log holds stays in it, and
    /// the next open replays it.
    ///
    /// - Throws: ``SQLiteError`` of the checkpoint (``ResultCode/busy`` when another connection
    ///   kept it from emptying the log) or of the close.
    public func checkpointAndClose() throws(SQLiteError) {
        guard let handle else { return }
        var failure: SQLiteError?
        do {
            // The rows: busy (1 when it could not finish), frames in the log, frames copied.
            if let row = try rows("PRAGMA wal_checkpoint(TRUNCATE)").first, row.first?.integerValue == 1 {
                failure = SQLiteError(code: .busy, message: "another connection kept the write-ahead log from being emptied")
            }
        } catch {
            failure = error
        }
        let rc = sqlite3_close_v2(handle)
        self.handle = nil
        if let failure { throw failure }
        guard rc == SQLITE_OK else { throw SQLiteError(code: ResultCode(rawValue: rc), message: "the database could not be closed") }
    }

    /// Closes the connection without a checkpoint, ignoring failures (for connections that wrote
    /// nothing, and for the paths that already report another error). Later calls throw
    /// ``SQLiteError/connectionClosed()``.
    public func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Prepares a statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// Runs one or more statements that take no arguments.
    public func execute(_ sql: String) throws(SQLiteError) {
        let db = try requireHandle()
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// Runs one statement with arguments, discarding rows.
    public func execute(_ sql: String, _ arguments: [SQLValue]) throws(SQLiteError) {
        try prepare(sql).run(arguments)
    }

    /// Runs one statement and returns every row.
    public func rows(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        try prepare(sql).rows(arguments)
    }

    /// Runs one statement and returns the first column of the first row, or `nil` when no row.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) -> SQLValue? {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        return try statement.step() ? statement.value(at: 0) : nil
    }

    /// The rowid of the last inserted row.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// The number of rows the last statement changed.
    public var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    func requireHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw .connectionClosed() }
        return handle
    }

    /// The one chokepoint that turns a result code into an ``SQLiteError``.
    func error(_ rc: Int32, sql: String? = nil) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "the connection is closed"
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? rc
        let system = handle.map { sqlite3_system_errno($0) } ?? 0
        return SQLiteError(
            code: ResultCode(rawValue: extended == 0 ? rc : extended), message: message, sql: sql,
            systemErrorNumber: system == 0 ? nil : system)
    }
}

@available(*, unavailable, message: "A connection has one owner; share its store actor instead")
extension Connection: Sendable {}
