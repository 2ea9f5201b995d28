public import Foundation
public import SyncKeys
public import SyncTPM

/// What `sync-keys status` shows: everything about a store's keys that can be known without
/// the passphrase (the envelope's public fields and the files on disk).
public struct StoreKeyStatus: Sendable, Codable {
    /// A key derivation and whether it meets the floor.
    public struct KDFInfo: Sendable, Codable {
        /// `scrypt` or `pbkdf2-sha512`.
        public var algorithm: String
        /// scrypt's cost N.
        public var n: UInt64?
        /// scrypt's block size r.
        public var r: UInt64?
        /// scrypt's parallelism p.
        public var p: UInt64?
        /// PBKDF2's iteration count.
        public var iterations: Int?
        /// The salt's length in bytes.
        public var saltBytes: Int
        /// scrypt N ≥ 2^17, r = 8, p = 1, or PBKDF2-SHA512 ≥ 220,000; salt ≥ 16 bytes.
        public var meetsFloor: Bool
    }

    /// One way to unlock the store.
    public struct SlotInfo: Sendable, Codable {
        /// `passphrase`, `recovery` or `tpm`.
        public var id: String
        /// When the slot's secret was set.
        public var createdAt: String
        /// How the slot's key is derived (`tpm2-sealed` for a TPM slot).
        public var kdf: KDFInfo
        /// For a TPM slot: the sealed object's handle and Name, whether a PIN authorizes it, and
        /// the PCRs of its policy. Nothing secret.
        public var tpm: KeyEnvelope.TPMBinding?
    }

    /// The database file.
    public var database: String
    /// Whether the database file exists.
    public var databaseExists: Bool
    /// Whether the database header is not plaintext.
    public var encrypted: Bool
    /// The envelope format version (nil for a plain store without envelope).
    public var formatVersion: Int?
    /// The SQLCipher settings recorded in the envelope.
    public var cipher: KeyEnvelope.CipherProfile?
    /// `active` or `rotating`.
    public var state: String?
    /// Whether a data-key rotation was interrupted (the next open or `rotate` resolves it).
    public var rotationInterrupted: Bool
    /// The id of the data key in use.
    public var keyId: String?
    /// When the data key in use was created.
    public var dataKeyCreatedAt: String?
    /// When the passphrase was last set.
    public var passphraseSetAt: String?
    /// The rotation period the due date is computed with.
    public var rotationPeriodDays: Int
    /// When the data key is due for rotation.
    public var rotationDueAt: String?
    /// Whether that date has passed.
    public var rotationDue: Bool
    /// The key slots (passphrase, recovery).
    public var slots: [SlotInfo]
    /// Scratch or retired files of an interrupted procedure beside the database.
    public var leftoverFiles: [String]
    /// Whether the store was shredded (its envelope holds no key any more).
    public var shredded = false
    /// The TPM objects a shredded envelope still lists for eviction (handles).
    public var tpmObjectsToEvict: [String] = []
    /// The dictionary-attack parameters of the TPM, when the store has a TPM slot and the tool
    /// could ask the TPM (filled by the tool, not by ``StoreKeys/status(forDatabase:rotationPeriodDays:now:)``).
    public var tpmLockout: TPMDevice.LockoutParameters?
}

extension StoreKeys {
    /// The default rotation period: 365 days (within NIST SP 800-57's cryptoperiod for data keys).
    public static let defaultRotationPeriodDays = 365

