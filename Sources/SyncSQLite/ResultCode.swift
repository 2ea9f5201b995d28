/// An SQLite result code, primary or extended.
///
/// A primary code pattern matches its extended codes too (`case .constraint` matches
/// `SQLITE_CONSTRAINT_PRIMARYKEY`), so `switch`/`catch` can test the family.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code as SQLite returns it.
    public let rawValue: Int32

    /// A result code from its number.
    ///
    /// - Parameter rawValue: The primary or extended code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low 8 bits).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// `SQLITE_OK`: success.
    public static let ok = ResultCode(rawValue: 0)
    /// `SQLITE_ERROR`: a generic error, such as an SQL error.
    public static let error = ResultCode(rawValue: 1)
    /// `SQLITE_INTERNAL`: an internal logic error in SQLite.
    public static let `internal` = ResultCode(rawValue: 2)
    /// `SQLITE_PERM`: access permission denied.
    public static let permission = ResultCode(rawValue: 3)
    /// `SQLITE_ABORT`: an operation was aborted, such as by a rollback.
    public static let abort = ResultCode(rawValue: 4)
    /// `SQLITE_BUSY`: the database file is locked by another connection.
    public static let busy = ResultCode(rawValue: 5)
    /// `SQLITE_LOCKED`: a table is locked within this connection.
    public static let locked = ResultCode(rawValue: 6)
    /// `SQLITE_NOMEM`: an allocation failed.
    public static let noMemory = ResultCode(rawValue: 7)
    /// `SQLITE_READONLY`: an attempt to write a read-only database.
    public static let readOnly = ResultCode(rawValue: 8)
    /// `SQLITE_INTERRUPT`: the operation was interrupted.
    public static let interrupt = ResultCode(rawValue: 9)
    /// `SQLITE_IOERR`: a disk I/O error.
    public static let ioError = ResultCode(rawValue: 10)
    /// `SQLITE_IOERR_SHORT_READ`: a read returned fewer bytes than asked: the file is shorter
    /// than the database says (truncated).
    public static let ioErrorShortRead = ResultCode(rawValue: 522)
    /// `SQLITE_CORRUPT`: the database image is malformed.
    public static let corrupt = ResultCode(rawValue: 11)
    /// `SQLITE_NOTFOUND`: an unknown file-control opcode.
    public static let notFound = ResultCode(rawValue: 12)
    /// `SQLITE_FULL`: the disk or the database is full.
    public static let full = ResultCode(rawValue: 13)
    /// `SQLITE_CANTOPEN`: the database file cannot be opened.
    public static let cantOpen = ResultCode(rawValue: 14)
    /// `SQLITE_CONSTRAINT`: a constraint failed (unique, not null, …).
    public static let constraint = ResultCode(rawValue: 19)
    /// `SQLITE_MISMATCH`: a data type mismatch.
    public static let mismatch = ResultCode(rawValue: 20)
    /// `SQLITE_MISUSE`: the library was used incorrectly.
    public static let misuse = ResultCode(rawValue: 21)
    /// `SQLITE_RANGE`: a bind parameter index out of range.
    public static let range = ResultCode(rawValue: 25)
    /// "file is encrypted or is not a database": a wrong key, no key, or a damaged first page.
    public static let notADatabase = ResultCode(rawValue: 26)
    /// `SQLITE_ROW`: a step produced a row.
    public static let row = ResultCode(rawValue: 100)
    /// `SQLITE_DONE`: a statement finished stepping.
    public static let done = ResultCode(rawValue: 101)

    /// Whether `code` is `pattern` or one of its extended codes.
    ///
    /// - Parameters:
    ///   - pattern: A primary or extended code.
    ///   - code: The code to test.
    /// - Returns: `true` when the codes are equal or `code`'s primary code is `pattern`.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern.rawValue == code.rawValue || pattern.rawValue == code.primary.rawValue
    }

    /// The code's number, as text that names SQLite.
    public var description: String { "SQLite result code \(rawValue)" }
}
