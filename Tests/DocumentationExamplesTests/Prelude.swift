import CipherSync
import Foundation

// The names the documents' examples leave to the app: a passphrase from the keychain or a prompt, the
// backend's URL, the context the app made earlier, its own views. The examples are compiled, never
// run, so these only need their types; reading one of the computed ones would stop the test process.

let passphrase = SecretBytes(Array(repeating: 0x61, count: 16))
let oldPassphrase = passphrase
let newPassphrase = SecretBytes(Array(repeating: 0x62, count: 16))
let serverURL = URL(fileURLWithPath: "/")
let savedInstallationID = "installation id saved by the app"
let database = URL(fileURLWithPath: "store.db")
var context: SyncContext { preconditionFailure("the examples are compiled, not run") }
nonisolated(unsafe) var badge = 0
nonisolated(unsafe) var needsAttention: Any = ()
func render<Items>(_ items: Items) {}
func log<Event>(_ event: Event) {}
