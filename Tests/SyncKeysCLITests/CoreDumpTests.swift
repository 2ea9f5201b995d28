import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// What a core dump of a tool shows once its work is done: the tools stop themselves when their
/// store is closed and its lock released (`CIPHERSYNC_PAUSE_STEP=closed`), `gcore` dumps them, and
/// the dump is searched for every secret they handled — the passphrase (UTF-8 and UTF-16, NFC and
/// NFD), a new passphrase, the recovery code, the data keys (bytes and hex): none may be there.
///
/// The passphrases hold letters whose NFC and NFD forms differ and are given in NFD, so the
/// normalisation before the key derivation has work to do.
@Suite(.serialized) struct CoreDumpTests {
    @Test func verifyLeavesNoSecretInItsMemory() async throws {
        let store = try SecretStore.make()
        defer { store.fixture.remove() }
        let secrets = try store.secrets()
        let (dump, result) = try await dumpAtClose(CLI, ["verify", "--store", store.path], environment: store.passphraseEnvironment)
        #expect(result.exitCode == 1, "the test profile fails kdf-floor, everything else passes: \(result)")
        #expect(result.stdout.contains("PASS  integrity"))
        expectAbsent(secrets, from: dump, path: store.path)
    }

    @Test func rotateLeavesNoSecretInItsMemory() async throws {
        let store = try SecretStore.make()
        defer { store.fixture.remove() }
        let oldKey = try store.dataKeyForms(named: "old data key")
        let file = try store.passphraseFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let (dump, result) = try await dumpAtClose(CLI, ["rotate", "--store", store.path, "--passphrase-file", file.path])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("Rotated the data key"))
        expectAbsent(try store.secrets() + oldKey, from: dump, path: store.path)
    }

    @Test func changePassphraseLeavesNeitherPassphraseInItsMemory() async throws {
        let store = try SecretStore.make()
        defer { store.fixture.remove() }
        let secrets = try store.secrets()
        let newPassphrase = makeUnicodePassphrase()
        let (dump, result) = try await dumpAtClose(
            CLI, ["change-passphrase", "--store", store.path, "--passphrase-fd", "3"],
            environment: ["CIPHERSYNC_NEW_PASSPHRASE": newPassphrase.decomposedStringWithCanonicalMapping],
            descriptors: [3: Array((store.passphrase.decomposedStringWithCanonicalMapping + "\n").utf8)])
        #expect(result.exitCode == 0, "\(result)")
        let renewed = Fixture(directory: store.fixture.directory, passphrase: newPassphrase)
        #expect(try renewed.keys().dataKey.count == 32, "the new passphrase unlocks the store")
        expectAbsent(secrets + CoreDump.forms(of: newPassphrase, named: "new passphrase"), from: dump, path: store.path)
    }

    @Test func changePassphraseWithTheRecoveryCodeLeavesNoSecretInItsMemory() async throws {
        let store = try SecretStore.make()
        defer { store.fixture.remove() }
        let secrets = try store.secrets()
        let newPassphrase = makeUnicodePassphrase()
        let file = try store.fixture.directory.url.deletingLastPathComponent()
            .appendingPathComponent("new-\(UUID().uuidString)").writingSecret(newPassphrase.decomposedStringWithCanonicalMapping)
        defer { try? FileManager.default.removeItem(at: file) }
        let (dump, result) = try await dumpAtClose(
            CLI, ["change-passphrase", "--recovery", "--store", store.path, "--new-passphrase-file", file.path],
            environment: ["CIPHERSYNC_PASSPHRASE": store.recoveryCode.lowercased()])
        #expect(result.exitCode == 0, "\(result)")
        let renewed = Fixture(directory: store.fixture.directory, passphrase: newPassphrase)
        #expect(try renewed.keys().dataKey.count == 32, "the new passphrase unlocks the store")
        expectAbsent(secrets + CoreDump.forms(of: newPassphrase, named: "new passphrase"), from: dump, path: store.path)
    }

    @Test func addRecoveryKeyLeavesNeitherCodeInItsMemory() async throws {
        let store = try SecretStore.make()
        defer { store.fixture.remove() }
        let secrets = try store.secrets()
        let (dump, result) = try await dumpAtClose(
            CLI, ["add-recovery-key", "--store", store.path], environment: store.passphraseEnvironment)
        #expect(result.exitCode == 0, "\(result)")
        let code = try #require(result.stdout.split(separator: "\n").first.map(String.init))
        #expect(code.count == 39 && code != store.recoveryCode)
        expectAbsent(secrets + SecretStore.codeForms(code, named: "new recovery code"), from: dump, path: store.path)
    }

    @Test func todoHoldsNoSecretOnceItsStoreIsClosed() async throws {
        let device = try TodoStore(prefix: "todo-core")
        defer { device.directory.remove() }
        let added = try await device.run(["add", "Buy milk"])
        try #require(added.exitCode == 0, "\(added)")
        let (dump, result) = try await dumpAtClose(todo, device.arguments + ["list"], environment: device.environment)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("Buy milk"))
        expectAbsent(try device.secrets(), from: dump, path: device.path)
    }
}

