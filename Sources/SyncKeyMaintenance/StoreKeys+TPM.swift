public import Foundation
public import SyncKeys
import SyncTPM

extension StoreKeys {
    /// The shortest and the longest PIN of a TPM slot, in bytes of UTF-8 (NFC).
    public static let pinLength = 4...64

    /// Checks a new PIN: 4 to 64 bytes.
    ///
    /// - Throws: ``StoreError/invalidPassphrase(_:)``.
    public static func checkNewPIN(_ pin: SecretBytes) throws {
        let normalized = try transform { () throws(KeyError) in try Passphrase.normalized(pin) }
        guard pinLength.contains(normalized.count) else {
            throw StoreError.invalidPassphrase("A PIN has \(pinLength.lowerBound) to \(pinLength.upperBound) characters.")
        }
    }

    /// Adds a TPM slot to the store at `database` (replacing its TPM slot if it has one): a new
    /// random 32-byte secret is sealed in a new persistent object of the TPM, under `pin` (the
    /// TPM's dictionary-attack lockout bounds the guesses) and the current values of `pcrs`, and
    /// wraps the envelope key. The database file is not touched.
    ///
    /// Order: unlock → seal (`tpm-sealed`) → envelope written atomically (`envelope-written`) →
    /// the replaced slot's object evicted (`tpm-evicted`). A crash before the envelope is written
    /// leaves the old envelope and an object no slot names.
    ///
    /// - Parameters:
    ///   - database: The store's database file.
    ///   - unlocker: A slot that unlocks the store now, and its secret.
    ///   - configuration: The TCTI configuration of the TPM.
    ///   - pin: The new slot's PIN, or `nil` for none.
    ///   - pcrs: The SHA-256 PCRs to bind the slot to (empty for none).
    ///   - allowInsecureProfile: Accept the test-only key profile when unlocking.
    ///   - report: Receives the steps.
    /// - Returns: The new slot's binding.
    /// - Throws: ``StoreError``.
    public static func addTPMSlot(
        forDatabase database: URL, unlocker: any SlotUnlocker, tpm configuration: String, pin: SecretBytes?, pcrs: [Int],
        allowInsecureProfile: Bool = false, report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> KeyEnvelope.TPMBinding {
        if let pin { try checkNewPIN(pin) }
        guard pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw StoreError.invalidPassphrase("PCR indexes are 0 to 23.")
        }
        let lock = try StoreLock.acquire(for: database, mode: .shared)
        defer { withExtendedLifetime(lock) {} }
        report(.step(.locked))
        let envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        let (device, secret) = try transform { () throws(KeyError) in
            (try TPMDevice(configuration: configuration), try SecretBytes.random(count: 32))
        }
        let binding = try transform { () throws(KeyError) in try device.seal(secret, pin: pin, pcrs: pcrs.sorted()) }
        report(.step(.tpmSealed))
        do {
            let updated = try transform { () throws(KeyError) in
                try envelope.withTPMSlot(sealedSecret: secret, binding: binding, envelopeKey: keys.envelopeKey)
            }
            try write(updated, forDatabase: database)
        } catch {
            _ = try? device.evict(handle: binding.handle, name: binding.name)
            throw error
        }
        report(.step(.envelopeWritten))
        if let old = envelope.slots.first(where: { $0.id == KeyEnvelope.tpmSlot })?.tpm {
            try transform { () throws(KeyError) in try device.evict(handle: old.handle, name: old.name) }
            report(.step(.tpmEvicted))
        }
        return binding
    }

