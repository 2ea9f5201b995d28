public import Foundation

/// The key envelope: the versioned, authenticated file beside a database (`<database>.keys`)
/// that holds the database's data key wrapped under the user's secrets.
///
/// Hierarchy: each *slot* (passphrase, recovery code) derives a key-encryption key with its own
/// KDF and salt and wraps the *envelope key*; the envelope key wraps the *data key* that
/// SQLCipher uses. Changing a passphrase rewraps one slot; rotating the data key needs only the
/// envelope key, so every slot keeps working. The whole file is authenticated with an HMAC under a
/// key derived from the envelope key, and each slot's KDF parameters are bound into its wrapping
/// key, so nothing can be lowered or swapped silently. `Keys/FORMAT.md` specifies every byte.
public struct KeyEnvelope: Sendable, Equatable, Codable {
    /// The value of `format` in every envelope.
    public static let formatName = "ciphersync-key-envelope"
    /// The envelope format version this code writes.
    public static let currentVersion = 1

    /// The SQLCipher settings the database was created with (3.4.1 does not record them).
    public struct CipherProfile: Sendable, Equatable, Codable {
        /// The encryption library (`sqlcipher`).
        public var library: String
        /// SQLCipher's compatibility level (3).
        public var compatibility: Int
        /// The database page size in bytes.
        public var pageSize: Int
        /// Whether pages carry an HMAC.
        public var hmac: Bool
        /// How the key is given to SQLCipher (`raw`: the 32 data-key bytes as hex).
        public var keyFormat: String

        /// The settings every new database is created with.
        public static let current = CipherProfile(library: "sqlcipher", compatibility: 3, pageSize: 4096, hmac: true, keyFormat: "raw")
    }

    /// Whether a data-key rotation is in progress.
    public enum State: String, Sendable, Equatable, Codable {
        /// `active`: one data key; `rotating`: a new data key is pending.
        case active, rotating
    }

    /// A slot's key derivation: algorithm, parameters and salt.
    public struct KDF: Sendable, Equatable, Codable {
        /// `scrypt`, `pbkdf2-sha512` or `insecure-test`.
        public var algorithm: String
        /// scrypt's cost N.
        public var n: UInt64?
        /// scrypt's block size r.
        public var r: UInt64?
        /// scrypt's parallelism p.
        public var p: UInt64?
        /// PBKDF2's iteration count.
        public var iterations: Int?
        /// Base64 of the salt.
        public var salt: String
    }

    /// One way in: a secret whose derived key wraps the envelope key.
    public struct Slot: Sendable, Equatable, Codable {
        /// `passphrase` or `recovery`.
        public var id: String
        /// When the slot was made (ISO 8601).
        public var createdAt: String
        /// How the slot's key-encryption key is derived.
        public var kdf: KDF
        /// The wrapping algorithm of `wrappedKey`.
        public var wrap: String
        /// Base64 of the wrapped envelope key.
        public var wrappedKey: String
    }

    /// Always `formatName`.
    public var format: String
    /// The format version (`currentVersion`).
    public var version: Int
    /// The SQLCipher settings of the database.
    public var cipher: CipherProfile
    /// Whether a rotation is in progress.
    public var state: State
    /// Id and creation time of the data key in use.
    public var keyId: String
    /// When the data key in use was made (ISO 8601).
    public var keyCreatedAt: String
    /// Base64 of the data key wrapped under the envelope key.
    public var wrappedDataKey: String
    /// During a rotation: the new data key, its id and creation time.
    public var pendingKeyId: String?
    /// During a rotation: when the new data key was made.
    public var pendingKeyCreatedAt: String?
    /// During a rotation: Base64 of the new data key wrapped under the envelope key.
    public var pendingWrappedDataKey: String?
    /// The ways in: a passphrase slot, and a recovery slot when one was made.
    public var slots: [Slot]
    /// Hex SHA-256 of the canonical form: catches accidental damage before any key work.
    public var digest: String
    /// Base64 HMAC-SHA256 of the canonical form under a key derived from the envelope key.
    public var mac: String

    /// The envelope file of a database: the database path plus `.keys`.
    public static func url(forDatabase database: URL) -> URL {
        URL(fileURLWithPath: database.path + ".keys")
    }

    /// The slot used by passphrases.
    public static let passphraseSlot = "passphrase"
    /// The slot used by recovery codes.
    public static let recoverySlot = "recovery"
}

/// The keys an unlocked envelope yields.
public struct UnlockedKeys: Sendable {
    /// The key that wraps the data keys and authenticates the envelope.
    public let envelopeKey: SecretBytes
    /// The data key in use.
    public let dataKey: SecretBytes
    /// The new data key while a rotation is in progress.
    public let pendingDataKey: SecretBytes?
}