/// The built `todo`, with the insecure test profile allowed.
let todo = BuiltTool("todo", environment: ["CIPHERSYNC_ALLOW_INSECURE_PROFILE": "1"])

/// A `todo` store in a directory of its own, under a Unicode passphrase (given in NFD).
struct TodoStore {
    let directory: TemporaryDirectory
    let passphrase = makeUnicodePassphrase()
    var path: String { directory.path("todo.db") }
    /// The device options of every run (no server).
    var arguments: [String] { ["--store", path, "--server", "http://127.0.0.1:1", "--profile", "insecure-test"] }
    var environment: [String: String?] { ["CIPHERSYNC_PASSPHRASE": passphrase.decomposedStringWithCanonicalMapping] }

    init(prefix: String) throws { directory = try TemporaryDirectory(prefix: prefix) }

    /// `todo <device options> <arguments>` to its end.
    func run(_ arguments: [String]) async throws -> ToolResult {
        try await todo.run(self.arguments + arguments, environment: environment)
    }

    /// The store's keys, unlocked.
    func keys() throws -> UnlockedKeys {
        try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: URL(fileURLWithPath: path)))
            .unlockKeys(secret: SecretBytes(Array(passphrase.utf8)), allowInsecureProfile: true)
    }

    /// The passphrase's forms and the data key's.
    func secrets() throws -> [(name: String, bytes: [UInt8])] {
        CoreDump.forms(of: passphrase, named: "passphrase") + CoreDump.forms(ofKey: try keys().dataKey.bytes, named: "data key")
    }
}

/// A passphrase with letters whose NFC and NFD forms differ (and a Hangul syllable).
func makeUnicodePassphrase() -> String {
    let letters = ["é", "Å", "ñ", "ü", "ǖ", "ṩ", "한", "ö"]
    var generator = SystemRandomNumberGenerator()
    var text = makePassphrase()
    for letter in letters.shuffled(using: &generator).prefix(4) {
        text.insert(contentsOf: letter, at: text.index(text.startIndex, offsetBy: Int.random(in: 0...text.count, using: &generator)))
    }
    return text
}

/// Runs `tool` with the pause hook, dumps the process once it has stopped itself, then lets it
/// finish.
///
/// Waiting for the tool, `gcore` and reaping block; they run on a thread of their own, so the
/// test's cooperative threads stay free for the suites running meanwhile.
///
/// - Returns: The dump and what the tool wrote and exited with.
func dumpAtClose(
    _ tool: BuiltTool, _ arguments: [String], environment: [String: String?] = [:], descriptors: [Int32: [UInt8]] = [:]
) async throws -> (CoreDump, ToolResult) {
    var env = environment
    env["CIPHERSYNC_PAUSE_STEP"] = "closed"
    let child = try tool.start(arguments, environment: env, descriptors: descriptors)
    return try await onOwnThread { try dumpWhenStopped(child) }
}

