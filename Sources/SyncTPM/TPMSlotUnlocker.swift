public import SyncKeys
import Synchronization

/// Unlocks an envelope's TPM slot: unseals the slot's secret from the TPM that the configuration
/// names, with the PIN when the slot has one. The secret is unsealed once per unlocker (a command
/// that reads the envelope twice asks the TPM, and counts a wrong PIN, once).
public struct TPMSlotUnlocker: SlotUnlocker {
    /// `KeyEnvelope.tpmSlot`.
    public let slotID = KeyEnvelope.tpmSlot
    /// The TCTI configuration of the TPM.
    public let configuration: String
    private let pin: SecretBytes?
    private let cache = Cache()

    /// The unsealed secrets, by the Name of their object.
    private final class Cache: Sendable {
        let secrets = Mutex<[String: SecretBytes]>([:])
    }

    /// An unlocker through the TPM at `configuration`.
    ///
    /// - Parameters:
    ///   - configuration: A TCTI configuration string (``TPMDevice/defaultConfiguration``).
    ///   - pin: The slot's PIN, when it has one.
    public init(configuration: String = TPMDevice.defaultConfiguration, pin: SecretBytes?) {
        self.configuration = configuration
        self.pin = pin
    }

    /// Unseals the slot's secret.
    ///
    /// - Throws: What ``TPMDevice/unseal(_:pin:)`` throws.
    public func secret(for slot: KeyEnvelope.Slot) throws(KeyError) -> SecretBytes {
        guard let binding = slot.tpm else { throw .envelopeCorrupt("the TPM slot names no TPM object") }
        if let known = cache.secrets.withLock({ $0[binding.name] }) { return known }
        let secret = try TPMDevice(configuration: configuration).unseal(binding, pin: pin)
        cache.secrets.withLock { $0[binding.name] = secret }
        return secret
    }
}
