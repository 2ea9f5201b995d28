import ArgumentParser
import Foundation
import SyncCLI
import SyncKeyMaintenance
import SyncKeys
import SyncStore

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a new encrypted store and its key file.",
        discussion: "Creates the directory (mode 0700) if needed. The passphrase is asked twice on a terminal.")

    @OptionGroup var store: StoreLocation
    @OptionGroup var profile: KeyProfileOptions
    @OptionGroup var passphrase: PassphraseOptions

    func run() async throws {
        let url = store.url
        let envelope = KeyEnvelope.url(forDatabase: url)
        for file in [url, envelope] where FileManager.default.fileExists(atPath: file.path) {
            throw StoreError.storeAlreadyExists(file.path)
        }
        let directory = url.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let secret = try passphrase.read(prompt: "New passphrase for \(store.name): ", confirm: true)
        let opened = try await SQLiteStore.open(
            at: url, encryption: .passphrase(secret),
            options: StoreOptions(
                createIfMissing: true, keyProfile: profile.profile,
                allowInsecureKeyProfile: KeyProfileOptions.allowsInsecureProfile))
        try await opened.close()
        let status = try StoreKeys.status(forDatabase: url)
        Terminal.print("Created an encrypted store at \(url.path) (data key \(status.keyId ?? "?"), \(profile.profile.name) key derivation).")
    }
}