/// Waits until `child` stops itself, dumps it, lets it go on and waits for its end.
private func dumpWhenStopped(_ child: RunningTool) throws -> (CoreDump, ToolResult) {
    if let ended = child.waitUntilStopped() {
        throw CoreDumpError(message: "the tool ended without pausing: \(ended)")
    }
    let scratch = try TemporaryDirectory(prefix: "core")
    defer { scratch.remove() }
    let dump: CoreDump
    do {
        dump = try CoreDump.take(of: child.pid, in: scratch.url)
    } catch {
        child.kill()
        _ = child.wait()
        throw error
    }
    child.resume()
    return (dump, child.wait())
}

/// Expects none of `secrets` in `dump`, and (so that an empty search proves something) the
/// store's path, which the process had in its arguments.
func expectAbsent(
    _ secrets: [(name: String, bytes: [UInt8])], from dump: CoreDump, path: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(dump.occurrences(of: Array(path.utf8)) > 0, "the dump holds the process's memory", sourceLocation: sourceLocation)
    for secret in secrets {
        // Counted first, so a failure names the secret and never prints its bytes.
        let hits = dump.occurrences(of: secret.bytes)
        #expect(hits == 0, "\(secret.name): \(hits) copies in the core dump", sourceLocation: sourceLocation)
    }
}

/// A store made by `sync-keys init` with a Unicode passphrase (given in NFD) and a recovery code.
struct SecretStore {
    let fixture: Fixture
    let recoveryCode: String
    var passphrase: String { fixture.passphrase }
    var path: String { fixture.database.path }
    var passphraseEnvironment: [String: String?] { ["CIPHERSYNC_PASSPHRASE": passphrase.decomposedStringWithCanonicalMapping] }

    static func make() throws -> SecretStore {
        let fixture = try Fixture.create(passphrase: makeUnicodePassphrase())
        let added = try fixture.run(
            "add-recovery-key", environment: ["CIPHERSYNC_PASSPHRASE": fixture.passphrase.decomposedStringWithCanonicalMapping])
        try #require(added.exitCode == 0, "\(added)")
        let code = try #require(added.stdout.split(separator: "\n").first.map(String.init))
        return SecretStore(fixture: fixture, recoveryCode: code)
    }

    /// The passphrase in a 0600 file beside the store's directory (in NFD).
    func passphraseFile() throws -> URL {
        try fixture.directory.url.deletingLastPathComponent().appendingPathComponent("pp-\(UUID().uuidString)")
            .writingSecret(passphrase.decomposedStringWithCanonicalMapping)
    }

    /// The forms of the current data key.
    func dataKeyForms(named name: String) throws -> [(name: String, bytes: [UInt8])] {
        CoreDump.forms(ofKey: try fixture.keys().dataKey.bytes, named: name)
    }

    /// Every secret of the store as it is now: the passphrase, the recovery code, the data key.
    func secrets() throws -> [(name: String, bytes: [UInt8])] {
        CoreDump.forms(of: passphrase, named: "passphrase") + Self.codeForms(recoveryCode, named: "recovery code")
            + (try dataKeyForms(named: "data key"))
    }

    /// A recovery code as printed and without its dashes.
    static func codeForms(_ code: String, named name: String) -> [(name: String, bytes: [UInt8])] {
        CoreDump.forms(of: code, named: name) + CoreDump.forms(of: code.replacingOccurrences(of: "-", with: ""), named: "\(name) (compact)")
    }
}

extension URL {
    /// Writes `secret` and a newline to this file (mode 0600).
    func writingSecret(_ secret: String) throws -> URL {
        guard FileManager.default.createFile(atPath: path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        return self
    }
}

extension SecretBytes {
    /// A copy of the bytes, for the test's own searches.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
