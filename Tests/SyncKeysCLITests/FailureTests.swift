import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// Bad input and hostile conditions: each gives its exit code and changes nothing.
@Suite struct FailureTests {
    static let passphraseCommands = ["rotate", "verify", "add-recovery-key"]

    @Test(arguments: passphraseCommands)
    func aWrongPassphraseExits3AndChangesNothing(_ command: String) throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let before = try fixture.files()
        let result = try fixture.run(command, environment: ["CIPHERSYNC_PASSPHRASE": makePassphrase()])
        #expect(result.exitCode == 3, "\(result)")
        #expect(result.stderr == "sync-keys: The passphrase is wrong.\n")
        #expect(try fixture.files() == before)
    }

    @Test func aWrongCurrentPassphraseForChangePassphraseExits3() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let before = try fixture.files()
        let result = try fixture.run(
            "change-passphrase", environment: ["CIPHERSYNC_PASSPHRASE": makePassphrase(), "CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()])
        #expect(result.exitCode == 3, "\(result)")
        #expect(try fixture.files() == before)
    }

    @Test func emptyAndOverLongPassphrasesExit2WhereverTheyComeFrom() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let before = try fixture.files()
        let long = String(repeating: "p", count: 1_025)
        let file = fixture.directory.url.deletingLastPathComponent().appendingPathComponent("pp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let cases: [(String, [String], [String: String?], [Int32: [UInt8]])] = [
            ("empty env", [], ["CIPHERSYNC_PASSPHRASE": ""], [:]),
            ("long env", [], ["CIPHERSYNC_PASSPHRASE": long], [:]),
            ("empty fd", ["--passphrase-fd", "3"], ["CIPHERSYNC_PASSPHRASE": nil], [3: Array("\n".utf8)]),
            ("long fd", ["--passphrase-fd", "3"], ["CIPHERSYNC_PASSPHRASE": nil], [3: Array((long + "\n").utf8)]),
            ("long file", ["--passphrase-file", file.path], ["CIPHERSYNC_PASSPHRASE": nil], [:]),
        ]
        try Data(String(repeating: "q", count: 5_000).utf8).write(to: file)
        for (name, options, environment, descriptors) in cases {
            let result = try CLI.run(
                ["rotate", "--store", fixture.database.path] + options, environment: environment, descriptors: descriptors)
            #expect(result.exitCode == 2, "\(name): \(result)")
            #expect(!result.stderr.contains(long), "\(name)")
        }
        let empty = try CLI.run(
            ["change-passphrase", "--store", fixture.database.path],
            environment: [
                "CIPHERSYNC_PASSPHRASE": fixture.passphrase, "CIPHERSYNC_NEW_PASSPHRASE": "",
            ])
        #expect(empty.exitCode == 2, "\(empty)")
        #expect(try fixture.files() == before)
    }

    @Test func noPassphraseSourceAndConflictingSourcesAreUsageErrors() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let none = try CLI.run(["rotate", "--store", fixture.database.path])
        #expect(none.exitCode == 2 && none.stderr.contains("No passphrase given"))
        let both = try CLI.run(["verify", "--store", fixture.database.path, "--passphrase-fd", "0", "--passphrase-file", "/dev/null"])
        #expect(both.exitCode == 2)
        let insecure = try CLI.run(
            ["init", "--store", fixture.directory.path("other.db"), "--profile", "insecure-test"],
            environment: ["CIPHERSYNC_PASSPHRASE": makePassphrase(), "CIPHERSYNC_ALLOW_INSECURE_PROFILE": nil])
        #expect(insecure.exitCode == 2 && insecure.stderr.contains("automated tests only"))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path("other.db")))
        #expect(try CLI.run(["rotate", "--store", fixture.database.path, "--no-such-flag"]).exitCode == 2)
    }

    @Test(arguments: ["rotate", "verify", "status", "change-passphrase", "add-recovery-key"])
    func aMissingEnvelopeExits4AndNothingIsCreated(_ command: String) throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        try FileManager.default.removeItem(at: fixture.envelope)
        let before = try fixture.files()
        let result = try fixture.run(command, environment: ["CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()])
        #expect(result.exitCode == 4, "\(result)")
        #expect(try fixture.files() == before)
    }

    /// Damage to the key file: broken JSON, an unknown version, a field changed with the checksum
    /// recomputed (the MAC catches it), the KDF cost lowered.
    @Test(arguments: ["truncated", "version", "keyId", "wrappedDataKey", "kdf"])
    func aTamperedEnvelopeExits4AndNothingChanges(_ damage: String) throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let original = try Data(contentsOf: fixture.envelope)
        var object = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        switch damage {
        case "truncated":
            try original.prefix(original.count / 2).write(to: fixture.envelope)
        default:
            if damage == "version" { object["version"] = 2 }
            if damage == "keyId" { object["keyId"] = UUID().uuidString.lowercased() }
            if damage == "wrappedDataKey" {
                let text = try #require(object["wrappedDataKey"] as? String)
                var bytes = try #require(Data(base64Encoded: text))
                bytes[5] ^= 0x01
                object["wrappedDataKey"] = bytes.base64EncodedString()
            }
            if damage == "kdf" {
                var slots = try #require(object["slots"] as? [[String: Any]])
                var kdf = try #require(slots[0]["kdf"] as? [String: Any])
                kdf["n"] = 512
                slots[0]["kdf"] = kdf
                object["slots"] = slots
            }
            try resealedDigest(object).write(to: fixture.envelope)
        }
        let before = try fixture.files()
        for command in ["rotate", "verify"] {
            let result = try fixture.run(command)
            #expect(result.exitCode == 4, "\(damage) \(command): \(result)")
        }
        #expect(try fixture.files() == before)
    }

    /// The envelope with a correct checksum for its edited content (but the MAC left as it was).
    func resealedDigest(_ object: [String: Any]) throws -> Data {
        var body = object
        body.removeValue(forKey: "digest")
        body.removeValue(forKey: "mac")
        let canonical = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        var sealed = object
        sealed["digest"] = try KeyDerivation.sha256(Array(canonical)).map { String(format: "%02x", $0) }.joined()
        return try JSONSerialization.data(withJSONObject: sealed, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    @Test func rotationIsRefusedWhileTheStoreIsOpen() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 50, operations: 5)
        let result = try fixture.run("rotate")
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("open in another program"))
        #expect(try KeyEnvelope.read(from: fixture.envelope).state == .active)
        #expect(try await store.read { try $0.operationCount(table: nil) } == 5)
        try await store.close()
        #expect(try fixture.run("rotate").exitCode == 0)
    }

    @Test func aReadOnlyDirectoryExits1AndChangesNothing() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        try FileManager.default.removeItem(at: fixture.directory.file("store.db.lock"))
        let before = try fixture.files()
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: fixture.directory.url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: fixture.directory.url.path) }
        // Root ignores directory modes; without CAP_DAC_OVERRIDE it obeys them like anyone else.
        let prefix = getuid() == 0 ? ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"] : []
        for command in ["rotate", "change-passphrase", "add-recovery-key"] {
            let result = try CLI.run(
                [command, "--store", fixture.database.path],
                environment: ["CIPHERSYNC_PASSPHRASE": fixture.passphrase, "CIPHERSYNC_NEW_PASSPHRASE": makePassphrase()],
                prefix: prefix)
            #expect(result.exitCode == 1, "\(command): \(result)")
            #expect(result.stderr.hasPrefix("sync-keys: ") && result.stderr.split(separator: "\n").count == 1, "\(command)")
        }
        #expect(try fixture.files() == before)
    }
}

