import Foundation
import SyncSQL
import SyncSQLite
import SyncTestSupport
import Testing

/// An SQLite error keeps the error number of the system call that failed under it, so a full disk
/// is told from another I/O error at the moment it happened, not by the space left afterwards.
@Suite struct SystemErrorNumberTests {
    /// A store in WAL mode read on a full disk: SQLite cannot make its `-shm` index, an I/O
    /// error (`SQLITE_IOERR_SHMSIZE`), not `SQLITE_FULL`; the call's `ENOSPC` says the disk is full.
    @Test func aReadThatCannotMakeTheSharedMemoryIndexOnAFullDiskCarriesENOSPC() throws {
        let disk = try SmallDisk(bytes: 4 << 20)
        defer { disk.unmount() }
        let path = disk.url.appendingPathComponent("full.db").path
        let key = randomKey()
        let made = try open(path, key: key)
        try made.execute("PRAGMA journal_mode = WAL")
        try made.execute("CREATE TABLE t (x)")
        made.close()
        try disk.fill(leaving: 0)
        do {
            let connection = try open(path, key: key)
            defer { connection.close() }
            _ = try connection.scalar("SELECT count(*) FROM t")
            Issue.record("the -shm index was made on a full disk")
        } catch let error as SQLiteError {
            #expect(ResultCode.ioError ~= error.code, "\(error)")
            #expect(error.systemErrorNumber == ENOSPC, "\(error) (errno \(error.systemErrorNumber.map(String.init) ?? "none"))")
        }
        disk.removeFiller()
        let connection = try open(path, key: key)
        defer { connection.close() }
        #expect(try connection.scalar("SELECT count(*) FROM t") == .integer(0))
    }

    @Test func anErrorWithoutASystemCallHasNoNumber() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let connection = try open(dir.path("plain.db"), key: nil)
        defer { connection.close() }
        do {
            try connection.execute("SELECT * FROM missing")
            Issue.record("a query on a missing table ran")
        } catch {
            #expect(error.systemErrorNumber == nil, "\(error)")
        }
    }
}
