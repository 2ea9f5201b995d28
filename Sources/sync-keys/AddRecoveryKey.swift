import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys

struct AddRecoveryKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-recovery-key",
        abstract: "Add a recovery code (printed once) that can unlock the store and set a new passphrase.",
        discussion: "The code is printed on standard output, alone on its line. A previous recovery code stops working.")

    @OptionGroup var store: StoreLocation
    @OptionGroup var unlock: UnlockOptions

    func run() throws {
        let unlocker = try unlock.unlocker(for: store)
        let hadRecovery = (try? StoreKeys.status(forDatabase: store.url))?.slots.contains { $0.id == KeyEnvelope.recoverySlot } ?? false
        let code = try StoreKeys.addRecoveryCode(
            forDatabase: store.url, unlocker: unlocker, allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile)
        Terminal.printError("Recovery code for \(store.url.path). It is shown only now: write it down and keep it offline.")
        if hadRecovery { Terminal.printError("The previous recovery code no longer works.") }
        // The one place a secret is printed, on purpose: the code exists nowhere else.
        code.withUnsafeBytes { bytes in _ = Foundation.write(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
        Terminal.write("\n", to: STDOUT_FILENO)
        Terminal.printError("Use it with: sync-keys change-passphrase --recovery --store \(store.path)")
    }
}
