import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// The key tools on a failing or full disk: each failure names its real cause and its exit code,
/// and a check (`verify`) reads a store without writing a byte.
@Suite struct DiskFaultTests {
    @Test func aKeyFileThatCannotBeSyncedNamesTheDiskError() throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let shim = try FaultShim.build(into: fixture.directory.url.deletingLastPathComponent())
        defer { try? FileManager.default.removeItem(at: shim.library) }
        let before = try fixture.files()
        var environment = shim.failingSyncs(of: ".keys.tmp-")
        environment["CIPHERSYNC_NEW_PASSPHRASE"] = makePassphrase()
        let result = try fixture.run("change-passphrase", environment: environment)
        #expect(result.exitCode == 7, "\(result)")
        #expect(
            result.errorLines == [
                "sync-keys: A disk I/O error occurred while writing the key file; the disk may be failing. Check it, then run the command again."
            ], "\(result)")
        #expect(try fixture.files() == before)
    }

    @Test func encryptSaysSoWhenTheOldPlaintextCouldNotBeOverwritten() async throws {
        let (fixture, content, _) = try await EncryptTests.plainStore(rows: 200)
        defer { fixture.remove() }
        let shim = try FaultShim.build(into: fixture.directory.url.deletingLastPathComponent())
        defer { try? FileManager.default.removeItem(at: shim.library) }
        let result = try fixture.run("encrypt", ["--profile", "insecure-test"], environment: shim.failingWrites(to: ".plaintext-old"))
        #expect(result.exitCode == 7, "\(result)")
        #expect(result.stderr.contains("could not be overwritten with zeros (Input/output error)"), "\(result)")
        // The store is encrypted and whole; the plaintext file's name is gone.
        #expect(!SQLiteStore.isPlainDatabase(at: fixture.database))
        #expect(!FileManager.default.fileExists(atPath: fixture.database.path + ".plaintext-old"))
        let store = try await fixture.open()
        #expect(try await Workload.content(of: store) == content)
        try await store.close()
    }

    /// 4 to 16 KiB free: too little for the copy, the key file's rewrite or SQLite's `-shm`.
    @Test(arguments: [4_096, 8_192, 16_384])
    func rotationWithoutRoomIsRefusedBeforeAnythingChanges(_ free: Int) async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 200, operations: 20)
        try await store.close()
        let disk = try SmallDisk(bytes: 1 << 20)
        defer { disk.unmount() }
        try disk.copy(contentsOf: fixture.directory.url)
        try disk.fill(leaving: Int64(free))
        let onDisk = Fixture(directory: StoreDirectory(existing: disk.url), passphrase: fixture.passphrase)
        let before = try onDisk.files()
        let result = try onDisk.run("rotate")
        #expect(result.exitCode == 6, "\(result)")
        #expect(result.errorLines.count == 1 && result.stderr.hasPrefix("sync-keys: Disk full: rotating the data key needs about "), "\(result)")
        #expect(result.stderr.contains("nothing was changed"), "\(result)")
        #expect(try onDisk.files() == before)
        #expect(try KeyEnvelope.read(from: onDisk.envelope).state == .active)
        // With room again, the same command works.
        disk.removeFiller()
        let again = try onDisk.run("rotate")
        #expect(again.exitCode == 0, "\(again)")
    }

    @Test func verifyReadsAStoreOnAFullDiskAndOnReadOnlyMediaAndCreatesNothing() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 100, operations: 10)
        try await store.close()
        let disk = try SmallDisk(bytes: 1 << 20)
        defer { disk.unmount() }
        try disk.copy(contentsOf: fixture.directory.url)
        let onDisk = Fixture(directory: StoreDirectory(existing: disk.url), passphrase: fixture.passphrase)
        try disk.fill(leaving: 8_192)
        let full = try onDisk.files()
        let onFullDisk = try onDisk.run("verify", ["--json"])
        // Every check that reads the store passes; the filler is a stray file, and the test key
        // profile is below the floor.
        #expect(try Self.failedChecks(onFullDisk) == ["kdf-floor", "stray-files"], "\(onFullDisk)")
        #expect(try onDisk.files() == full)

        disk.removeFiller()
        try disk.setReadOnly(true)
        let before = try onDisk.files()
        let readOnly = try onDisk.run("verify", ["--json"])
        #expect(try Self.failedChecks(readOnly) == ["kdf-floor"], "\(readOnly)")
        #expect(try onDisk.files() == before)
    }

    /// The names of the checks a `verify --json` run failed (it read the whole store: `read-all` is in the report).
    static func failedChecks(_ result: ToolResult) throws -> [String] {
        let report = try JSONDecoder().decode(StoreVerificationReport.self, from: Data(result.stdout.utf8))
        #expect(report.checks.contains { $0.name == "read-all" && $0.passed })
        return report.checks.filter { !$0.passed }.map(\.name)
    }
}
