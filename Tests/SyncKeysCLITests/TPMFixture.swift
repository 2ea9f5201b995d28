import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncTestSupport
import Testing

/// A store made by `sync-keys init` and a software TPM of its own (a fresh state per test).
final class TPMFixture {
    let fixture: Fixture
    let tpm: SoftwareTPM
    /// The recovery code made by ``addRecoveryCode()`` (kept in memory only).
    private(set) var recoveryCode: String?

    /// Whether ``remove()`` stops the TPM too.
    private let ownsTPM: Bool

    /// A fixture over `fixture` and `tpm`; ``remove()`` stops the TPM only if `ownsTPM`.
    init(fixture: Fixture, tpm: SoftwareTPM, ownsTPM: Bool) {
        self.fixture = fixture
        self.tpm = tpm
        self.ownsTPM = ownsTPM
    }

    /// A new store, with a new TPM or on `tpm` (which the caller stops).
    static func make(on tpm: SoftwareTPM? = nil) throws -> TPMFixture {
        TPMFixture(fixture: try Fixture.create(), tpm: try tpm ?? SoftwareTPM.start(), ownsTPM: tpm == nil)
    }

    /// Runs `sync-keys <command> --store <database> …` against this TPM, the passphrase in the
    /// environment, `pin` (if any) on descriptor 3 for `--pin-fd 3` / `--new-pin-fd 3`.
    func run(
        _ command: String, _ arguments: [String] = [], pin: String? = nil, environment: [String: String?] = [:], tpm other: SoftwareTPM? = nil
    ) throws -> ToolResult {
        var env = fixture.passphraseEnvironment
        env["CIPHERSYNC_TCTI"] = (other ?? tpm).tcti
        for (key, value) in environment { env[key] = value }
        let descriptors: [Int32: [UInt8]] = pin.map { [3: Array("\($0)\n".utf8)] } ?? [:]
        return try CLI.run([command, "--store", fixture.database.path] + arguments, environment: env, descriptors: descriptors)
    }

    /// Adds a TPM slot (with `pin` when given, bound to `pcrs`), requiring success.
    @discardableResult
    func addSlot(pin: String? = nil, pcrs: String? = nil) throws -> KeyEnvelope.TPMBinding {
        var arguments = pin == nil ? [] : ["--pin", "--new-pin-fd", "3"]
        if let pcrs { arguments += ["--pcrs", pcrs] }
        let result = try run("add-tpm-slot", arguments, pin: pin)
        try #require(result.exitCode == 0, "\(result)")
        return try #require(try KeyEnvelope.read(from: fixture.envelope).slots.first { $0.id == "tpm" }?.tpm)
    }

    /// Unlocks the store through `slot` with `verify --json` (no passphrase in the environment
    /// unless the slot needs it) and returns the exit code: 0 or 1 (some at-rest check failed, as
    /// the test profile's KDF does) mean the store opened and its integrity check passed.
    func unlockStatus(_ slot: String, pin: String? = nil, tpm other: SoftwareTPM? = nil) throws -> (code: Int32?, opened: Bool, stderr: String) {
        var arguments = ["--json", "--unlock", slot]
        var environment: [String: String?] = [:]
        switch slot {
        case "tpm":
            environment["CIPHERSYNC_PASSPHRASE"] = .some(nil)
            if pin != nil { arguments += ["--pin-fd", "3"] }
        case "recovery":
            environment["CIPHERSYNC_PASSPHRASE"] = .some(recoveryCode)
        default:
            break
        }
        let result = try run("verify", arguments, pin: pin, environment: environment, tpm: other)
        var opened = false
        if result.exitCode == 0 || result.exitCode == 1,
            let report = try? JSONDecoder().decode(StoreVerificationReport.self, from: Data(result.stdout.utf8))
        {
            opened = report.checks.contains { $0.name == "integrity" && $0.passed }
        }
        return (result.exitCode, opened, result.stderr)
    }

    /// Whether the store opens through `slot`.
    func opens(_ slot: String, pin: String? = nil, tpm other: SoftwareTPM? = nil) throws -> Bool {
        try unlockStatus(slot, pin: pin, tpm: other).opened
    }

    /// Adds a recovery code and keeps it for ``opens(_:pin:tpm:)``.
    func addRecoveryCode() throws {
        let result = try run("add-recovery-key")
        try #require(result.exitCode == 0, "\(result)")
        recoveryCode = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The store's key status (`status --json`).
    func status() throws -> StoreKeyStatus {
        let result = try run("status", ["--json"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        try #require(result.exitCode == 0, "\(result)")
        return try JSONDecoder().decode(StoreKeyStatus.self, from: Data(result.stdout.utf8))
    }

    func remove() {
        fixture.remove()
        if ownsTPM { tpm.stop() }
    }
}
