import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance

struct ChangePassphrase: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-passphrase",
        abstract: "Set a new passphrase (re-wraps the key; the database file is not touched).",
        discussion: """
            With --recovery, the store is unlocked with its recovery code (read like the passphrase: \
            --passphrase-file, --passphrase-fd, CIPHERSYNC_PASSPHRASE or a prompt).
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var newPassphrase: NewPassphraseOptions

    @Flag(name: .customLong("recovery"), help: "Unlock with the recovery code instead of the passphrase.")
    var recovery = false

    func run() throws {
        let insecure = KeyProfileOptions.allowsInsecureProfile
        let current = try passphrase.read(
            prompt: recovery ? "Recovery code for \(store.name): " : "Current passphrase for \(store.name): ")
        let new = try newPassphrase.read(prompt: "New passphrase for \(store.name): ")
        if recovery {
            try StoreKeys.changePassphrase(forDatabase: store.url, recoveryCode: current, to: new, allowInsecureProfile: insecure)
        } else {
            try StoreKeys.changePassphrase(forDatabase: store.url, from: current, to: new, allowInsecureProfile: insecure)
        }
        Terminal.print("Changed the passphrase of \(store.url.path); the old passphrase no longer unlocks it.")
    }
}
