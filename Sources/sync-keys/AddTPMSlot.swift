import ArgumentParser
import Foundation
@_spi(Testing) import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import SyncTPM

struct AddTPMSlot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-tpm-slot",
        abstract: "Add a key slot sealed in this device's TPM, optionally with a PIN and a PCR policy.",
        discussion: """
            The store is unlocked with --unlock (passphrase by default). With --pin the slot needs a PIN \
            (4 to 64 characters; from --new-pin-file, --new-pin-fd or a prompt asked twice), and the TPM's \
            dictionary-attack lockout bounds the guesses. With --pcrs 7 the slot opens only while those \
            SHA-256 PCRs hold the values they have now. A TPM slot made earlier is replaced.
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var unlock: UnlockOptions

    @Flag(name: .customLong("pin"), help: "Protect the slot with a PIN.")
    var withPIN = false

    @Option(name: .customLong("new-pin-file"), help: ArgumentHelp("Read the new PIN from the first line of this file.", valueName: "path"))
    var newPINFile: String?

    @Option(name: .customLong("new-pin-fd"), help: ArgumentHelp("Read the new PIN from this open file descriptor.", valueName: "n"))
    var newPINDescriptor: Int32?

    @Option(name: .customLong("pcrs"), help: ArgumentHelp("Bind the slot to these SHA-256 PCRs (e.g. 7 or 0,7).", valueName: "list"))
    var pcrList: String?

    func validate() throws {
        if !withPIN && (newPINFile != nil || newPINDescriptor != nil) {
            throw ValidationError("--new-pin-file and --new-pin-fd need --pin.")
        }
        if newPINFile != nil && newPINDescriptor != nil { throw ValidationError("Give the new PIN with --new-pin-file or --new-pin-fd, not both.") }
        _ = try pcrs()
    }

    /// The PCR indexes of `--pcrs`.
    func pcrs() throws -> [Int] {
        guard let pcrList else { return [] }
        let values = pcrList.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0.map { (0..<24).contains($0) } ?? false }) else {
            throw ValidationError("--pcrs takes PCR indexes 0 to 23, comma-separated.")
        }
        return Array(Set(values.compactMap { $0 })).sorted()
    }

    func run() throws {
        let fault = try FaultInjection.fromEnvironment()
        let unlocker = try unlock.unlocker(for: store)
        let pin =
            withPIN
            ? try PINOptions.read(
                file: newPINFile, descriptor: newPINDescriptor, prompt: "New PIN for \(store.name): ", confirm: true,
                sourceHint: "--new-pin-file or --new-pin-fd") : nil
        let configuration = unlock.tpm.configuration
        let binding = try StoreKeys.addTPMSlot(
            forDatabase: store.url, unlocker: unlocker, tpm: configuration, pin: pin, pcrs: try pcrs(),
            allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile
        ) { fault?.observe($0) }
        let policy = binding.pcrs.isEmpty ? "no PCR policy" : "PCRs \(binding.pcrs.map(String.init).joined(separator: ",")) (sha256)"
        Terminal.print("Added a TPM slot to \(store.url.path): TPM object \(binding.handle), \(binding.pin ? "PIN" : "no PIN"), \(policy).")
        if binding.pin, let lockout = try? TPMDevice(configuration: configuration).lockoutParameters() {
            Terminal.print(Status.describe(lockout))
        }
    }
}

struct RemoveSlot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-slot",
        abstract: "Remove a key slot (passphrase, recovery or tpm); a TPM slot's object is evicted from the TPM.",
        discussion: "The store is unlocked with --unlock (passphrase by default). The last slot cannot be removed: use shred.")

    @OptionGroup var store: StoreLocation
    @OptionGroup var unlock: UnlockOptions

    @Option(name: .customLong("slot"), help: "The slot to remove: passphrase, recovery or tpm.")
    var slot: UnlockSlot

    func run() throws {
        let fault = try FaultInjection.fromEnvironment()
        let slots = try StoreKeys.status(forDatabase: store.url).slots
        guard slots.contains(where: { $0.id == slot.rawValue }) else { throw StoreError(KeyError.slotMissing(slot.rawValue)) }
        guard slots.count > 1 else {
            throw CLIError.usage("'\(slot.rawValue)' is the store's last key slot; to destroy every key, use sync-keys shred.")
        }
        let unlocker = try unlock.unlocker(for: store)
        let evicted = try StoreKeys.removeSlot(
            slot.rawValue, forDatabase: store.url, unlocker: unlocker, tpm: unlock.tpm.configuration,
            allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile
        ) { fault?.observe($0) }
        Terminal.print("Removed the \(slot.rawValue) slot of \(store.url.path)\(evicted ? "; its TPM object was evicted" : "").")
    }
}

struct Shred: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Destroy every key slot for good: the database stays unreadable ciphertext.",
        discussion: """
            The key file is overwritten in place and flushed, and the TPM objects of TPM slots are evicted. \
            No passphrase is needed; --yes is. If the TPM cannot be reached, the keys are destroyed all the \
            same and the command exits 10: run it again where the TPM is reachable to evict the object.
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var tpm: TPMOptions

    @Flag(name: .customLong("yes"), help: "Confirm that every key of the store is to be destroyed.")
    var yes = false

    func run() throws {
        guard yes else { throw CLIError.usage("shred destroys every key of \(store.url.path) for good; add --yes to do it.") }
        let fault = try FaultInjection.fromEnvironment()
        let evicted = try StoreKeys.shred(forDatabase: store.url, tpm: tpm.configuration) { fault?.observe($0) }
        let objects = evicted.isEmpty ? "" : "; TPM object \(evicted.joined(separator: ", ")) evicted"
        Terminal.print("Shredded \(store.url.path): no key opens it any more\(objects).")
    }
}
