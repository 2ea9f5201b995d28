import Foundation
import SyncKeys
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Every `sync-keys` command through the built executable, on temporary directories.
@Suite struct CommandTests {
    @Test func initCreatesAnEncryptedStoreWithPrivateFilesAndRefusesToOverwrite() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        for name in ["store.db", "store.db.keys"] {
            let mode = try #require(FileManager.default.attributesOfItem(atPath: fixture.directory.path(name))[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(name) is \(String(mode, radix: 8))")
        }
        let header = try Data(contentsOf: fixture.database).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))
        let before = try fixture.files()
        let again = try fixture.run("init", ["--profile", "insecure-test"])
        #expect(again.exitCode == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(try fixture.files() == before)
    }

    @Test func initCreatesAMissingDirectoryWithMode0700() throws {
        let parent = try TemporaryDirectory()
        defer { parent.remove() }
        let database = parent.url.appendingPathComponent("field/unit-7/store.db")
        let result = try CLI.run(
            ["init", "--store", database.path, "--profile", "insecure-test"], environment: ["CIPHERSYNC_PASSPHRASE": makePassphrase()])
        #expect(result.exitCode == 0, "\(result)")
        let mode = try #require(FileManager.default.attributesOfItem(atPath: database.deletingLastPathComponent().path)[.posixPermissions] as? Int)
        #expect(mode == 0o700)
    }

    @Test func statusWorksWithoutThePassphraseAndReportsKeysSlotsAndRotation() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let result = try CLI.run(["status", "--store", fixture.database.path, "--json"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(result.exitCode == 0, "\(result)")
        let status = try JSONDecoder().decode(StoreKeyStatus.self, from: Data(result.stdout.utf8))
        let envelope = try KeyEnvelope.read(from: fixture.envelope)
        #expect(status.encrypted && status.formatVersion == 1 && status.state == "active")
        #expect(status.keyId == envelope.keyId && status.dataKeyCreatedAt == envelope.keyCreatedAt)
        #expect(status.passphraseSetAt == envelope.slots.first?.createdAt)
        #expect(status.slots.map(\.id) == ["passphrase"])
        #expect(status.slots.first?.kdf.algorithm == "scrypt" && status.slots.first?.kdf.n == 1024)
        #expect(status.slots.first?.kdf.meetsFloor == false)
        #expect(!status.rotationDue && !status.rotationInterrupted && status.rotationPeriodDays == 365)

        let text = try CLI.run(["status", "--store", fixture.database.path, "--rotation-period-days", "30"])
        #expect(text.exitCode == 0)
        #expect(text.stdout.contains(envelope.keyId) && text.stdout.contains("period 30 days"))
        #expect(try CLI.run(["status", "--store", fixture.database.path, "--rotation-period-days", "0"]).exitCode == 2)
    }

    @Test func changePassphraseRewrapsOnlyAndTheOldPassphraseStopsWorking() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let database = try Data(contentsOf: fixture.database)
        let newPassphrase = makePassphrase()
        // Both secrets on descriptors of their own (3 and 4), never in argv.
        let result = try CLI.run(
            ["change-passphrase", "--store", fixture.database.path, "--passphrase-fd", "3", "--new-passphrase-fd", "4"],
            descriptors: [3: Array((fixture.passphrase + "\n").utf8), 4: Array((newPassphrase + "\n").utf8)])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try Data(contentsOf: fixture.database) == database)
        #expect(try fixture.run("verify").exitCode == 3)
        let renewed = Fixture(directory: fixture.directory, passphrase: newPassphrase)
        #expect(try renewed.run("verify", ["--json"]).stdout.contains("\"integrity\""))
        #expect(!result.stdout.contains(newPassphrase) && !result.stderr.contains(newPassphrase))
    }

    @Test func bothSecretsCanComeFromOneDescriptorOneLineEach() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let newPassphrase = makePassphrase()
        let result = try CLI.run(
            ["change-passphrase", "--store", fixture.database.path, "--passphrase-fd", "0", "--new-passphrase-fd", "0"],
            stdin: Array("\(fixture.passphrase)\r\n\(newPassphrase)\n".utf8))
        #expect(result.exitCode == 0, "\(result)")
        let file = fixture.directory.url.deletingLastPathComponent().appendingPathComponent("pp-\(UUID().uuidString)")
        try Data((newPassphrase + "\n").utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let status = try CLI.run(["add-recovery-key", "--store", fixture.database.path, "--passphrase-file", file.path])
        #expect(status.exitCode == 0, "\(status)")
    }

    @Test func rotateReencryptsEverythingUnderANewKeyThatAloneOpensTheStore() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 3_000, operations: 300)
        let before = try await Workload.content(of: store)
        try await store.close()
        let old = try fixture.keys()

        let result = try fixture.run("rotate")
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("Re-encrypting: 100%"))
        let new = try fixture.keys()
        #expect(new.dataKey != old.dataKey)
        #expect(try KeyEnvelope.read(from: fixture.envelope).state == .active)
        #expect(result.stdout.contains(try KeyEnvelope.read(from: fixture.envelope).keyId))
        // C23/C26: the old key opens nothing; no side file or scratch file is left behind.
        #expect(try fixture.fileOpened(by: old.dataKey) == nil)
        #expect(Set(try fixture.files().keys) == ["store.db", "store.db.keys", "store.db.lock"])

        let reopened = try await fixture.open()
        #expect(try await Workload.content(of: reopened) == before)
        #expect(try await reopened.withConnection { try $0.integrityCheck() } == ["ok"])
        try await reopened.close()
    }

    @Test func verifyPassesOnASoundStoreAndFailsOnEachAtRestProblem() throws {
        let fixture = try Fixture.create(profile: "pbkdf2-sha512")
        defer { fixture.remove() }
        let json = try fixture.run("verify", ["--json"])
        #expect(json.exitCode == 0, "\(json)")
        let report = try JSONDecoder().decode(StoreVerificationReport.self, from: Data(json.stdout.utf8))
        #expect(report.passed && report.checks.count == 11 && report.pages > 0)
        #expect(Set(report.tables.map(\.name)).isSuperset(of: ["__operations", "__errors", "__config", "__attachments"]))

        try Data("left over".utf8).write(to: fixture.directory.file("store.db.bak"))
        let stray = try fixture.run("verify")
        #expect(stray.exitCode == 1)
        #expect(stray.stdout.contains("FAIL  stray-files") && stray.stdout.contains("store.db.bak"))
        try FileManager.default.removeItem(at: fixture.directory.file("store.db.bak"))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: fixture.database.path)
        let modes = try fixture.run("verify")
        #expect(modes.exitCode == 1 && modes.stdout.contains("FAIL  file-modes"))
    }

    @Test func verifyFailsTheFloorCheckForTheTestProfile() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let result = try fixture.run("verify")
        #expect(result.exitCode == 1)
        #expect(result.stdout.contains("FAIL  kdf-floor") && result.stdout.contains("PASS  integrity"))
    }

    @Test func addRecoveryKeyPrintsACodeOnceThatCanSetANewPassphrase() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let database = try Data(contentsOf: fixture.database)
        let added = try fixture.run("add-recovery-key")
        #expect(added.exitCode == 0, "\(added)")
        let code = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.range(of: "^([A-Z2-7]{4}-){7}[A-Z2-7]{4}$", options: .regularExpression) != nil)
        #expect(!(try String(contentsOf: fixture.envelope, encoding: .utf8)).contains(code.replacingOccurrences(of: "-", with: "")))
        let status = try fixture.run("status", ["--json"])
        #expect(try JSONDecoder().decode(StoreKeyStatus.self, from: Data(status.stdout.utf8)).slots.map(\.id) == ["passphrase", "recovery"])

        // The passphrase is lost: the code (typed in lower case, without dashes) sets a new one.
        let newPassphrase = makePassphrase()
        let typed = code.lowercased().replacingOccurrences(of: "-", with: "")
        let recovered = try CLI.run(
            ["change-passphrase", "--recovery", "--store", fixture.database.path],
            environment: ["CIPHERSYNC_PASSPHRASE": typed, "CIPHERSYNC_NEW_PASSPHRASE": newPassphrase])
        #expect(recovered.exitCode == 0, "\(recovered)")
        #expect(try Data(contentsOf: fixture.database) == database)
        #expect(try fixture.run("rotate").exitCode == 3)
        let renewed = Fixture(directory: fixture.directory, passphrase: newPassphrase)
        #expect(try renewed.run("rotate").exitCode == 0)
        // A data-key rotation leaves the recovery slot working.
        let again = try CLI.run(
            ["change-passphrase", "--recovery", "--store", fixture.database.path],
            environment: ["CIPHERSYNC_PASSPHRASE": code, "CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()])
        #expect(again.exitCode == 0, "\(again)")
    }

    @Test func aWrongOrMalformedRecoveryCodeChangesNothing() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        #expect(try fixture.run("add-recovery-key").exitCode == 0)
        let before = try fixture.files()
        let wrongCode = try CLI.run(
            ["change-passphrase", "--recovery", "--store", fixture.database.path],
            environment: ["CIPHERSYNC_PASSPHRASE": "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH", "CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()])
        #expect(wrongCode.exitCode == 3, "\(wrongCode)")
        let malformed = try CLI.run(
            ["change-passphrase", "--recovery", "--store", fixture.database.path],
            environment: ["CIPHERSYNC_PASSPHRASE": fixture.passphrase, "CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()])
        #expect(malformed.exitCode == 2, "\(malformed)")
        #expect(try fixture.files() == before)
    }
}
