import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// `sync-keys shred` destroys every slot: afterwards no passphrase, recovery code or TPM opens
/// the store, the TPM object is gone, and no file beside the store holds key material.
@Suite struct ShredTests {
    @Test func withoutYesNothingChanges() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let binding = try store.addSlot()
        let before = try store.fixture.files()
        let result = try store.run("shred", environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(result.exitCode == 2 && result.stderr.contains("add --yes"), "\(result)")
        #expect(try store.fixture.files() == before)
        #expect(try store.tpm.persistentHandles().contains(binding.handle))
    }

    @Test func afterShreddingNothingOpensTheStoreAndNoKeyMaterialRemains() async throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let opened = try await store.fixture.open()
        try await Workload.fill(opened, rows: 200, operations: 20)
        try await opened.close()
        try store.addRecoveryCode()
        let binding = try store.addSlot(pin: "2468")
        #expect(try store.opens("recovery") && store.opens("tpm", pin: "2468") && store.opens("passphrase"))
        let envelope = try KeyEnvelope.read(from: store.fixture.envelope)
        let keys = try store.fixture.keys()
        let dataKey = keys.dataKey.withUnsafeBytes { Array($0) }
        let envelopeKey = keys.envelopeKey.withUnsafeBytes { Array($0) }
        let envelopeBytes = try Data(contentsOf: store.fixture.envelope)

        let result = try store.run("shred", ["--yes"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(result.exitCode == 0 && result.stdout.contains(binding.handle), "\(result)")

        for (slot, pin) in [("passphrase", nil), ("recovery", nil), ("tpm", "2468")] as [(String, String?)] {
            let attempt = try store.unlockStatus(slot, pin: pin)
            #expect(attempt.code == 4 && attempt.stderr.contains("shredded"), "\(slot): \(attempt)")
        }
        await #expect(throws: StoreError.shredded) { _ = try await store.fixture.open() }
        #expect(try !store.tpm.persistentHandles().contains(binding.handle), "the TPM object is evicted")
        #expect(try store.status().shredded)

        // The compliance scan: no file holds a key, a wrapped key, a salt or the old envelope.
        let files = try FileManager.default.contentsOfDirectory(at: store.fixture.directory.url, includingPropertiesForKeys: nil)
        var markers = [envelope.wrappedDataKey, envelope.keyId]
        for slot in envelope.slots { markers += [slot.wrappedKey, slot.kdf.salt] }
        markers += [dataKey, envelopeKey].map { $0.map { String(format: "%02x", $0) }.joined() }
        #expect(try markerHits(markers, in: files).isEmpty)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            #expect(!contains(bytes, dataKey) && !contains(bytes, envelopeKey), "\(file.lastPathComponent)")
            #expect(!contains(bytes, Array(envelopeBytes.prefix(64))), "\(file.lastPathComponent) holds the old envelope")
        }
        let again = try store.run("shred", ["--yes"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(again.exitCode == 0, "shredding twice is harmless: \(again)")
    }

    @Test func withTheTPMUnreachableTheKeysAreDestroyedAndARerunEvictsTheObject() throws {
        let store = try TPMFixture.make()
        defer { store.remove() }
        let binding = try store.addSlot()
        let refusing = try RefusingPort()
        let result = try store.run(
            "shred", ["--yes", "--tcti", "swtpm:host=127.0.0.1,port=\(refusing.port)"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        withExtendedLifetime(refusing) {}
        #expect(result.exitCode == 10 && result.stderr.contains("keys are destroyed"), "\(result)")
        #expect(try store.unlockStatus("passphrase").code == 4)
        #expect(try store.status().tpmObjectsToEvict == [binding.handle])
        #expect(try store.tpm.persistentHandles().contains(binding.handle))

        let rerun = try store.run("shred", ["--yes"], environment: ["CIPHERSYNC_PASSPHRASE": nil])
        #expect(rerun.exitCode == 0, "\(rerun)")
        #expect(try !store.tpm.persistentHandles().contains(binding.handle))
        #expect(try store.status().tpmObjectsToEvict.isEmpty)
    }
}
