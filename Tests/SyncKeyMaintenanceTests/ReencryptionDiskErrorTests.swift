import Foundation
import SyncKeys
import SyncSQLite
import SyncTestSupport
import Testing

@testable import SyncKeyMaintenance

/// An I/O error of a key change (or of its recovery when a store opens) on a nearly full disk is
/// the full disk it is, not a failing disk. Found by the chaos suite (seed 10124): a data-key
/// rotation, and the reopenings after it, reported "the disk may be failing" while the store's
/// disk was full with 16 KiB left.
@Suite struct ReencryptionDiskErrorTests {
    @Test func anIOErrorOnANearlyFullDiskIsDiskFull() throws {
        let disk = try SmallDisk(bytes: 4 << 20)
        defer { disk.unmount() }
        try disk.fill(leaving: 16384)
        let database = disk.url.appendingPathComponent("todos.db")
        let error = Reencryption.mapped(SQLiteError(code: .ioError, message: "disk I/O error"), database: database)
        #expect((error as? StoreError) == .diskFull, "\(error)")
        disk.removeFiller()
        let roomy = Reencryption.mapped(SQLiteError(code: .ioError, message: "disk I/O error"), database: database)
        #expect((roomy as? StoreError) == .ioError, "\(roomy)")
    }
}
