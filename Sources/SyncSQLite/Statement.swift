internal import CSQLCipher
public import SyncSQL

/// A prepared statement of one ``Connection``.
///
/// Not Sendable: use it only on the connection's owner. Text and blobs are bound as transient,
/// so SQLite copies them and never keeps a Swift pointer. Finalized in `deinit`.
public final class Statement {
    let handle: OpaquePointer
    private let connection: Connection
    /// The SQL text (for errors; bound values are never recorded).
    public let sql: String

    init(connection: Connection, sql: String) throws(SQLiteError) {
        let db = try connection.requireHandle()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw connection.error(rc, sql: sql)
        }
        self.handle = stmt
        self.connection = connection
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of result column `index`.
    public func columnName(_ index: Int) -> String {
        guard let name = sqlite3_column_name(handle, Int32(index)) else { return "" }
        return String(cString: name)
    }

    /// Binds `values` to the parameters `?1…?n`, replacing earlier bindings.
    public func bind(_ values: [SQLValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .integer(let i):
                rc = sqlite3_bind_int64(handle, index, i)
            case .real(let d):
                rc = sqlite3_bind_double(handle, index, d)
            case .text(let s):
                rc = sqlite3_bind_text(handle, index, s, -1, csqlcipher_transient())
            case .blob(let bytes):
                rc = bytes.withUnsafeBytes { raw in
                    // An empty blob still needs a non-nil pointer to bind as a zero-length blob.
                    sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), csqlcipher_transient())
                }
            }
            guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
        }
    }

    /// Advances to the next row; returns `false` when the statement is done.
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let failure = connection.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw failure
        }
    }

    /// Resets the statement so it can run again with its current bindings.
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Reads column `index` of the current row.
    public func value(at index: Int) -> SQLValue {
        let i = Int32(index)
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, i))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, i) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, i))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, i))
            guard count > 0, let blob = sqlite3_column_blob(handle, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    /// The storage class of a column value, as SQLite holds it.
    public enum Storage: Sendable {
        case null, integer, real, text, blob
    }

    /// The storage class of column `index` of the current row.
    public func storage(at index: Int) -> Storage {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    /// Column `index` of the current row as an integer (call when its storage is `.integer`).
    public func integer(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    /// Column `index` of the current row as a real (call when its storage is `.real`).
    public func real(at index: Int) -> Double {
        sqlite3_column_double(handle, Int32(index))
    }

    /// Calls `body` with the bytes of column `index` of the current row where SQLite holds them,
    /// without a copy: the UTF-8 of a text, the bytes of a blob (call when its storage is `.text`
    /// or `.blob`). The pointer is valid only inside `body`.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func withBytes<R, E: Error>(at index: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let i = Int32(index)
        // The pointer first, then the length: reading the length first could convert the value.
        let pointer: UnsafeRawPointer? =
            sqlite3_column_type(handle, i) == SQLITE_TEXT
            ? UnsafeRawPointer(sqlite3_column_text(handle, i)) : sqlite3_column_blob(handle, i)
        let count = Int(sqlite3_column_bytes(handle, i))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: count > 0 && pointer != nil ? count : 0))
    }

    /// The current row as an array of values.
    public func row() -> [SQLValue] {
        (0..<columnCount).map { value(at: $0) }
    }

    /// Runs the statement to completion with `arguments`, discarding rows.
    public func run(_ arguments: [SQLValue] = []) throws(SQLiteError) {
        try bind(arguments)
        while try step() {}
        reset()
    }

    /// Runs the statement with `arguments` and returns every row.
    public func rows(_ arguments: [SQLValue] = []) throws(SQLiteError) -> [[SQLValue]] {
        try bind(arguments)
        var result: [[SQLValue]] = []
        while try step() { result.append(row()) }
        reset()
        return result
    }
}

@available(*, unavailable, message: "A statement belongs to its connection's owner")
extension Statement: Sendable {}
