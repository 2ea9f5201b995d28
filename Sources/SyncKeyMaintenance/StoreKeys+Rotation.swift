public import Foundation
public import SyncKeys
import SyncSQLite

/// What became of a rotation that had been interrupted (found in the key envelope).
public enum InterruptedRotationOutcome: String, Sendable, Codable {
    /// The database already had the new data key: the rotation was completed.
    case completed
    /// The database still had the old data key: the new key was dropped.
    case rolledBack = "rolled-back"
}

/// The result of a data-key rotation.
public struct DataKeyRotation: Sendable, Codable {
    /// The id of the data key before.
    public var previousKeyId: String
    /// The id of the data key now.
    public var keyId: String
    /// The pages copied into the re-encrypted file (0 when an interrupted rotation was completed).
    public var pages: Int
    /// Set when an interrupted rotation was found first.
    public var interrupted: InterruptedRotationOutcome?
}

extension StoreKeys {
    /// Rotates the data key of the encrypted store at `database` (encryption.md §5, step 7).
    ///
    /// Order: exclusive store lock (refused with ``StoreError/storeInUse(_:)`` while any store
    /// connection is open) → unlock → the envelope records `rotating` with the old and the new
    /// data key (written atomically first) → WAL checkpoint → a byte copy of the database in a
    /// scratch file, re-encrypted in place under the new key, every attachment key rewrapped in it
    /// (Keys/FORMAT.md §11) → fsync, and beside it verify (opens with the new key, `integrity_check`, equal
    /// content digest over every table including the system tables) → atomic rename over the
    /// database once both have ended → stale side files removed → directory fsync → the envelope is `active` with only the new key.
    ///
    /// A crash at any point leaves a store that opens with the passphrase: the next open or the
    /// next rotation completes or rolls back (``recoverInterruptedRotation(forDatabase:passphrase:allowInsecureProfile:)``).
    /// If this call finds an interrupted rotation that had already replaced the database, it
    /// completes that one and returns. A failure before the rename (a full disk, say) restores the
    /// original envelope and leaves the database as it was; a disk without room for the copy and
    /// the key file is refused before anything changes (``StoreError/diskFull``).
    ///
    /// - Parameters:
    ///   - database: The database file of an encrypted store.
    ///   - passphrase: The store's passphrase.
    ///   - allowInsecureProfile: Accept the test-only key profile.
    ///   - report: Receives step boundaries and copy progress, on the calling thread.
    /// - Returns: The old and new key ids and the pages copied.
    /// - Throws: ``StoreError``.
    public static func rotateDataKey(
        forDatabase database: URL, passphrase: SecretBytes, allowInsecureProfile: Bool = false,
        report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> DataKeyRotation {
        try rotateDataKey(
            forDatabase: database, unlocker: SecretUnlocker(passphrase), allowInsecureProfile: allowInsecureProfile, report: report)
    }

    /// ``rotateDataKey(forDatabase:passphrase:allowInsecureProfile:report:)``, unlocking through
    /// any slot (a TPM slot keeps working: the envelope key does not change).
    ///
    /// - Parameters:
    ///   - database: The database file of an encrypted store.
    ///   - unlocker: The slot and its secret.
    ///   - allowInsecureProfile: Accept the test-only key profile.
    ///   - report: Receives step boundaries and copy progress, on the calling thread.
    /// - Returns: The old and new key ids and the pages copied.
    /// - Throws: ``StoreError``.
    public static func rotateDataKey(
        forDatabase database: URL, unlocker: any SlotUnlocker, allowInsecureProfile: Bool = false,
        report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> DataKeyRotation {
        let lock = try StoreLock.acquire(for: database, mode: .exclusive)
        defer { withExtendedLifetime(lock) {} }
        report(.step(.locked))
        guard StoreFiles.exists(database) else { throw StoreError.storeNotFound(database.path) }
        var envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        var interrupted: InterruptedRotationOutcome?
        if envelope.state == .rotating {
            let outcome = try resolveRotation(database: database, envelope: envelope, keys: keys)
            if outcome.result == .completed {
                return DataKeyRotation(
                    previousKeyId: envelope.keyId, keyId: outcome.envelope.keyId, pages: 0, interrupted: .completed)
            }
            interrupted = outcome.result
            envelope = outcome.envelope
        }
        try removeLeftovers(of: database)
        try Reencryption.checkFreeSpace(for: database, action: "rotating the data key")

        let original = envelope
        let newKey = try transform { () throws(KeyError) in try SecretBytes.random(count: 32) }
        let rotating = try transform { () throws(KeyError) in
            try original.beginningRotation(to: newKey, envelopeKey: keys.envelopeKey)
        }
        try write(rotating, forDatabase: database)
        report(.step(.envelopeRotating))

        var progress = Reencryption.Progress()
        do {
            let newKeySecret = newKey
            try keys.dataKey.withUnsafeBytes { oldKey in
                try newKey.withUnsafeBytes { newKey in
                    try Reencryption.run(
                        database: database, from: oldKey, to: newKey, progress: &progress,
                        beforeRename: {
                            // The attachment keys follow the data key inside the copy, so the rename
                            // switches both at once (the attachment files are not rewritten).
                            _ = try AttachmentKeys.rewrap(
                                copy: StoreFiles.exportFile(of: database), oldDataKey: keys.dataKey, newDataKey: newKeySecret)
                        }, report: report)
                }
            }
        } catch  where !progress.renamed {
            // Before the rename the database is untouched: put the envelope back as it was.
            try? removeLeftovers(of: database)
            try? write(original, forDatabase: database)
            throw error
        } catch {
            // After the rename the database has the new key (a later step failed, such as the
            // directory sync): the rotation is committed below all the same.
        }
        let active = try transform { () throws(KeyError) in try rotating.endingRotation(commit: true, envelopeKey: keys.envelopeKey) }
        try write(active, forDatabase: database)
        report(.step(.envelopeActive))
        return DataKeyRotation(previousKeyId: original.keyId, keyId: active.keyId, pages: progress.pages, interrupted: interrupted)
    }
}
