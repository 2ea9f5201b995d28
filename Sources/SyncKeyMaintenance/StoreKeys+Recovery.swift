public import Foundation
public import SyncKeys
import SyncSQLite

extension StoreKeys {
    /// Finishes or rolls back an interrupted data-key rotation of the store at `database`.
    ///
    /// Takes the store's exclusive lock, unlocks the envelope and, when it says `rotating`, finds
    /// which data key opens the database file: the new one means the rename happened, so the
    /// rotation is completed; the old one means it did not, so the new key is dropped. Scratch
    /// files are removed either way. `SQLiteStore.open(at:encryption:options:)` (SyncStore) does the same
    /// when opening with a passphrase, so calling this is never required.
    ///
    /// - Returns: What was done, or `nil` when no rotation was interrupted.
    /// - Throws: ``StoreError``; ``StoreError/corruptOrKeyMismatch`` when neither key opens the
    ///   database (nothing is changed then).
    public static func recoverInterruptedRotation(
        forDatabase database: URL, passphrase: SecretBytes, allowInsecureProfile: Bool = false
    ) throws -> InterruptedRotationOutcome? {
        let lock = try StoreLock.acquire(for: database, mode: .exclusive)
        defer { withExtendedLifetime(lock) {} }
        let envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, secret: passphrase, allowInsecureProfile: allowInsecureProfile)
        try removeLeftovers(of: database)
        guard envelope.state == .rotating else { return nil }
        return try resolveRotation(database: database, envelope: envelope, keys: keys).result
    }

    /// The data key that opens the store, after finishing whatever an interrupted key procedure
    /// left (the hook of `SQLiteStore.open(at:encryption:options:)` (SyncStore)): a `rotating` envelope is
    /// resolved, a migration interrupted after its envelope was written is finished, and scratch
    /// or retired plaintext files are removed, all under the exclusive lock.
    /// Without leftovers this only checks for files and returns `keys.dataKey` and no lock.
    /// After a recovery it returns the lock it held, turned shared, for the store to keep.
    package static func dataKeyAfterRecovery(
        database: URL, envelope: KeyEnvelope, keys: UnlockedKeys, unlocker: any SlotUnlocker, allowInsecureProfile: Bool
    ) throws -> (dataKey: SecretBytes, lock: StoreLock?) {
        let interruptedMigration = StoreFiles.isPlainDatabase(at: database)
        guard envelope.state == .rotating || interruptedMigration || hasLeftovers(of: database) else {
            removeInterruptedKeyFiles(of: database)
            return (keys.dataKey, nil)
        }
        let lock = try StoreLock.acquire(for: database, mode: .exclusive)
        let dataKey = try recover(
            database: database, envelope: envelope, keys: keys, unlocker: unlocker, allowInsecureProfile: allowInsecureProfile)
        try lock?.downgradeToShared(for: database)
        return (dataKey, lock)
    }

    /// The recovery of ``dataKeyAfterRecovery(database:envelope:keys:unlocker:allowInsecureProfile:)``,
    /// under the exclusive lock the caller holds.
    private static func recover(
        database: URL, envelope: KeyEnvelope, keys: UnlockedKeys, unlocker: any SlotUnlocker, allowInsecureProfile: Bool
    ) throws -> SecretBytes {
        try removeLeftovers(of: database)
        // Another process may have changed the envelope between our read and the lock.
        let current = try readEnvelope(of: database)
        let currentKeys =
            current == envelope
            ? keys : try unlock(current, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        if current.state == .active && StoreFiles.isPlainDatabase(at: database) {
            // A migration was interrupted after its envelope was written: finish it.
            _ = try migrate(database: database, dataKey: currentKeys.dataKey, newEnvelope: nil, report: { _ in })
        }
        guard current.state == .rotating else { return currentKeys.dataKey }
        return try resolveRotation(database: database, envelope: current, keys: currentKeys).dataKey
    }

    /// Decides an interrupted rotation: which data key opens the database file.
    /// The caller holds the exclusive lock.
    static func resolveRotation(
        database: URL, envelope: KeyEnvelope, keys: UnlockedKeys
    ) throws -> (result: InterruptedRotationOutcome, envelope: KeyEnvelope, dataKey: SecretBytes) {
        guard let pending = keys.pendingDataKey else {
            throw StoreError.keyMaterialCorrupt("the rotation in the key file has no new key")
        }
        try Reencryption.removeScratchFiles(of: database)
        // The rename happens only after the database's -wal was emptied and removed, so a
        // non-empty -wal means the database still has the old key: try that one first then.
        let wal = URL(fileURLWithPath: database.path + "-wal")
        let walHoldsFrames = (StoreFiles.size(of: wal) ?? 0) > 0
        let candidates: [(InterruptedRotationOutcome, SecretBytes)] =
            walHoldsFrames ? [(.rolledBack, keys.dataKey), (.completed, pending)] : [(.completed, pending), (.rolledBack, keys.dataKey)]
        for (outcome, key) in candidates where try opens(database, with: key) {
            if outcome == .completed { try Reencryption.retireSideFiles(of: database) }
            let resolved = try transform { () throws(KeyError) in
                try envelope.endingRotation(commit: outcome == .completed, envelopeKey: keys.envelopeKey)
            }
            try write(resolved, forDatabase: database)
            try StoreFiles.syncDirectory(of: database)
            return (outcome, resolved, key)
        }
        throw StoreError.corruptOrKeyMismatch
    }

    /// Whether `key` opens the database (a wrong key fails at the first page read and writes
    /// nothing).
    static func opens(_ database: URL, with key: SecretBytes) throws -> Bool {
        do {
            let connection = try key.withUnsafeBytes { try Connection.open(path: database.path, mode: .readWrite, key: $0) }
            connection.close()
            return true
        } catch let error as SQLiteError where ResultCode.notADatabase ~= error.code {
            return false
        } catch {
            throw Reencryption.mapped(error, database: database)
        }
    }

    /// Whether scratch files of an interrupted procedure, or retired plaintext, lie beside the database.
    static func hasLeftovers(of database: URL) -> Bool {
        (StoreFiles.scratchFiles(of: database) + [StoreFiles.retiredPlaintextFile(of: database)]).contains(where: StoreFiles.exists)
    }

    /// Removes scratch files, and wipes a retired plaintext copy once the database no longer is
    /// that file (while it still is, the second name is only unlinked). The caller holds the
    /// exclusive lock.
    static func removeLeftovers(of database: URL) throws {
        try Reencryption.removeScratchFiles(of: database)
        for file in StoreFiles.interruptedKeyFiles(of: database) { try StoreFiles.remove(file) }
        let retired = StoreFiles.retiredPlaintextFile(of: database)
        guard let retiredID = StoreFiles.identity(of: retired) else { return }
        if let databaseID = StoreFiles.identity(of: database), databaseID == retiredID {
            try StoreFiles.remove(retired)
        } else {
            try StoreFiles.wipeAndRemove(retired)
        }
        try StoreFiles.syncDirectory(of: database)
    }

    /// Removes the temporary key files of key-file writes killed before their rename, when the
    /// store's exclusive lock is free: while a key change holds the lock, its own temporary file
    /// may be one of them, and they are left for a later opening.
    private static func removeInterruptedKeyFiles(of database: URL) {
        let files = StoreFiles.interruptedKeyFiles(of: database)
        guard !files.isEmpty, let lock = try? StoreLock.acquire(for: database, mode: .exclusive) else { return }
        defer { withExtendedLifetime(lock) {} }
        // Listed again under the lock: a key change that held it until now has renamed its file.
        for file in StoreFiles.interruptedKeyFiles(of: database) { try? StoreFiles.remove(file) }
        try? StoreFiles.syncDirectory(of: database)
    }
}
