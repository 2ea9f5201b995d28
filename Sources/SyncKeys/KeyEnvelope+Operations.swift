public import Foundation

extension KeyEnvelope {
    /// A new envelope with a fresh random data key under `passphrase`.
    ///
    /// - Returns: The sealed envelope and the data key (32 bytes) to give SQLCipher.
    /// - Throws: ``KeyError`` for an empty or too long passphrase or a profile below the floor.
    public static func create(
        passphrase: SecretBytes, profile: KeyProfile = .default, allowInsecureProfile: Bool = false, now: Date = Date()
    ) throws(KeyError) -> (KeyEnvelope, SecretBytes) {
        let dataKey = try SecretBytes.random(count: 32)
        let envelope = try create(
            passphrase: passphrase, dataKey: dataKey, profile: profile, allowInsecureProfile: allowInsecureProfile, now: now)
        return (envelope, dataKey)
    }

    /// A new envelope holding `dataKey` under `passphrase`, so that the key derivation can run
    /// while the data key is already in use (a store encrypted under it meanwhile).
    ///
    /// - Parameters:
    ///   - passphrase: The passphrase of the envelope's passphrase slot.
    ///   - dataKey: The data key to hold: 32 random bytes (``SecretBytes/random(count:)``).
    ///   - profile: The key-derivation profile of the slot.
    ///   - allowInsecureProfile: Accept the test-only profile.
    ///   - now: The creation time recorded.
    /// - Returns: The sealed envelope.
    /// - Throws: ``KeyError/invalidKeyLength(_:)`` for a data key that is not 32 bytes, and what
    ///   ``create(passphrase:profile:allowInsecureProfile:now:)`` throws.
    public static func create(
        passphrase: SecretBytes, dataKey: SecretBytes, profile: KeyProfile = .default, allowInsecureProfile: Bool = false,
        now: Date = Date()
    ) throws(KeyError) -> KeyEnvelope {
        guard dataKey.count == 32 else { throw .invalidKeyLength(dataKey.count) }
        let envelopeKey = try SecretBytes.random(count: 32)
        let slot = try makeSlot(
            id: passphraseSlot, secret: passphrase, profile: profile, envelopeKey: envelopeKey,
            allowInsecure: allowInsecureProfile, now: now)
        var envelope = KeyEnvelope(
            format: formatName, version: currentVersion, cipher: .current, state: .active,
            keyId: UUID().uuidString.lowercased(), keyCreatedAt: timestamp(now),
            wrappedDataKey: try wrapDataKey(dataKey, envelopeKey: envelopeKey),
            pendingKeyId: nil, pendingKeyCreatedAt: nil, pendingWrappedDataKey: nil,
            slots: [slot], digest: "", mac: "")
        try envelope.seal(envelopeKey: envelopeKey)
        return envelope
    }

    /// Unlocks the data key (and a pending one during a rotation) with the secret of `slot`.
    ///
    /// Order: the slot's KDF parameters are checked against the floor before anything is derived;
    /// a secret that does not unwrap the slot is ``KeyError/wrongPassphrase``; a MAC mismatch after
    /// unwrapping is ``KeyError/envelopeCorrupt(_:)``.
    public func unlockKeys(
        secret: SecretBytes, slot slotID: String = passphraseSlot, allowInsecureProfile: Bool = false
    ) throws(KeyError) -> UnlockedKeys {
        guard let slot = slots.first(where: { $0.id == slotID }) else { throw .slotMissing(slotID) }
        guard let wrapped = Data(base64Encoded: slot.wrappedKey) else { throw .envelopeCorrupt("wrapped key is not base64") }
        let wrappingKey = try Self.slotWrappingKey(slot, secret: secret, allowInsecure: allowInsecureProfile)
        let envelopeKey: SecretBytes
        do {
            envelopeKey = try KeyWrap.unwrap(Array(wrapped), using: wrappingKey)
        } catch {
            // A TPM slot's secret comes from the TPM object the slot names, checked by its Name: a
            // secret that does not unwrap means another object, not a mistyped secret.
            throw slot.tpm == nil ? .wrongPassphrase : .tpmKeyMissing
        }
        try verifyMAC(envelopeKey: envelopeKey)
        let dataKey = try Self.unwrapDataKey(wrappedDataKey, envelopeKey: envelopeKey)
        let pending = try pendingWrappedDataKey.map { (wrapped) throws(KeyError) in
            try Self.unwrapDataKey(wrapped, envelopeKey: envelopeKey)
        }
        return UnlockedKeys(envelopeKey: envelopeKey, dataKey: dataKey, pendingDataKey: pending)
    }

