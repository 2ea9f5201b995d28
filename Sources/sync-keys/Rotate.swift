import ArgumentParser
import Foundation
@_spi(Testing) import SyncCLI
import SyncKeyMaintenance

struct Rotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-encrypt the store under a new data key.",
        discussion: """
            Close every app using the store first. Needs free space for a second copy of the \
            database. Safe to interrupt: the next open or the next rotate finishes or rolls back.
            """)

    @OptionGroup var store: StoreLocation
    @OptionGroup var unlock: UnlockOptions

    func run() throws {
        let fault = try FaultInjection.fromEnvironment()
        let damage = try CopyDamage.fromEnvironment(database: store.url)
        let unlocker = try unlock.unlocker(for: store)
        let progress = ProgressDisplay(label: "Re-encrypting")
        let result = try StoreKeys.rotateDataKey(
            forDatabase: store.url, unlocker: unlocker, allowInsecureProfile: KeyProfileOptions.allowsInsecureProfile
        ) { event in
            damage?.observe(event)
            fault?.observe(event)
            if case .progress(let done, let total) = event { progress.update(done: done, total: total) }
        }
        progress.finish()
        switch result.interrupted {
        case .completed:
            Terminal.print("Finished an interrupted rotation of \(store.url.path): the data key is now \(result.keyId).")
            return
        case .rolledBack:
            Terminal.printError("An interrupted rotation was rolled back first.")
        case nil:
            break
        }
        Terminal.print("Rotated the data key of \(store.url.path): \(result.previousKeyId) → \(result.keyId), \(result.pages) pages re-encrypted.")
    }
}
