import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import SyncTPM

/// The slot a command unlocks the store with (`--unlock`).
enum UnlockSlot: String, ExpressibleByArgument, CaseIterable {
    case passphrase, recovery, tpm
}

/// `--unlock passphrase|recovery|tpm` and the ways to give that slot's secret: the passphrase
/// options (a passphrase or a recovery code), the PIN options and the TPM's configuration.
struct UnlockOptions: ParsableArguments {
    @Option(name: .customLong("unlock"), help: "The key slot to unlock with: passphrase (default), recovery or tpm.")
    var slot: UnlockSlot = .passphrase

    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var pin: PINOptions
    @OptionGroup var tpm: TPMOptions

    /// The unlocker of the chosen slot, with its secret read (a PIN only when the slot has one).
    func unlocker(for store: StoreLocation) throws -> any SlotUnlocker {
        switch slot {
        case .passphrase:
            return SecretUnlocker(try passphrase.read(prompt: "Passphrase for \(store.name): "))
        case .recovery:
            let code = try passphrase.read(prompt: "Recovery code for \(store.name): ")
            return SecretUnlocker(try RecoveryCode.normalized(code), slot: KeyEnvelope.recoverySlot)
        case .tpm:
            let status = try StoreKeys.status(forDatabase: store.url)
            guard !status.shredded else { throw StoreError(KeyError.shredded) }
            guard let binding = status.slots.first(where: { $0.id == KeyEnvelope.tpmSlot })?.tpm else {
                throw StoreError(KeyError.slotMissing(KeyEnvelope.tpmSlot))
            }
            let pin = binding.pin ? try pin.read(prompt: "PIN for \(store.name): ") : nil
            return TPMSlotUnlocker(configuration: tpm.configuration, pin: pin)
        }
    }
}
