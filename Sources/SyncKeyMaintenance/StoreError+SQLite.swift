public import Foundation
public import SyncSQLite

extension StoreError {
    /// The free space below which an I/O error of SQLite is taken for a full disk: SQLite reports
    /// a `-shm` file it cannot grow (`SQLITE_IOERR_SHMSIZE`, 32 KiB at a time) as an I/O error.
    static let nearlyFullBytes: Int64 = 1 << 20

    /// The store's error for an SQLite failure on the database at `database`, by what the user
    /// can do about it: a damaged or truncated file (or another key) is ``corruptOrKeyMismatch``;
    /// a full disk ``diskFull``; an I/O error ``ioError`` (``diskFull`` when the disk has almost no
    /// space left); anything else ``database(_:)``. The SQLite error is kept as
    /// ``underlyingError``.
    ///
    /// - Parameters:
    ///   - error: The SQLite error.
    ///   - database: The database file the error is about.
    public init(_ error: SQLiteError, database: URL) {
        let code = error.code
        let directory = database.deletingLastPathComponent()
        if ResultCode.notADatabase ~= code || ResultCode.corrupt ~= code || code == .ioErrorShortRead {
            self.init(.corruptOrKeyMismatch, underlying: error)
        } else if ResultCode.full ~= code || (ResultCode.ioError ~= code && Self.isOutOfSpace(error, in: directory)) {
            self.init(.diskFull, reason: Self.diskFullReason(database), underlying: error)
        } else if ResultCode.ioError ~= code {
            self.init(.ioError, reason: Self.ioErrorReason(database), underlying: error)
        } else {
            self.init(.database, reason: error.description, underlying: error)
        }
    }

    /// Whether an I/O error of SQLite is a full disk: the failed system call said so (`ENOSPC`,
    /// `EDQUOT`), or the disk has almost no space left (an error that came without its number).
    static func isOutOfSpace(_ error: SQLiteError, in directory: URL) -> Bool {
        if let number = error.systemErrorNumber, StoreFiles.isOutOfSpace(number) { return true }
        return (StoreFiles.freeBytes(in: directory) ?? .max) < nearlyFullBytes
    }

    private static func diskFullReason(_ database: URL) -> String {
        "The disk holding \(database.path) is full; the last change was not saved. Free some disk space, then try again "
            + "(and sync again); what was saved before is kept."
    }

    private static func ioErrorReason(_ database: URL) -> String {
        "A disk I/O error occurred on \(database.path); the last change was not saved. Check the disk (failing, removed or "
            + "read-only?), then try again (and sync again); what was saved before is kept."
    }
}