    /// The key status of the store at `database`, read without the passphrase.
    ///
    /// - Parameters:
    ///   - database: The database file.
    ///   - rotationPeriodDays: After how many days the data key is due for rotation.
    ///   - now: The current time (a seam for tests).
    /// - Throws: ``StoreError/storeNotFound(_:)`` when there is neither database nor envelope;
    ///   ``StoreError/keyMaterialMissing`` for an encrypted database without its envelope;
    ///   ``StoreError/keyMaterialCorrupt(_:)`` for a damaged envelope.
    public static func status(
        forDatabase database: URL, rotationPeriodDays: Int = defaultRotationPeriodDays, now: Date = Date()
    ) throws -> StoreKeyStatus {
        let databaseExists = StoreFiles.exists(database)
        let plain = StoreFiles.isPlainDatabase(at: database)
        let leftovers = (StoreFiles.scratchFiles(of: database) + [StoreFiles.retiredPlaintextFile(of: database)])
            .filter(StoreFiles.exists).map(\.lastPathComponent)
        var status = StoreKeyStatus(
            database: database.path, databaseExists: databaseExists, encrypted: databaseExists && !plain,
            formatVersion: nil, cipher: nil, state: nil, rotationInterrupted: false, keyId: nil,
            dataKeyCreatedAt: nil, passphraseSetAt: nil, rotationPeriodDays: rotationPeriodDays, rotationDueAt: nil,
            rotationDue: false, slots: [], leftoverFiles: leftovers)
        guard StoreFiles.exists(KeyEnvelope.url(forDatabase: database)) else {
            if !databaseExists { throw StoreError.storeNotFound(database.path) }
            if plain { return status }
            throw StoreError.keyMaterialMissing
        }
        if let shredded = ShreddedEnvelope.read(from: KeyEnvelope.url(forDatabase: database)) {
            status.shredded = true
            status.tpmObjectsToEvict = shredded.tpmObjects.map(\.handle)
            return status
        }
        let envelope = try readEnvelope(of: database)
        status.formatVersion = envelope.version
        status.cipher = envelope.cipher
        status.state = envelope.state.rawValue
        status.rotationInterrupted = envelope.state == .rotating
        status.keyId = envelope.keyId
        status.dataKeyCreatedAt = envelope.keyCreatedAt
        status.passphraseSetAt = envelope.slots.first { $0.id == KeyEnvelope.passphraseSlot }?.createdAt
        status.slots = envelope.slots.map {
            StoreKeyStatus.SlotInfo(id: $0.id, createdAt: $0.createdAt, kdf: kdfInfo($0.kdf), tpm: $0.tpm)
        }
        if let created = KeyEnvelope.date(from: envelope.keyCreatedAt) {
            let due = created.addingTimeInterval(TimeInterval(rotationPeriodDays) * 86_400)
            status.rotationDueAt = timestamp(due)
            status.rotationDue = due <= now
        }
        return status
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, the envelope's time format.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// The public description of a slot's KDF, with the floor check.
    static func kdfInfo(_ kdf: KeyEnvelope.KDF) -> StoreKeyStatus.KDFInfo {
        let saltBytes = Data(base64Encoded: kdf.salt)?.count ?? 0
        // A TPM slot's key is 32 random bytes sealed in the TPM: nothing to guess offline.
        var meetsFloor = kdf.algorithm == KeyEnvelope.tpmSealedAlgorithm && saltBytes >= 16
        if let profile = keyProfile(of: kdf) {
            meetsFloor = (try? profile.checkFloor(saltLength: saltBytes, allowInsecure: false)) != nil
        }
        return StoreKeyStatus.KDFInfo(
            algorithm: kdf.algorithm, n: kdf.n, r: kdf.r, p: kdf.p, iterations: kdf.iterations, saltBytes: saltBytes,
            meetsFloor: meetsFloor)
    }

    /// The key profile a slot's KDF describes, or `nil` for an unknown algorithm.
    static func keyProfile(of kdf: KeyEnvelope.KDF) -> KeyProfile? {
        guard let algorithm = KeyProfile.Algorithm(rawValue: kdf.algorithm) else { return nil }
        return KeyProfile(
            name: "envelope", algorithm: algorithm, n: kdf.n, r: kdf.r, p: kdf.p, iterations: kdf.iterations, saltLength: 32)
    }
}
