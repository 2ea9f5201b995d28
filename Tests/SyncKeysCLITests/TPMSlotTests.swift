import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTPM
import SyncTestSupport
import Testing

/// A TPM slot opens the store on its own TPM, through the CLI and the library alike, and keeps
/// working across a data-key rotation.
@Suite struct TPMSlotUnlockTests {
    @Test func theTPMSlotOpensTheStoreAndSurvivesARotation() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        #expect(try !store.opens("tpm"), "no TPM slot yet")
        #expect(try store.unlockStatus("tpm").code == 4, "no TPM slot: missing key material")
        let binding = try store.addSlot()
        #expect(try store.tpm.persistentHandles().contains(binding.handle))
        let slot = try #require(try store.status().slots.first { $0.id == "tpm" })
        #expect(slot.tpm == binding && !binding.pin && binding.pcrs.isEmpty && slot.kdf.algorithm == "tpm2-sealed")
        #expect(try store.opens("tpm") && store.opens("passphrase"))

        // The library unlocks the same data key through the TPM as through the passphrase.
        let envelope = try KeyEnvelope.read(from: store.fixture.envelope)
        let throughTPM = try envelope.unlockKeys(with: TPMSlotUnlocker(configuration: store.tpm.tcti, pin: nil))
        #expect(throughTPM.dataKey == (try store.fixture.keys().dataKey))

        let oldKey = try store.fixture.keys().dataKey
        let rotated = try store.run("rotate", ["--unlock", "tpm"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(rotated.exitCode == 0, "\(rotated)")
        #expect(try store.fixture.keys().dataKey != oldKey)
        #expect(try store.opens("tpm") && store.opens("passphrase"), "both slots open the rotated store")
    }

    @Test func theStoreOpensThroughItsTPMSlotAndFinishesAnInterruptedRotation() async throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let opened = try await store.fixture.open()
        try await Workload.fill(opened, rows: 300, operations: 30)
        let content = try await Workload.content(of: opened)
        try await opened.close()
        try store.addSlot(pin: "5150")
        let killed = try store.run(
            "rotate", ["--unlock", "tpm", "--pin-fd", "3"], pin: "5150",
            environment: ["CIPHERSYNC_PASSPHRASE": nil, FaultHook.variable: "renamed"])
        #expect(killed.wasKilled, "\(killed)")
        try store.tpm.flushTransients()
        #expect(try KeyEnvelope.read(from: store.fixture.envelope).state == .rotating)

        let unlocker = TPMSlotUnlocker(configuration: store.tpm.tcti, pin: SecretBytes(Array("5150".utf8)))
        let reopened = try await SQLiteStore.open(
            at: store.fixture.database, encryption: .slot(unlocker), options: StoreOptions(allowInsecureKeyProfile: true))
        #expect(try await Workload.content(of: reopened) == content, "the TPM slot opens the store and the rotation is finished")
        try await reopened.close()
        #expect(try KeyEnvelope.read(from: store.fixture.envelope).state == .active)

        let wrong = TPMSlotUnlocker(configuration: store.tpm.tcti, pin: SecretBytes(Array("0000".utf8)))
        await #expect(throws: StoreError.wrongPIN) {
            _ = try await SQLiteStore.open(at: store.fixture.database, encryption: .slot(wrong), options: StoreOptions())
        }
        let nowhere = store.fixture.directory.file("absent.db")
        await #expect(throws: StoreError.storeNotFound) {
            _ = try await SQLiteStore.open(at: nowhere, encryption: .slot(unlocker), options: StoreOptions(createIfMissing: true))
        }
    }

    @Test func aStoreMovedToAnotherTPMOpensOnlyByItsPassphrase() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        try store.addSlot()
        let other = try SoftwareTPM.start()
        defer { other.stop() }
        let moved = try store.unlockStatus("tpm", tpm: other)
        #expect(moved.code == 10 && !moved.opened, "\(moved)")
        #expect(moved.stderr.contains("does not hold the key"))
        #expect(try store.opens("passphrase", tpm: other))

        // Without its passphrase slot, a moved copy opens by nothing.
        let removed = try store.run("remove-slot", ["--slot", "passphrase", "--unlock", "tpm"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(removed.exitCode == 0, "\(removed)")
        #expect(try store.opens("tpm"), "the TPM slot still opens it on its own TPM")
        #expect(try store.unlockStatus("passphrase").code == 4, "no passphrase slot any more")
        #expect(try store.unlockStatus("tpm", tpm: other).code == 10)
    }

    @Test func anUnreachableTPMIsItsOwnExitCodeAndChangesNothing() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let refusing = try RefusingPort()
        let before = try store.fixture.files()
        let result = try store.run("add-tpm-slot", ["--tcti", "swtpm:host=127.0.0.1,port=\(refusing.port)"])
        #expect(result.exitCode == 10 && result.stderr.contains("cannot reach the TPM"), "\(result)")
        #expect(try store.fixture.files() == before, "nothing changed")
        withExtendedLifetime(refusing) {}
    }

    @Test func removingTheLastSlotIsRefused() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let before = try store.fixture.files()
        let result = try store.run("remove-slot", ["--slot", "passphrase"])
        #expect(result.exitCode == 2 && result.stderr.contains("last key slot"), "\(result)")
        #expect(try store.fixture.files() == before)
        let missing = try store.run("remove-slot", ["--slot", "recovery"])
        #expect(missing.exitCode == 4 && missing.stderr.contains("no 'recovery' key slot"), "\(missing)")
    }
}

