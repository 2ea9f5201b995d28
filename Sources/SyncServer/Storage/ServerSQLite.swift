import SyncSQL
internal import VaporCSQLite

/// The embedded store's connection to its SQLite database: the SQLite that vapor/sqlite-nio
/// builds (its `VaporCSQLite` library, every symbol prefixed `sqlite_nio_`, so it shares the
/// process with SQLCipher), called directly on the caller's thread, with the statements of
/// recent texts kept prepared.
///
/// Why not sqlite-nio's `SQLiteConnection`: it prepares every statement again and runs each on
/// a thread pool, answering through an event loop: for a single write, the preparing was 9 % of
/// the server's CPU and the three thread hops a good part of the rest (docs/performance.md, "The server").
///
/// Not Sendable: ``SQLiteTableStorage`` owns it and calls it from its actor only, one statement
/// at a time. A call holds its thread for the statement's time (a commit to a file: its sync).
final class ServerSQLite {
    /// Counts the statements run (``SQLiteTableStorage/statements``).
    private let statements: StatementCounter
    private var handle: OpaquePointer?
    /// Prepared statements by SQL text, ready to run again (reset, bindings cleared).
    private var prepared: [String: OpaquePointer] = [:]

    /// How many statements `prepared` keeps at most (all are dropped together beyond it).
    static let preparedLimit = 128
    /// Texts longer than this are prepared for one run.
    static let preparedTextLimit = 4096

    /// Opens (or creates) the database at `path`, `":memory:"` for memory.
    ///
    /// - Throws: ``ServerSQLiteError`` when it cannot be opened.
    init(path: String, statements: StatementCounter = StatementCounter()) throws {
        self.statements = statements
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
        let rc = sqlite_nio_sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "cannot open the database"
            sqlite_nio_sqlite3_close_v2(db)
            throw ServerSQLiteError(code: rc, message: "\(message) (\(path))")
        }
        // One process serves a file; another one touching it (a backup, a check) is waited for.
        sqlite_nio_sqlite3_busy_timeout(db, 5_000)
        handle = db
    }

    deinit { close() }

    /// How long a statement waits for a lock another connection holds before it fails with
    /// `SQLITE_BUSY` (at least 1 ms; 5 s when the connection opens).
    func waitForLocks(upTo wait: Duration) {
        guard let handle else { return }
        let (seconds, attoseconds) = wait.components
        let milliseconds = max(1, min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        sqlite_nio_sqlite3_busy_timeout(handle, Int32(milliseconds))
    }

    /// Finalizes the kept statements and closes the connection (again: nothing).
    func close() {
        for statement in prepared.values { sqlite_nio_sqlite3_finalize(statement) }
        prepared.removeAll()
        sqlite_nio_sqlite3_close_v2(handle)
        handle = nil
    }

    /// Whether no transaction is open (SQLite's autocommit mode): after a failed statement, `true`
    /// when the engine rolled back the transaction it ran in.
    var isAutocommit: Bool {
        handle.map { sqlite_nio_sqlite3_get_autocommit($0) != 0 } ?? true
    }

    /// Runs `sql` with `arguments` and returns its rows.
    func query(_ sql: String, _ arguments: [SQLValue] = []) throws -> ResultRows {
        var result = ResultRows(columns: [], rows: [])
        try run(sql, arguments) { statement in
            if result.columns.isEmpty { result.columns = statement.columnNames }
            result.rows.append(statement.row)
        }
        return result
    }

    /// Runs `sql` with `arguments`, calling `body` with each result row in place (valid only
    /// inside the call).
    func run(
        _ sql: String, _ arguments: [SQLValue] = [], _ body: (CurrentRow) throws -> Void = { _ in }
    ) throws {
        statements.add()
        let statement = try statement(sql)
        defer { finish(statement, sql) }
        try bind(arguments, to: statement, sql)
        while true {
            switch sqlite_nio_sqlite3_step(statement) {
            case SQLITE_ROW: try body(CurrentRow(handle: statement))
            case SQLITE_DONE: return
            case let rc: throw error(rc, sql)
            }
        }
    }

    /// Installs the one-argument SQL function `name`, which returns `function`'s text for its
    /// argument's text (an SQL error when the argument is not text).
    func install(function name: String, _ function: @escaping (String) -> String) throws {
        guard let handle else { throw ServerSQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        let box = Unmanaged.passRetained(FunctionBox(function)).toOpaque()
        let rc = sqlite_nio_sqlite3_create_function_v2(
            handle, name, 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, box,
            { context, count, values in
                guard let context, let data = sqlite_nio_sqlite3_user_data(context) else { return }
                guard count == 1, let argument = values?[0], let text = sqlite_nio_sqlite3_value_text(argument) else {
                    sqlite_nio_sqlite3_result_error(context, "the function takes one text argument", -1)
                    return
                }
                let result = Unmanaged<FunctionBox>.fromOpaque(data).takeUnretainedValue().function(String(cString: text))
                sqlite_nio_sqlite3_result_text(context, result, -1, ServerSQLite.transient)
            }, nil, nil, { box in box.map { Unmanaged<FunctionBox>.fromOpaque($0).release() } })
        guard rc == SQLITE_OK else { throw error(rc, "function \(name)") }
    }

    // MARK: helpers

    private final class FunctionBox {
        let function: (String) -> String
        init(_ function: @escaping (String) -> String) { self.function = function }
    }

    /// SQLite copies a value bound or returned with this destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The kept statement of `sql`, or a new one.
    private func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = prepared.removeValue(forKey: sql) { return statement }
        guard let handle else { throw ServerSQLiteError(code: SQLITE_MISUSE, message: "the connection is closed") }
        var statement: OpaquePointer?
        let rc = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite_nio_sqlite3_finalize(statement)
            throw error(rc, sql)
        }
        return statement
    }

    /// Makes a statement ready to run again and keeps it (a short text), or finalizes it.
    /// A statement is taken out of `prepared` while it runs, so a nested run of the same text
    /// prepares its own.
    private func finish(_ statement: OpaquePointer, _ sql: String) {
        sqlite_nio_sqlite3_reset(statement)
        sqlite_nio_sqlite3_clear_bindings(statement)
        guard sql.utf8.count <= Self.preparedTextLimit, prepared[sql] == nil else {
            sqlite_nio_sqlite3_finalize(statement)
            return
        }
        if prepared.count >= Self.preparedLimit {
            for kept in prepared.values { sqlite_nio_sqlite3_finalize(kept) }
            prepared.removeAll(keepingCapacity: true)
        }
        prepared[sql] = statement
    }

    private func bind(_ values: [SQLValue], to statement: OpaquePointer, _ sql: String) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite_nio_sqlite3_bind_null(statement, index)
            case .integer(let i): rc = sqlite_nio_sqlite3_bind_int64(statement, index, i)
            case .real(let d): rc = sqlite_nio_sqlite3_bind_double(statement, index, d)
            case .text(let s): rc = sqlite_nio_sqlite3_bind_text(statement, index, s, -1, Self.transient)
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    // An empty blob still needs a non-nil pointer to bind as a zero-length blob.
                    sqlite_nio_sqlite3_bind_blob(
                        statement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), Self.transient)
                }
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
    }

    private func error(_ rc: Int32, _ sql: String) -> ServerSQLiteError {
        let message = handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "the connection is closed"
        return ServerSQLiteError(code: rc, message: message)
    }
}

