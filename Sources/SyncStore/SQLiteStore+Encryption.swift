public import Foundation
import SyncKeyMaintenance
public import SyncKeys
import SyncSQLite

/// How a store is protected at rest.
public enum StoreEncryption: Sendable {
    /// A plain SQLite database.
    case none
    /// Encrypted with a data key that is wrapped under this passphrase in the key envelope
    /// beside the database (`<database>.keys`).
    case passphrase(SecretBytes)
    /// Encrypted with this 32-byte data key, managed by the caller (a platform keystore, say).
    case key(SecretBytes)
    /// Encrypted, and unlocked through one slot of the existing key envelope: a TPM slot
    /// (`TPMSlotUnlocker` of SyncTPM), the recovery slot, or the passphrase slot. It cannot create
    /// a store.
    case slot(any SlotUnlocker)
}

/// Options for opening a store.
public struct StoreOptions: Sendable {
    /// Create the store (and its key envelope) when no database exists at the path.
    public var createIfMissing: Bool
    /// The key-derivation profile for a new envelope.
    public var keyProfile: KeyProfile
    /// Accept the cheap key profile meant for tests. Never set this in an app.
    public var allowInsecureKeyProfile: Bool
    /// Open an existing store for reading only: no file is created or changed (no `-wal`, `-shm`
    /// or lock file when they are absent), so a store on read-only media or a full disk can be
    /// read; writes throw `StoreError/fileSystem`. An encrypted store whose key rotation was
    /// interrupted must be opened for writing once first (which finishes the rotation).
    public var readOnly: Bool
    /// Whether every commit waits until its write-ahead log is on the disk (`synchronous = FULL`).
    /// Always true in the library; the benchmark (`Benchmarks/`, a package of its own) turns it off
    /// to measure what the sync costs.
    @_spi(Benchmarks) public var syncsEveryCommit = true

    /// Options.
    ///
    /// - Parameters:
    ///   - createIfMissing: Create the store when no database exists at the path.
    ///   - keyProfile: The key-derivation profile for a new envelope.
    ///   - allowInsecureKeyProfile: Accept the cheap test profile (never in an app).
    ///   - readOnly: Open an existing store for reading only, creating and changing no file.
    public init(
        createIfMissing: Bool = false, keyProfile: KeyProfile = .default, allowInsecureKeyProfile: Bool = false, readOnly: Bool = false
    ) {
        self.createIfMissing = createIfMissing && !readOnly
        self.keyProfile = keyProfile
        self.allowInsecureKeyProfile = allowInsecureKeyProfile
        self.readOnly = readOnly
    }
}

extension SQLiteStore {
    /// Opens the store at `url`, plain or encrypted.
    ///
    /// With a passphrase, the key envelope is read and unlocked **before** the database is
    /// touched: a wrong passphrase is `StoreError/wrongPassphrase` and a missing envelope is
    /// `StoreError/keyMaterialMissing`. If the data key unlocks but the database does not open,
    /// the error is `StoreError/corruptOrKeyMismatch`. No failure creates, truncates or rewrites
    /// a file.
    ///
    /// The work runs on the new store's own queue, not on the caller's thread: unlocking the
    /// envelope derives a key (about half a second with the default profile), finishing an
    /// interrupted rotation copies the database, and SQLite's open reads the disk. The calling
    /// task is suspended meanwhile, and Swift's cooperative threads stay free.
    ///
    /// - Parameters:
    ///   - url: The database file; its directory must exist.
    ///   - encryption: No encryption, a passphrase, or a raw data key.
    ///   - options: Whether to create a missing store, and the key profile for a new one.
    /// - Returns: The open store.
    /// - Throws: `StoreError`.
    public static func open(
        at url: URL, encryption: StoreEncryption, options: StoreOptions = StoreOptions()
    ) async throws -> SQLiteStore {
        let isEncrypted: Bool
        if case .none = encryption { isEncrypted = false } else { isEncrypted = true }
        let store = SQLiteStore(url: url, isEncrypted: isEncrypted, isReadOnly: options.readOnly)
        try await store.connect(encryption: encryption, options: options)
        return store
    }

