import Foundation
import SyncKeys

extension Reencryption {
    /// Room for SQLite's `-shm` files (32 KiB each: the database's and the copy's) and the
    /// directory entries a re-encryption adds.
    static let overheadBytes: Int64 = 128 << 10

    /// The bytes a re-encryption of `database` writes beside it before anything is removed: a
    /// second copy of the database (and of what its log holds), the key file written twice (the
    /// rotating envelope holds a second wrapped key; each write goes to a new file before the
    /// rename), and ``overheadBytes``.
    static func requiredBytes(for database: URL) -> Int64 {
        let databaseBytes = (StoreFiles.size(of: database) ?? 0) + (StoreFiles.size(of: URL(fileURLWithPath: database.path + "-wal")) ?? 0)
        let envelopeBytes = max(StoreFiles.size(of: KeyEnvelope.url(forDatabase: database)) ?? 0, 4096)
        return databaseBytes + 4 * envelopeBytes + overheadBytes
    }

    /// Refuses to start a re-encryption that the free space of the disk cannot hold, before
    /// anything is changed (a re-encryption stopped by a full disk part-way leaves work for the
    /// next open).
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - action: What needs the room, for the message ("rotating the data key").
    /// - Throws: ``StoreError/diskFull(_:)`` saying how much is needed and how much is free.
    static func checkFreeSpace(for database: URL, action: String) throws {
        let directory = database.deletingLastPathComponent()
        guard let free = StoreFiles.freeBytes(in: directory) else { return }
        let needed = requiredBytes(for: database)
        guard free < needed else { return }
        throw StoreError.diskFull(
            "Disk full: \(action) needs about \(amount(needed)) free in \(directory.path) (a second copy of the database and a new key "
                + "file), and \(amount(free)) are free. Free some disk space, then run the command again; nothing was changed.")
    }

    /// `bytes` for a person: KiB below a megabyte, MB (one decimal) above.
    static func amount(_ bytes: Int64) -> String {
        bytes < 1_000_000 ? "\((bytes + 1023) / 1024) KiB" : String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
