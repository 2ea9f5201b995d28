/// An error from SQLite: the result code, SQLite's message and the SQL being run.
///
/// Bound values are never part of the error, so it is safe to log.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The (extended) result code.
    public let code: ResultCode
    /// SQLite's message, or this module's when the error did not come from SQLite.
    public let message: String
    /// The SQL text, when the error came from a statement.
    public let sql: String?
    /// The error number of the system call that failed under SQLite (`sqlite3_system_errno`),
    /// when one did: `ENOSPC` tells a full disk from another I/O error at the moment it happened.
    public let systemErrorNumber: Int32?

    /// An error.
    ///
    /// - Parameters:
    ///   - code: The result code.
    ///   - message: What went wrong, without any bound value.
    ///   - sql: The SQL text being run, if any.
    ///   - systemErrorNumber: The error number of the system call that failed, if any.
    public init(code: ResultCode, message: String, sql: String? = nil, systemErrorNumber: Int32? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrorNumber = systemErrorNumber
    }

    /// The code, the message and the SQL text being run.
    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " (while running: \(sql))" }
        return text
    }

    /// The connection was used after ``Connection/close()``.
    public static func connectionClosed() -> SQLiteError {
        SQLiteError(code: .misuse, message: "the connection is closed")
    }

    /// The library the process linked is not SQLCipher, so encryption would silently be off.
    public static func notSQLCipher() -> SQLiteError {
        SQLiteError(code: .error, message: "the SQLite library in this process is not SQLCipher")
    }

    /// A raw key must be exactly 32 bytes.
    public static func invalidKeyLength(_ count: Int) -> SQLiteError {
        SQLiteError(code: .misuse, message: "a raw database key must be 32 bytes, not \(count)")
    }
}
