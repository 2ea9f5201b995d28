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

    /// Where a TPM slot's secret is sealed: a persistent object of the TPM's storage hierarchy,
    /// and the policy that releases it (`Keys/FORMAT.md` §9).
    public struct TPMBinding: Sendable, Equatable, Codable {
        /// The persistent handle of the sealed object, `0x` and eight lowercase hex digits.
        public var handle: String
        /// The TPM Name of the sealed object (lowercase hex): checked before it is used.
        public var name: String
        /// Whether the object's authorization is a PIN (under the TPM's dictionary-attack lockout).
        public var pin: Bool
        /// The PCRs of the SHA-256 bank the object is bound to (empty: no PCR policy).
        public var pcrs: [Int]
        /// The PCR bank of `pcrs`: `sha256`.
        public var pcrBank: String

        /// A binding.
        ///
        /// - Parameters:
        ///   - handle: The persistent handle.
        ///   - name: The TPM Name of the sealed object, hex.
        ///   - pin: Whether a PIN authorizes the object.
        ///   - pcrs: The SHA-256 PCRs of its policy (empty for none).
        public init(handle: UInt32, name: String, pin: Bool, pcrs: [Int]) {
            self.handle = String(format: "0x%08x", handle)
            self.name = name
            self.pin = pin
            self.pcrs = pcrs
            self.pcrBank = "sha256"
        }

        /// The persistent handle as a number, or `nil` when the field is not a valid handle.
        public var handleValue: UInt32? { Self.handleValue(of: handle) }

        /// A persistent handle written as in ``handle``, as a number; `nil` when it is not one.
        ///
        /// - Parameter text: `0x` and eight hex digits, in `0x81000000`…`0x81FFFFFF`.
        public static func handleValue(of text: String) -> UInt32? {
            guard text.hasPrefix("0x"), text.count == 10, let value = UInt32(text.dropFirst(2), radix: 16), value >> 24 == 0x81
            else { return nil }
            return value
        }
    }

    /// One way in: a secret whose derived key wraps the envelope key.
    public struct Slot: Sendable, Equatable, Codable {
        /// `passphrase`, `recovery` or `tpm`.
        public var id: String
        /// When the slot was made (ISO 8601).
        public var createdAt: String
        /// How the slot's key-encryption key is derived.
        public var kdf: KDF
        /// The wrapping algorithm of `wrappedKey`.
        public var wrap: String
        /// Base64 of the wrapped envelope key.
        public var wrappedKey: String
        /// For a TPM slot: where its secret is sealed.
        public var tpm: TPMBinding?
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
    /// The slot whose secret is sealed in a TPM.
    public static let tpmSlot = "tpm"
    /// The `kdf.algorithm` of a TPM slot: the key-encryption key is the 32-byte secret the TPM
    /// unseals, not a derivation of a typed secret.
    public static let tpmSealedAlgorithm = "tpm2-sealed"
}

/// Yields the secret of one slot of an envelope: a passphrase or recovery code the user typed,
/// or the secret a TPM unseals.
public protocol SlotUnlocker: Sendable {
    /// The id of the slot this unlocks.
    var slotID: String { get }
    /// The secret of `slot`, the slot of the envelope with id ``slotID``.
    ///
    /// - Parameter slot: The slot, as the envelope describes it.
    /// - Throws: ``KeyError``.
    func secret(for slot: KeyEnvelope.Slot) throws(KeyError) -> SecretBytes
}

/// Unlocks a slot with a secret already in hand (a passphrase, a normalized recovery code).
public struct SecretUnlocker: SlotUnlocker {
    /// The slot's id.
    public let slotID: String
    private let secret: SecretBytes

    /// An unlocker of `slot` with `secret`.
    ///
    /// - Parameters:
    ///   - secret: The secret.
    ///   - slot: The slot it unlocks.
    public init(_ secret: SecretBytes, slot: String = KeyEnvelope.passphraseSlot) {
        self.secret = secret
        self.slotID = slot
    }

    /// The secret given at creation.
    public func secret(for slot: KeyEnvelope.Slot) throws(KeyError) -> SecretBytes { secret }
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