/// A PIN authorizes the slot, and the TPM's dictionary-attack lockout bounds wrong PINs: each is
/// exit code 8 until the configured count, then the TPM refuses even the right PIN (exit 9)
/// while the passphrase still opens the store.
@Suite struct TPMPINTests {
    static let pin = "482913"

    @Test func wrongPINsLockTheTPMOutAfterTheConfiguredTries() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let setup = try store.tpm.tool(
            "tpm2_dictionarylockout", ["--setup-parameters", "--max-tries=4", "--recovery-time=600", "--lockout-recovery-time=900"])
        try #require(setup.status == 0, "\(setup.error)")
        let binding = try store.addSlot(pin: Self.pin)
        #expect(binding.pin)
        let lockout = try #require(try store.status().tpmLockout)
        #expect(lockout.failedTries == 0 && lockout.maxTries == 4 && lockout.recoverySeconds == 600 && lockout.lockoutRecoverySeconds == 900)

        #expect(try store.opens("tpm", pin: Self.pin))
        for attempt in 1...4 {
            let wrong = try store.unlockStatus("tpm", pin: "000000")
            #expect(wrong.code == 8 && wrong.stderr.contains("The PIN is wrong."), "attempt \(attempt): \(wrong)")
            #expect(try store.status().tpmLockout?.failedTries == UInt32(attempt), "the TPM counted attempt \(attempt)")
        }
        let locked = try store.unlockStatus("tpm", pin: Self.pin)
        #expect(locked.code == 9 && locked.stderr.contains("locked out"), "\(locked)")
        #expect(try store.opens("passphrase"), "the passphrase is not under the TPM's lockout")

        let cleared = try store.tpm.tool("tpm2_dictionarylockout", ["--clear-lockout"])
        try #require(cleared.status == 0, "\(cleared.error)")
        #expect(try store.opens("tpm", pin: Self.pin), "the right PIN opens it once the lockout is cleared")
    }

    @Test func aPINComesOnlyFromAFileADescriptorOrATerminal() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        try store.addSlot(pin: Self.pin)
        let noSource = try store.run("verify", ["--unlock", "tpm"], environment: ["CIPHERSYNC_PASSPHRASE": Self.pin])
        #expect(noSource.exitCode == 2 && noSource.stderr.contains("--pin-file or --pin-fd"), "\(noSource)")
        let onArgv = try store.run("verify", ["--unlock", "tpm", "--pin", Self.pin])
        #expect(onArgv.exitCode == 2, "\(onArgv)")
        #expect(try store.status().tpmLockout?.failedTries == 0, "nothing reached the TPM")

        let envelope = try Data(contentsOf: store.fixture.envelope)
        #expect(try markerHits([Self.pin], in: [store.fixture.envelope]).isEmpty)
        let digest = try KeyDerivation.sha256(Array(Self.pin.utf8))
        #expect(!contains(Array(envelope), digest), "the PIN's auth value is in the TPM only")
    }

    @Test func aTooShortPINIsRefusedAndChangesNothing() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let before = try store.fixture.files()
        let result = try store.run("add-tpm-slot", ["--pin", "--new-pin-fd", "3"], pin: "12")
        #expect(result.exitCode == 2 && result.stderr.contains("A PIN has 4 to 64 characters."), "\(result)")
        #expect(try store.fixture.files() == before)
        #expect(try store.tpm.persistentHandles().isEmpty, "no TPM object was made")
    }
}

/// A slot bound to PCR 7 opens the store only while PCR 7 holds the value it had when the slot
/// was made; the passphrase is not bound to it.
@Suite struct TPMPCRPolicyTests {
    @Test func extendingTheBoundPCRMakesTheSlotRefuse() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let binding = try store.addSlot(pcrs: "7")
        #expect(binding.pcrs == [7])
        #expect(try store.opens("tpm"))
        let digest = String(repeating: "ab", count: 32)
        try #require(try store.tpm.tool("tpm2_pcrextend", ["16:sha256=\(digest)"]).status == 0)
        #expect(try store.opens("tpm"), "another PCR does not matter")
        try #require(try store.tpm.tool("tpm2_pcrextend", ["7:sha256=\(digest)"]).status == 0)
        let refused = try store.unlockStatus("tpm")
        #expect(refused.code == 10 && refused.stderr.contains("PCR policy"), "\(refused)")
        #expect(try store.opens("passphrase"))

        // A slot made now, with a PIN too, is bound to the new value.
        try store.addSlot(pin: "7391", pcrs: "7")
        #expect(try store.opens("tpm", pin: "7391"))
        #expect(try store.unlockStatus("tpm", pin: "0000").code == 8)
        #expect(try store.tpm.persistentHandles() == [try #require(try store.status().slots.first { $0.id == "tpm" }?.tpm?.handle)])
    }
}

/// The TPM commands' options are checked before anything is read or changed.
@Suite struct TPMOptionValidationTests {
    @Test(arguments: [
        (["--pcrs", "24"], "--pcrs takes PCR indexes 0 to 23"),
        (["--pcrs", "7,x"], "--pcrs takes PCR indexes 0 to 23"),
        (["--new-pin-fd", "3"], "--new-pin-file and --new-pin-fd need --pin."),
        (["--pin-file", "/nonexistent", "--pin-fd", "3"], "Give the PIN with --pin-file or --pin-fd, not both."),
    ])
    func badOptionsAreUsageErrors(_ arguments: [String], _ message: String) throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let before = try fixture.files()
        let result = try fixture.run("add-tpm-slot", arguments, environment: ["CIPHERSYNC_TCTI": "swtpm:host=127.0.0.1,port=1"])
        #expect(result.exitCode == 2 && result.stderr.contains(message), "\(result)")
        #expect(try fixture.files() == before)
    }
}