/// A disk too small for the re-encrypted copy: a tiny tmpfs when this process may mount one,
/// otherwise a file-size limit on the tool (`prlimit --fsize`).
@Suite struct FullDiskTests {
    @Test func rotationOnAFullDiskExits1AndLeavesTheStoreAsItWas() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 4_000, operations: 100)
        let content = try await Workload.content(of: store)
        try await store.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: fixture.database.path)[.size] as? Int)

        let mountPoint = try TemporaryDirectory(prefix: "sync-keys-full")
        defer { mountPoint.remove() }
        let mounted = shell("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size + size / 2),mode=0700", "tmpfs", mountPoint.url.path])
        defer { if mounted { _ = shell("/bin/umount", [mountPoint.url.path]) } }
        let target = mounted ? mountPoint.url : fixture.directory.url
        if mounted {
            for name in try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path) {
                try FileManager.default.copyItem(at: fixture.directory.file(name), to: target.appendingPathComponent(name))
            }
        }
        let onDisk = Fixture(directory: StoreDirectory(existing: target), passphrase: fixture.passphrase)
        let before = try onDisk.files()
        // A file-size limit below the database size stops the copy the same way (EFBIG).
        let prefix = mounted ? [] : ["/usr/bin/prlimit", "--fsize=\(size / 2)", "--"]
        let result = try CLI.run(
            ["rotate", "--store", onDisk.database.path], environment: fixture.passphraseEnvironment, prefix: prefix)
        #expect(result.exitCode == 6, "\(result)")
        #expect(result.stderr.contains("Disk full"), "\(result)")
        #expect(try onDisk.files() == before)
        let reopened = try await onDisk.open()
        #expect(try await Workload.content(of: reopened) == content)
        try await reopened.close()
    }

    /// Runs a system tool quietly; whether it succeeded.
    func shell(_ tool: String, _ arguments: [String]) -> Bool {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

/// A damaged database and a store held by a rotation.
@Suite struct DamageTests {
    @Test func aDamagedPageFailsVerifyAndStopsRotationWithNothingChanged() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 2_000, operations: 10)
        try await store.close()
        var bytes = try Data(contentsOf: fixture.database)
        bytes[4_096 * 5 + 100] ^= 0x40
        try bytes.write(to: fixture.database)
        let before = try fixture.files()

        let verify = try fixture.run("verify")
        #expect(verify.exitCode == 1, "\(verify)")
        #expect(verify.stdout.contains("FAIL  integrity") || verify.stdout.contains("FAIL  read-all"), "\(verify)")
        let rotate = try fixture.run("rotate")
        #expect(rotate.exitCode == 4, "\(rotate)")
        #expect(rotate.stderr.contains("damaged"))
        #expect(try fixture.files() == before)
    }

    @Test func theStoreDoesNotOpenWhileAKeyProcedureHoldsItsLock() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        // What a running rotation holds: an exclusive flock on <database>.lock. Close-on-exec, or
        // a process another test spawns meanwhile would inherit the lock and hold it past close().
        let fd = open(fixture.database.path + ".lock", O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        await #expect(throws: StoreError.self) { _ = try await fixture.open() }
        let rotate = try fixture.run("rotate")
        #expect(rotate.exitCode == 1 && rotate.stderr.contains("open in another program"), "\(rotate)")
        close(fd)
        let store = try await fixture.open()
        try await store.close()
    }
}
