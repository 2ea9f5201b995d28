public import Foundation
public import SyncKeys

/// Recovery codes: 160 random bits written as 32 base32 characters (RFC 4648 alphabet `A–Z2–7`)
/// in eight groups of four, e.g. `ABCD-EFGH-…`. A code is a second key slot of the envelope, so
/// it can unlock the store and set a new passphrase when the passphrase is lost.
public enum RecoveryCode {
    /// The number of random bytes in a code (160 bits).
    public static let randomBytes = 20
    /// The number of base32 characters in a code.
    public static let length = 32
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// A new random code, formatted for display (groups of four separated by `-`).
    public static func generate() throws -> SecretBytes {
        let random = try StoreKeys.transform { () throws(KeyError) in try SecretBytes.random(count: randomBytes) }
        var text = [UInt8]()
        text.reserveCapacity(length + length / 4)
        random.withUnsafeBytes { bytes in
            var buffer: UInt64 = 0
            var bits = 0
            for byte in bytes {
                buffer = (buffer << 8) | UInt64(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    if text.count % 5 == 4 { text.append(UInt8(ascii: "-")) }
                    text.append(alphabet[Int((buffer >> UInt64(bits)) & 31)])
                }
            }
            buffer = 0
        }
        return SecretBytes(wiping: &text)
    }

    /// The canonical form of a typed code: separators and spaces removed, letters upper-cased,
    /// `0`/`1`/`8` read as `O`/`I`/`B`.
    ///
    /// - Throws: ``StoreError/invalidPassphrase(_:)`` when the result is not 32 base32 characters.
    public static func normalized(_ code: SecretBytes) throws -> SecretBytes {
        var text = [UInt8]()
        text.reserveCapacity(code.count)
        let valid = code.withUnsafeBytes { bytes in
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t"): continue
                case UInt8(ascii: "a")...UInt8(ascii: "z"): text.append(byte - 32)
                case UInt8(ascii: "0"): text.append(UInt8(ascii: "O"))
                case UInt8(ascii: "1"): text.append(UInt8(ascii: "I"))
                case UInt8(ascii: "8"): text.append(UInt8(ascii: "B"))
                default: text.append(byte)
                }
            }
            return text.count == length && text.allSatisfy { alphabet.contains($0) }
        }
        let result = SecretBytes(wiping: &text)
        guard valid else {
            throw StoreError.invalidPassphrase("A recovery code has 32 letters and digits (2–7), in groups of four.")
        }
        return result
    }
}

extension StoreKeys {
    /// Adds (or replaces) the recovery slot of the store at `database` and returns the new code,
    /// formatted for display. Show it once; it is not stored anywhere in readable form. A code made
    /// earlier stops working. The database file is not touched.
    ///
    /// The slot uses the same key-derivation parameters as the passphrase slot.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` and the other key-material errors.
    public static func addRecoveryCode(
        forDatabase database: URL, passphrase: SecretBytes, allowInsecureProfile: Bool = false
    ) throws -> SecretBytes {
        try addRecoveryCode(forDatabase: database, unlocker: SecretUnlocker(passphrase), allowInsecureProfile: allowInsecureProfile)
    }

    /// ``addRecoveryCode(forDatabase:passphrase:allowInsecureProfile:)``, unlocking through any
    /// slot. Without a passphrase slot, the recovery slot gets the default key derivation.
    ///
    /// - Throws: ``StoreError``.
    public static func addRecoveryCode(
        forDatabase database: URL, unlocker: any SlotUnlocker, allowInsecureProfile: Bool = false
    ) throws -> SecretBytes {
        let lock = try StoreLock.acquire(for: database, mode: .shared)
        defer { withExtendedLifetime(lock) {} }
        let envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        let passphraseSlot = envelope.slots.first { $0.id == KeyEnvelope.passphraseSlot }
        let profile = passphraseSlot.flatMap { keyProfile(of: $0.kdf) } ?? .default
        let code = try RecoveryCode.generate()
        let secret = try RecoveryCode.normalized(code)
        let updated = try transform { () throws(KeyError) in
            try envelope.withSlot(
                id: KeyEnvelope.recoverySlot, secret: secret, profile: profile, envelopeKey: keys.envelopeKey,
                allowInsecureProfile: allowInsecureProfile)
        }
        try write(updated, forDatabase: database)
        return code
    }

    /// Sets a new passphrase for the store at `database`, unlocking it with its recovery code
    /// instead of the passphrase. The recovery code keeps working; the database file is untouched.
    ///
    /// - Throws: ``StoreError/wrongPassphrase`` when the code does not unlock,
    ///   ``StoreError/invalidPassphrase(_:)`` for a malformed code or an invalid new passphrase,
    ///   ``StoreError/keyMaterialCorrupt(_:)`` when the store has no recovery slot.
    public static func changePassphrase(
        forDatabase database: URL, recoveryCode: SecretBytes, to new: SecretBytes, allowInsecureProfile: Bool = false
    ) throws {
        let lock = try StoreLock.acquire(for: database, mode: .shared)
        defer { withExtendedLifetime(lock) {} }
        let envelope = try readEnvelope(of: database)
        guard envelope.slots.contains(where: { $0.id == KeyEnvelope.recoverySlot }) else {
            throw StoreError.keyMaterialCorrupt("the store has no recovery code; add one with sync-keys add-recovery-key")
        }
        let code = try RecoveryCode.normalized(recoveryCode)
        let updated = try transform { () throws(KeyError) in
            try envelope.changingSecret(
                slot: KeyEnvelope.passphraseSlot, from: code, unlockingWith: KeyEnvelope.recoverySlot, to: new,
                allowInsecureProfile: allowInsecureProfile)
        }
        try write(updated, forDatabase: database)
    }
}
