public import Foundation
public import SyncKeys

/// The result of migrating a plain store to an encrypted one.
public struct StoreEncryptionMigration: Sendable, Codable {
    /// The id of the new data key.
    public var keyId: String
    /// The pages copied into the encrypted file.
    public var pages: Int
    /// Whether an interrupted migration (its key envelope already written) was finished.
    public var resumed: Bool
}

extension StoreKeys {
    /// Encrypts the plain store at `database` under a new data key protected by `passphrase`.
    ///
    /// The plaintext is exported into a new keyed file (never `PRAGMA rekey`, a silent no-op on
    /// plaintext in SQLCipher 3.4.1), the copy is verified, the key envelope is written, the copy
    /// is renamed over the database, and the header is checked to be no longer plaintext. The
    /// replaced plaintext file is overwritten with zeros and removed, and its side files are gone.
    /// The store's attachment files are sealed under keys of their own, recorded in the copy before
    /// the rename (Keys/FORMAT.md §11); their plaintext files are overwritten and removed after it.
    ///
    /// Interrupted after the envelope was written, the store is resumed by running this again
    /// with the same passphrase (or by opening it with the passphrase); before that, nothing has
    /// changed but scratch files, which the next run removes.
    ///
    /// - Parameters:
    ///   - database: The plain database file.
    ///   - passphrase: The new passphrase (or, to resume, the one given to the interrupted run).
    ///   - profile: The key-derivation profile of the new envelope.
    ///   - allowInsecureProfile: Accept the test-only key profile.
    ///   - report: Receives step boundaries and copy progress.
    /// - Throws: ``StoreError``: ``StoreError/encryptionMismatch(_:)`` when the store is already
    ///   encrypted, ``StoreError/storeInUse(_:)`` while it is open elsewhere,
    ///   ``StoreError/diskFull`` (before anything changes) when the disk cannot hold the copy,
    ///   ``StoreError/ioError`` when the old plaintext could not be overwritten before its removal
    ///   (the store is encrypted then; the message says so).
    public static func encryptStore(
        atDatabase database: URL, passphrase: SecretBytes, profile: KeyProfile = .default,
        allowInsecureProfile: Bool = false, report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> StoreEncryptionMigration {
        let lock = try StoreLock.acquire(for: database, mode: .exclusive)
        defer { withExtendedLifetime(lock) {} }
        report(.step(.locked))
        guard StoreFiles.exists(database) else { throw StoreError.storeNotFound(database.path) }
        let hadLeftovers = hasLeftovers(of: database)
        try removeLeftovers(of: database)
        let envelopeURL = KeyEnvelope.url(forDatabase: database)
        let envelopeExists = StoreFiles.exists(envelopeURL)
        guard StoreFiles.isPlainDatabase(at: database) else {
            guard envelopeExists else {
                throw StoreError.encryptionMismatch("The file at \(database.path) is not a plain SQLite database.")
            }
            let envelope = try readEnvelope(of: database)
            _ = try unlock(envelope, secret: passphrase, allowInsecureProfile: allowInsecureProfile)
            // Interrupted after the rename: only the wiping of the old plaintext was left, now done.
            guard hadLeftovers else {
                throw StoreError.encryptionMismatch("The store at \(database.path) is already encrypted.")
            }
            report(.step(.plaintextRemoved))
            return StoreEncryptionMigration(keyId: envelope.keyId, pages: 0, resumed: true)
        }
        if envelopeExists {
            let envelope = try readEnvelope(of: database)
            let keys = try unlock(envelope, secret: passphrase, allowInsecureProfile: allowInsecureProfile)
            try Reencryption.checkFreeSpace(for: database, action: "encrypting the store")
            let pages = try migrate(database: database, dataKey: keys.dataKey, newEnvelope: nil, report: report)
            return StoreEncryptionMigration(keyId: envelope.keyId, pages: pages, resumed: true)
        }
        // The passphrase and the profile are checked before anything is done; the key derivation
        // of the new envelope (the slow part) runs on another thread while the export goes on,
        // since the data key is random and the envelope is needed only right before the rename.
        let dataKey = try transform { () throws(KeyError) in
            try KeyEnvelope.checkNewSlot(secret: passphrase, profile: profile, allowInsecureProfile: allowInsecureProfile)
            return try SecretBytes.random(count: 32)
        }
        try Reencryption.checkFreeSpace(for: database, action: "encrypting the store")
        let sealing = BackgroundWork {
            try transform { () throws(KeyError) in
                try KeyEnvelope.create(passphrase: passphrase, dataKey: dataKey, profile: profile, allowInsecureProfile: allowInsecureProfile)
            }
        }
        defer { sealing.wait() }
        let pages = try migrate(database: database, dataKey: dataKey, newEnvelope: sealing.result, report: report)
        return StoreEncryptionMigration(keyId: try sealing.result().keyId, pages: pages, resumed: false)
    }

    /// Exports the plain database into a keyed copy, writes the envelope `newEnvelope` returns
    /// (when given) right before the rename, and wipes the replaced plaintext. The caller holds
    /// the exclusive lock.
    ///
    /// - Returns: The pages copied.
    static func migrate(
        database: URL, dataKey: SecretBytes, newEnvelope: (() throws -> KeyEnvelope)?, report: (KeyMaintenanceEvent) -> Void
    ) throws -> Int {
        let envelopeURL = KeyEnvelope.url(forDatabase: database)
        let retired = StoreFiles.retiredPlaintextFile(of: database)
        var progress = Reencryption.Progress()
        var wroteEnvelope = false
        var plainAttachments: [URL] = []
        do {
            try dataKey.withUnsafeBytes { key in
                try Reencryption.run(
                    database: database, from: nil, to: key, progress: &progress,
                    beforeRename: {
                        // The attachment files are sealed and their keys recorded in the copy.
                        plainAttachments = try AttachmentKeys.seal(
                            copy: StoreFiles.exportFile(of: database), database: database, dataKey: dataKey)
                        if let newEnvelope {
                            try write(try newEnvelope(), forDatabase: database)
                            wroteEnvelope = true
                            report(.step(.envelopeWritten))
                        }
                        try StoreFiles.link(database, as: retired)
                    }, report: report)
            }
        } catch  where !progress.renamed {
            // Nothing depends on a new envelope yet (the database is still plain): undo it.
            if StoreFiles.identity(of: retired).map({ id in StoreFiles.identity(of: database).map { $0 == id } ?? false }) ?? false {
                try? StoreFiles.remove(retired)
            }
            if wroteEnvelope { try? StoreFiles.remove(envelopeURL) }
            throw error
        }
        // C33: SQLCipher 3.4.1 can silently leave plaintext; check the header that is now in place.
        guard !StoreFiles.isPlainDatabase(at: database) else {
            throw StoreError.verificationFailed("the database is still plaintext after the migration")
        }
        try removeLeftovers(of: database)
        AttachmentKeys.wipe(plainAttachments)
        report(.step(.plaintextRemoved))
        return progress.pages
    }
}
