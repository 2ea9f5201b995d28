public import Foundation
public import SyncKeys

/// Key management of an encrypted store's envelope, without opening the database.
public enum StoreKeys {
    /// Changes the passphrase of the store at `database`: the data key is rewrapped under the
    /// new passphrase (new salt) and the envelope is replaced atomically. The database file is
    /// not touched, so it stays byte-identical.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` when `old` does not unlock; other
    ///   ``StoreError`` cases for missing or damaged key material or an invalid new passphrase.
    public static func changePassphrase(
        forDatabase database: URL, from old: SecretBytes, to new: SecretBytes, profile: KeyProfile? = nil,
        allowInsecureProfile: Bool = false
    ) throws {
        let url = KeyEnvelope.url(forDatabase: database)
        // Shared: refused while a rotation (which rewrites the envelope at its end) runs.
        let lock = try StoreLock.acquire(for: database, mode: .shared)
        defer { withExtendedLifetime(lock) {} }
        do throws(KeyError) {
            let envelope = try KeyEnvelope.read(from: url)
            try envelope.changingSecret(from: old, to: new, profile: profile, allowInsecureProfile: allowInsecureProfile)
                .write(to: url)
        } catch {
            throw StoreError(error)
        }
    }
}