/// The row a statement is on, read in place (only inside the call that hands it over).
struct CurrentRow {
    fileprivate let handle: OpaquePointer

    var count: Int { Int(sqlite_nio_sqlite3_column_count(handle)) }

    var columnNames: [String] {
        (0..<count).map { index in sqlite_nio_sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? "" }
    }

    var row: [SQLValue] { (0..<count).map(value(at:)) }

    func value(at index: Int) -> SQLValue {
        let i = Int32(index)
        switch sqlite_nio_sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .integer(sqlite_nio_sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT: return .real(sqlite_nio_sqlite3_column_double(handle, i))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(handle, i) else { return .text("") }
            let count = Int(sqlite_nio_sqlite3_column_bytes(handle, i))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(handle, i))
            guard count > 0, let blob = sqlite_nio_sqlite3_column_blob(handle, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default: return .null
        }
    }
}

/// The rows of a statement: its column names, and each row's values in their order.
struct ResultRows {
    var columns: [String]
    var rows: [[SQLValue]]

    /// The value of `column` in the first row.
    func first(_ column: String) -> SQLValue? {
        guard let row = rows.first, let index = columns.firstIndex(of: column) else { return nil }
        return row[index]
    }
}

/// A failure of the embedded store's SQLite: its result code and message (never bound values).
public struct ServerSQLiteError: Error, CustomStringConvertible {
    /// SQLite's (extended) result code.
    public let code: Int32
    /// SQLite's message for it.
    public let message: String
    /// The code and the message.
    public var description: String { "SQLite error \(code): \(message)" }

    /// Whether the database was locked by another connection (`SQLITE_BUSY` or `SQLITE_LOCKED`,
    /// any extended code): the statement did not run.
    public var isLocked: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }
}
