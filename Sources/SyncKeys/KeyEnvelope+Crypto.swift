public import Foundation

extension KeyEnvelope {
    static let wrapInfo = Array("ciphersync/v1/slot-wrap".utf8)
    static let dataKeyInfo = Array("ciphersync/v1/data-key-wrap".utf8)
    static let macInfo = Array("ciphersync/v1/envelope-mac".utf8)
    static let wrapAlgorithm = "aes256-kwp"

    /// The bytes the digest and the MAC cover: the envelope as JSON with sorted keys, no
    /// whitespace, absent optionals omitted, and `digest` and `mac` removed.
    func canonicalBytes() throws(KeyError) -> [UInt8] {
        var copy = self
        copy.digest = ""
        copy.mac = ""
        guard var object = try? JSONSerialization.jsonObject(with: Self.encode(copy)) as? [String: Any] else {
            throw .envelopeCorrupt("cannot encode")
        }
        object.removeValue(forKey: "digest")
        object.removeValue(forKey: "mac")
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw .envelopeCorrupt("cannot encode")
        }
        return Array(data)
    }

    static func encode(_ envelope: KeyEnvelope) throws(KeyError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(envelope) else { throw .envelopeCorrupt("cannot encode") }
        return data
    }

    /// The bytes bound into a slot's wrapping key: its id and KDF, canonical JSON.
    static func slotHeader(_ slot: Slot) throws(KeyError) -> [UInt8] {
        var kdf: [String: Any] = ["algorithm": slot.kdf.algorithm, "salt": slot.kdf.salt]
        if let n = slot.kdf.n { kdf["n"] = n }
        if let r = slot.kdf.r { kdf["r"] = r }
        if let p = slot.kdf.p { kdf["p"] = p }
        if let i = slot.kdf.iterations { kdf["iterations"] = i }
        var header: [String: Any] = ["id": slot.id, "kdf": kdf, "wrap": slot.wrap]
        if let tpm = slot.tpm {
            header["tpm"] = ["handle": tpm.handle, "name": tpm.name, "pin": tpm.pin, "pcrs": tpm.pcrs, "pcrBank": tpm.pcrBank] as [String: Any]
        }
        guard let data = try? JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw .envelopeCorrupt("cannot encode slot")
        }
        return Array(data)
    }

    /// The profile a slot's KDF describes.
    static func profile(of kdf: KDF) throws(KeyError) -> KeyProfile {
        guard let algorithm = KeyProfile.Algorithm(rawValue: kdf.algorithm) else {
            throw .envelopeCorrupt("unknown key derivation '\(kdf.algorithm)'")
        }
        return KeyProfile(name: "envelope", algorithm: algorithm, n: kdf.n, r: kdf.r, p: kdf.p, iterations: kdf.iterations, saltLength: 0)
    }

    /// The key that wraps the envelope key in `slot`, from the slot's secret.
    static func slotWrappingKey(_ slot: Slot, secret: SecretBytes, allowInsecure: Bool) throws(KeyError) -> SecretBytes {
        guard let salt = Data(base64Encoded: slot.kdf.salt) else { throw .envelopeCorrupt("salt is not base64") }
        if slot.kdf.algorithm == tpmSealedAlgorithm {
            return try tpmSlotWrappingKey(slot, sealedSecret: secret, salt: Array(salt))
        }
        let profile = try profile(of: slot.kdf)
        try profile.checkFloor(saltLength: salt.count, allowInsecure: allowInsecure)
        guard slot.wrap == wrapAlgorithm else { throw .envelopeCorrupt("unknown wrap algorithm") }
        let kek = try profile.deriveKey(from: try Passphrase.normalized(secret), salt: Array(salt))
        let header = try slotHeader(slot)
        return try KeyDerivation.hkdfSHA256(key: kek, salt: Array(salt), info: wrapInfo + [0] + header, length: 32)
    }

    /// The wrapping key of a TPM slot: HKDF of the 32-byte secret the TPM unsealed, bound to the
    /// slot header like every slot.
    static func tpmSlotWrappingKey(_ slot: Slot, sealedSecret: SecretBytes, salt: [UInt8]) throws(KeyError) -> SecretBytes {
        guard slot.tpm != nil, slot.id == tpmSlot, salt.count >= 16, slot.wrap == wrapAlgorithm else {
            throw .envelopeCorrupt("invalid TPM slot")
        }
        guard sealedSecret.count == 32 else { throw .tpmKeyMissing }
        return try KeyDerivation.hkdfSHA256(key: sealedSecret, salt: salt, info: wrapInfo + [0] + slotHeader(slot), length: 32)
    }

    /// A new TPM slot holding `envelopeKey` under `sealedSecret`, the 32 bytes sealed in the TPM
    /// object that `binding` names.
    static func makeTPMSlot(
        sealedSecret: SecretBytes, binding: TPMBinding, envelopeKey: SecretBytes, now: Date
    ) throws(KeyError) -> Slot {
        let salt = try RandomBytes.make(32)
        var slot = Slot(
            id: tpmSlot, createdAt: timestamp(now),
            kdf: KDF(algorithm: tpmSealedAlgorithm, n: nil, r: nil, p: nil, iterations: nil, salt: Data(salt).base64EncodedString()),
            wrap: wrapAlgorithm, wrappedKey: "", tpm: binding)
        let wrappingKey = try tpmSlotWrappingKey(slot, sealedSecret: sealedSecret, salt: salt)
        slot.wrappedKey = Data(try KeyWrap.wrap(envelopeKey, using: wrappingKey)).base64EncodedString()
        return slot
    }

    /// Checks what a new slot is made from, before anything is derived: a secret that is neither
    /// empty nor too long, and a profile at or above the floor.
    ///
    /// - Parameters:
    ///   - secret: The slot's secret (a passphrase or a recovery code).
    ///   - profile: The key-derivation profile of the slot.
    ///   - allowInsecureProfile: Accept the test-only profile.
    /// - Returns: The secret in its normal form.
    /// - Throws: ``KeyError/emptyPassphrase``, ``KeyError/passphraseTooLong``, ``KeyError/weakKeyDerivation(_:)``.
    @discardableResult
    package static func checkNewSlot(secret: SecretBytes, profile: KeyProfile, allowInsecureProfile: Bool) throws(KeyError) -> SecretBytes {
        let normalized = try Passphrase.normalized(secret)
        try profile.checkFloor(saltLength: saltLength(of: profile), allowInsecure: allowInsecureProfile)
        return normalized
    }

    /// The salt length of a new slot under `profile`: the profile's, at least 16 bytes.
    private static func saltLength(of profile: KeyProfile) -> Int { max(profile.saltLength, 16) }

    /// A new slot holding `envelopeKey` under `secret`.
    static func makeSlot(
        id: String, secret: SecretBytes, profile: KeyProfile, envelopeKey: SecretBytes, allowInsecure: Bool, now: Date
    ) throws(KeyError) -> Slot {
        let normalized = try checkNewSlot(secret: secret, profile: profile, allowInsecureProfile: allowInsecure)
        let salt = try RandomBytes.make(saltLength(of: profile))
        var slot = Slot(
            id: id, createdAt: timestamp(now),
            kdf: KDF(
                algorithm: profile.algorithm.rawValue, n: profile.n, r: profile.r, p: profile.p, iterations: profile.iterations,
                salt: Data(salt).base64EncodedString()),
            wrap: wrapAlgorithm, wrappedKey: "")
        let wrappingKey = try slotWrappingKey(slot, secret: normalized, allowInsecure: allowInsecure)
        slot.wrappedKey = Data(try KeyWrap.wrap(envelopeKey, using: wrappingKey)).base64EncodedString()
        return slot
    }

    static func dataKeyWrappingKey(_ envelopeKey: SecretBytes) throws(KeyError) -> SecretBytes {
        try KeyDerivation.hkdfSHA256(key: envelopeKey, salt: [], info: dataKeyInfo, length: 32)
    }

    static func wrapDataKey(_ dataKey: SecretBytes, envelopeKey: SecretBytes) throws(KeyError) -> String {
        Data(try KeyWrap.wrap(dataKey, using: dataKeyWrappingKey(envelopeKey))).base64EncodedString()
    }

    static func unwrapDataKey(_ wrapped: String, envelopeKey: SecretBytes) throws(KeyError) -> SecretBytes {
        guard let bytes = Data(base64Encoded: wrapped) else { throw .envelopeCorrupt("wrapped data key is not base64") }
        do {
            let key = try KeyWrap.unwrap(Array(bytes), using: dataKeyWrappingKey(envelopeKey))
            guard key.count == 32 else { throw KeyError.envelopeCorrupt("data key has the wrong length") }
            return key
        } catch {
            throw .envelopeCorrupt("the data key does not unwrap")
        }
    }

    /// Recomputes the digest and the MAC after a change.
    mutating func seal(envelopeKey: SecretBytes) throws(KeyError) {
        let canonical = try canonicalBytes()
        digest = try KeyDerivation.sha256(canonical).map { String(format: "%02x", $0) }.joined()
        let macKey = try KeyDerivation.hkdfSHA256(key: envelopeKey, salt: [], info: Self.macInfo, length: 32)
        mac = Data(try KeyDerivation.hmacSHA256(key: macKey, data: canonical)).base64EncodedString()
    }

    /// Checks the MAC with the envelope key (constant-time compare).
    func verifyMAC(envelopeKey: SecretBytes) throws(KeyError) {
        let macKey = try KeyDerivation.hkdfSHA256(key: envelopeKey, salt: [], info: Self.macInfo, length: 32)
        let canonical = try canonicalBytes()
        let expected = SecretBytes(try KeyDerivation.hmacSHA256(key: macKey, data: canonical))
        guard let stored = Data(base64Encoded: mac), SecretBytes(Array(stored)) == expected else {
            throw .envelopeCorrupt("authentication failed")
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// Parses a timestamp written by this type.
    public static func date(from timestamp: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: timestamp)
    }
}