    /// Unlocks (or creates) the key and opens the database, on the store's queue.
    private func connect(encryption: StoreEncryption, options: StoreOptions) throws {
        let database: OpenedDatabase
        switch encryption {
        case .none:
            database = try Self.openDatabase(at: url, key: nil, options: options)
        case .key(let key):
            guard key.count == 32 else { throw StoreError.keyMaterialCorrupt("a data key must be 32 bytes") }
            database = try key.withUnsafeBytes { try Self.openDatabase(at: url, key: $0, options: options) }
            try attachmentVault.unlock(dataKey: key)
        case .passphrase(let passphrase):
            let (dataKey, lock) = try Self.unlockOrCreateKey(for: url, passphrase: passphrase, options: options)
            database = try dataKey.withUnsafeBytes { try Self.openDatabase(at: url, key: $0, options: options, holding: lock) }
            try attachmentVault.unlock(dataKey: dataKey)
        case .slot(let unlocker):
            guard FileManager.default.fileExists(atPath: url.path) else { throw StoreError.storeNotFound(url.path) }
            let (dataKey, lock) = try Self.unlockKey(for: url, unlocker: unlocker, options: options)
            var existing = options
            existing.createIfMissing = false
            database = try dataKey.withUnsafeBytes { try Self.openDatabase(at: url, key: $0, options: existing, holding: lock) }
            try attachmentVault.unlock(dataKey: dataKey)
        }
        adopt(database)
        // Files left by a crash before their row was committed (or after it was removed) go now.
        if !options.readOnly { try? removeUnrecordedAttachmentFiles() }
    }

    /// The data key of the store at `url`: unlocked from its envelope, or, when creating a new
    /// store, generated and written to a new envelope; and the store lock, shared, when a recovery
    /// already holds it.
    static func unlockOrCreateKey(
        for url: URL, passphrase: SecretBytes, options: StoreOptions
    ) throws -> (dataKey: SecretBytes, lock: StoreLock?) {
        let envelopeURL = KeyEnvelope.url(forDatabase: url)
        let fileManager = FileManager.default
        let databaseExists = fileManager.fileExists(atPath: url.path)
        let envelopeExists = fileManager.fileExists(atPath: envelopeURL.path)
        if !databaseExists && !options.createIfMissing { throw StoreError.storeNotFound(url.path) }
        if databaseExists && !envelopeExists { throw StoreError.keyMaterialMissing }
        if envelopeExists {
            return try unlockKey(for: url, unlocker: SecretUnlocker(passphrase), options: options)
        }
        let (envelope, dataKey) = try StoreKeys.transform { () throws(KeyError) in
            try KeyEnvelope.create(
                passphrase: passphrase, profile: options.keyProfile, allowInsecureProfile: options.allowInsecureKeyProfile)
        }
        try StoreKeys.write(envelope, forDatabase: url)
        return (dataKey, nil)
    }

    /// The data key of the existing store at `url`, unlocked through `unlocker`'s slot, after
    /// finishing or rolling back an interrupted rotation or migration (a no-op otherwise); and the
    /// store lock, shared, when that recovery holds it.
    static func unlockKey(
        for url: URL, unlocker: any SlotUnlocker, options: StoreOptions
    ) throws -> (dataKey: SecretBytes, lock: StoreLock?) {
        let envelope = try StoreKeys.readEnvelope(of: url)
        let keys = try StoreKeys.unlock(envelope, using: unlocker, allowInsecureProfile: options.allowInsecureKeyProfile)
        if options.readOnly {
            // Finishing an interrupted rotation or migration writes; a reader only reads.
            guard envelope.state == .active, !StoreFiles.isPlainDatabase(at: url) else {
                throw StoreError.storeInUse(
                    "A key rotation of \(url.path) was interrupted; open the store for writing once (or run sync-keys rotate) to finish it.")
            }
            return (keys.dataKey, nil)
        }
        // Finishes or rolls back an interrupted rotation or migration first (a no-op otherwise).
        return try StoreKeys.dataKeyAfterRecovery(
            database: url, envelope: envelope, keys: keys, unlocker: unlocker, allowInsecureProfile: options.allowInsecureKeyProfile)
    }
}