    /// Unlocks the data key (and a pending one) through `unlocker`'s slot.
    ///
    /// - Throws: ``KeyError/slotMissing(_:)`` when the envelope has no such slot, what the
    ///   unlocker throws (a TPM's errors), and what ``unlockKeys(secret:slot:allowInsecureProfile:)`` throws.
    public func unlockKeys(with unlocker: any SlotUnlocker, allowInsecureProfile: Bool = false) throws(KeyError) -> UnlockedKeys {
        guard let slot = slots.first(where: { $0.id == unlocker.slotID }) else { throw .slotMissing(unlocker.slotID) }
        let secret = try unlocker.secret(for: slot)
        return try unlockKeys(secret: secret, slot: slot.id, allowInsecureProfile: allowInsecureProfile)
    }

    /// The data key, unlocked with the passphrase.
    public func unlock(passphrase: SecretBytes, allowInsecureProfile: Bool = false) throws(KeyError) -> SecretBytes {
        try unlockKeys(secret: passphrase, allowInsecureProfile: allowInsecureProfile).dataKey
    }

    /// A copy whose `slot` is protected by `newSecret` instead (new salt, same envelope key and
    /// data key): the database is untouched.
    package func changingSecret(
        slot slotID: String = passphraseSlot, from oldSecret: SecretBytes, unlockingWith unlockSlot: String? = nil,
        to newSecret: SecretBytes, profile: KeyProfile? = nil, allowInsecureProfile: Bool = false, now: Date = Date()
    ) throws(KeyError) -> KeyEnvelope {
        let keys = try unlockKeys(secret: oldSecret, slot: unlockSlot ?? slotID, allowInsecureProfile: allowInsecureProfile)
        let current = slots.first { $0.id == slotID }
        var newProfile = KeyProfile.default
        if let profile {
            newProfile = profile
        } else if let current {
            newProfile = try Self.profile(of: current.kdf)
            newProfile.saltLength = 32
        }
        return try withSlot(
            id: slotID, secret: newSecret, profile: newProfile, envelopeKey: keys.envelopeKey,
            allowInsecureProfile: allowInsecureProfile, now: now)
    }

    /// A copy with slot `id` (added or replaced) protecting the envelope key under `secret`.
    public func withSlot(
        id: String, secret: SecretBytes, profile: KeyProfile, envelopeKey: SecretBytes, allowInsecureProfile: Bool = false,
        now: Date = Date()
    ) throws(KeyError) -> KeyEnvelope {
        try verifyMAC(envelopeKey: envelopeKey)
        var copy = self
        let slot = try Self.makeSlot(
            id: id, secret: secret, profile: profile, envelopeKey: envelopeKey, allowInsecure: allowInsecureProfile, now: now)
        if let index = copy.slots.firstIndex(where: { $0.id == id }) {
            copy.slots[index] = slot
        } else {
            copy.slots.append(slot)
        }
        try copy.seal(envelopeKey: envelopeKey)
        return copy
    }

    /// A copy in the `rotating` state carrying `newDataKey` as the pending key.
    package func beginningRotation(
        to newDataKey: SecretBytes, envelopeKey: SecretBytes, now: Date = Date()
    ) throws(KeyError)
        -> KeyEnvelope
    {
        guard newDataKey.count == 32 else { throw .invalidKeyLength(newDataKey.count) }
        try verifyMAC(envelopeKey: envelopeKey)
        var copy = self
        copy.state = .rotating
        copy.pendingKeyId = UUID().uuidString.lowercased()
        copy.pendingKeyCreatedAt = Self.timestamp(now)
        copy.pendingWrappedDataKey = try Self.wrapDataKey(newDataKey, envelopeKey: envelopeKey)
        try copy.seal(envelopeKey: envelopeKey)
        return copy
    }

    /// A copy back in the `active` state: with the pending key promoted (`commit`) or dropped.
    package func endingRotation(commit: Bool, envelopeKey: SecretBytes) throws(KeyError) -> KeyEnvelope {
        try verifyMAC(envelopeKey: envelopeKey)
        var copy = self
        if commit, let pendingID = pendingKeyId, let pendingAt = pendingKeyCreatedAt, let pendingKey = pendingWrappedDataKey {
            copy.keyId = pendingID
            copy.keyCreatedAt = pendingAt
            copy.wrappedDataKey = pendingKey
        }
        copy.state = .active
        copy.pendingKeyId = nil
        copy.pendingKeyCreatedAt = nil
        copy.pendingWrappedDataKey = nil
        try copy.seal(envelopeKey: envelopeKey)
        return copy
    }
}
