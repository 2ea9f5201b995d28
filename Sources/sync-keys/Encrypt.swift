import ArgumentParser
import Foundation
@_spi(Testing) import SyncCLI
import SyncKeyMaintenance

struct Encrypt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a plain store (export into a new encrypted file, then replace).",
        discussion: """
            The plaintext file is overwritten and removed, and its side files are gone. If a previous \
            run was interrupted, run this again with the same passphrase to finish it.
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var profile: KeyProfileOptions
    @OptionGroup var passphrase: PassphraseOptions

    func run() throws {
        let fault = try FaultInjection.fromEnvironment()
        let damage = try CopyDamage.fromEnvironment(database: store.url)
        let secret = try passphrase.read(prompt: "New passphrase for \(store.name): ", confirm: true)
        let progress = ProgressDisplay(label: "Encrypting")
        let result = try StoreKeys.encryptStore(
            atDatabase: store.url, passphrase: secret, profile: profile.profile,
            allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile
        ) { event in
            damage?.observe(event)
            fault?.observe(event)
            if case .progress(let done, let total) = event { progress.update(done: done, total: total) }
        }
        progress.finish()
        Terminal.print(
            "\(result.resumed ? "Finished encrypting" : "Encrypted") \(store.url.path) (data key \(result.keyId), \(result.pages) pages); the plaintext file is gone."
        )
    }
}