    /// Removes slot `id` from the store at `database`; the last slot cannot be removed (shred the
    /// store instead). A TPM slot's object is evicted **first** (`tpm-evicted`), so that an old
    /// copy of the envelope cannot use it either; then the envelope is written (`envelope-written`).
    /// A crash between the two leaves a TPM slot whose object is gone (the other slots open the
    /// store; removing the slot again finishes).
    ///
    /// - Parameters:
    ///   - id: `passphrase`, `recovery` or `tpm`.
    ///   - database: The store's database file.
    ///   - unlocker: A slot that unlocks the store now (it may be the one removed).
    ///   - configuration: The TCTI configuration of the TPM (for a TPM slot).
    ///   - allowInsecureProfile: Accept the test-only key profile when unlocking.
    ///   - report: Receives the steps.
    /// - Returns: Whether a TPM object was evicted.
    /// - Throws: ``StoreError``; ``StoreError/slotMissing`` when there is no such slot.
    @discardableResult
    public static func removeSlot(
        _ id: String, forDatabase database: URL, unlocker: any SlotUnlocker, tpm configuration: String,
        allowInsecureProfile: Bool = false, report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> Bool {
        let lock = try StoreLock.acquire(for: database, mode: .shared)
        defer { withExtendedLifetime(lock) {} }
        report(.step(.locked))
        let envelope = try readEnvelope(of: database)
        let keys = try unlock(envelope, using: unlocker, allowInsecureProfile: allowInsecureProfile)
        let updated = try transform { () throws(KeyError) in try envelope.removingSlot(id, envelopeKey: keys.envelopeKey) }
        var evicted = false
        if let binding = envelope.slots.first(where: { $0.id == id })?.tpm {
            evicted = try transform { () throws(KeyError) in
                try TPMDevice(configuration: configuration).evict(handle: binding.handle, name: binding.name)
            }
            report(.step(.tpmEvicted))
        }
        try write(updated, forDatabase: database)
        report(.step(.envelopeWritten))
        return evicted
    }

    /// Shreds the store at `database`: every slot is destroyed, so the database stays unreadable
    /// ciphertext for good. No secret is needed.
    ///
    /// Order, under the exclusive store lock (`locked`): the envelope is overwritten **in place**
    /// by its shredded form, which lists the TPM objects still to evict, and flushed
    /// (`envelope-overwritten`: from here on nothing opens the store); scratch files and retired
    /// plaintext are wiped; each TPM slot's object is evicted (`tpm-evicted`); the shredded
    /// envelope is rewritten without the evicted objects. Run again, it evicts what is left.
    ///
    /// - Parameters:
    ///   - database: The store's database file.
    ///   - configuration: The TCTI configuration of the TPM (used only if the store has a TPM slot).
    ///   - report: Receives the steps.
    /// - Returns: The handles of the TPM objects evicted.
    /// - Throws: ``StoreError/keyMaterialMissing`` when there is no envelope; after the envelope is
    ///   destroyed, ``StoreError/tpmUnavailable`` when a TPM object could not be evicted.
    @discardableResult
    public static func shred(
        forDatabase database: URL, tpm configuration: String, report: (KeyMaintenanceEvent) -> Void = { _ in }
    ) throws -> [String] {
        let lock = try StoreLock.acquire(for: database, mode: .exclusive)
        defer { withExtendedLifetime(lock) {} }
        report(.step(.locked))
        let url = KeyEnvelope.url(forDatabase: database)
        guard StoreFiles.exists(url) else { throw StoreError.keyMaterialMissing }
        var shredded: ShreddedEnvelope
        if let earlier = ShreddedEnvelope.read(from: url) {
            shredded = earlier
        } else {
            shredded = ShreddedEnvelope(replacing: try? KeyEnvelope.read(from: url))
            try transform { () throws(KeyError) in try shredded.overwrite(inPlace: url) }
            try StoreFiles.syncDirectory(of: database)
            report(.step(.envelopeOverwritten))
        }
        try removeLeftovers(of: database)
        guard !shredded.tpmObjects.isEmpty else { return [] }
        var evicted: [String] = []
        var failure: KeyError?
        do throws(KeyError) {
            let device = try TPMDevice(configuration: configuration)
            for object in shredded.tpmObjects {
                try device.evict(handle: object.handle, name: object.name)
                evicted.append(object.handle)
                report(.step(.tpmEvicted))
            }
        } catch {
            failure = error
        }
        shredded.tpmObjects.removeAll { evicted.contains($0.handle) }
        try transform { () throws(KeyError) in try shredded.write(to: url) }
        if let failure {
            let left = shredded.tpmObjects.map(\.handle).joined(separator: ", ")
            throw StoreError(
                .tpmUnavailable,
                reason:
                    "The store's keys are destroyed, but the TPM object \(left) could not be evicted (\(failure)); run shred again where that TPM is reachable.",
                underlying: failure)
        }
        return evicted
    }
}
