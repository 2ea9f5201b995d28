import Foundation
import SyncKeys
import SyncSQLite
import SyncTestSupport
import Testing

@testable import SyncKeyMaintenance

/// A key change on a full disk reports the full disk it is: not a failing disk, not another
/// failure of the file system. Found by the chaos suite: a data-key rotation, and the reopenings
/// after it, reported "the disk may be failing" while the store's disk was full with 16 KiB left
/// (SQLite seed 10124); a passphrase change reported `fileSystem` with "No space left on device"
/// (PostgreSQL seed 60033).
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

    /// Found by the chaos suite at load 130 (SQLite seed 70042): a store opened while its disk was
    /// full failed with an I/O error, and the disk was freed before the error was mapped, so the
    /// space left said "not full". The failed system call's `ENOSPC` says it.
    @Test func anIOErrorWhoseSystemCallFoundTheDiskFullIsDiskFullWhateverTheSpaceLeftNow() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = directory.url.appendingPathComponent("todos.db")
        let full = SQLiteError(code: .ioError, message: "disk I/O error", systemErrorNumber: ENOSPC)
        #expect(StoreError(full, database: database) == .diskFull)
        #expect((Reencryption.mapped(full, database: database) as? StoreError) == .diskFull)
        let failing = SQLiteError(code: .ioError, message: "disk I/O error", systemErrorNumber: EIO)
        #expect(StoreError(failing, database: database) == .ioError)
        #expect((Reencryption.mapped(failing, database: database) as? StoreError) == .ioError)
    }

    @Test func aKeyFileThatDoesNotFitOnTheDiskIsDiskFullAndLeavesTheOldOne() throws {
        let disk = try SmallDisk(bytes: 4 << 20)
        defer { disk.unmount() }
        let database = disk.url.appendingPathComponent("todos.db")
        let envelopeURL = KeyEnvelope.url(forDatabase: database)
        let (old, new) = (SecretBytes(Array("old passphrase".utf8)), SecretBytes(Array("new passphrase".utf8)))
        let (envelope, _) = try KeyEnvelope.create(passphrase: old, profile: .insecureTest, allowInsecureProfile: true)
        try StoreKeys.write(envelope, forDatabase: database)
        let before = try Data(contentsOf: envelopeURL)
        try disk.fill(leaving: 0)

        #expect(throws: StoreError.diskFull) {
            try StoreKeys.changePassphrase(forDatabase: database, from: old, to: new, allowInsecureProfile: true)
        }
        do {
            try StoreKeys.write(envelope, forDatabase: database)
            Issue.record("the key file was written on a full disk")
        } catch let error as StoreError {
            #expect(error == .diskFull)
            #expect(error.description.contains(envelopeURL.path), "\(error)")
            #expect((error.underlyingError as? KeyError)?.errorNumber == ENOSPC)
        }
        #expect(try Data(contentsOf: envelopeURL) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: disk.url.path)
        #expect(!left.contains { $0.contains(".tmp-") }, "a temporary key file was left: \(left)")

        disk.removeFiller()
        try StoreKeys.changePassphrase(forDatabase: database, from: old, to: new, allowInsecureProfile: true)
        #expect(throws: StoreError.wrongPassphrase) {
            try StoreKeys.changePassphrase(forDatabase: database, from: old, to: new, allowInsecureProfile: true)
        }
    }
}
