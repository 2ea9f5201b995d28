import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Slots come and go without touching the data key, the last slot stays, and a shredded file is
/// told apart from a damaged one.
@Suite struct KeyEnvelopeSlotTests {
    static let passphrase = SecretBytes(Array("slot test passphrase".utf8))

    @Test func aTPMSlotIsAddedAndRemovedAroundTheSameDataKey() throws {
        let (envelope, dataKey) = try KeyEnvelope.create(passphrase: Self.passphrase, profile: .insecureTest, allowInsecureProfile: true)
        let keys = try envelope.unlockKeys(secret: Self.passphrase, allowInsecureProfile: true)
        let sealed = try SecretBytes.random(count: 32)
        let binding = KeyEnvelope.TPMBinding(handle: 0x815C_1234, name: "000b" + String(repeating: "ab", count: 32), pin: true, pcrs: [7])
        let withTPM = try envelope.withTPMSlot(sealedSecret: sealed, binding: binding, envelopeKey: keys.envelopeKey)
        let decoded = try KeyEnvelope.decode(try withTPM.encoded())
        #expect(decoded.slots.map(\.id) == ["passphrase", "tpm"] && decoded.slots[1].tpm == binding)
        #expect(binding.handle == "0x815c1234" && binding.handleValue == 0x815C_1234)
        #expect(try decoded.unlockKeys(secret: sealed, slot: KeyEnvelope.tpmSlot).dataKey == dataKey)
        expectKeyError(.invalidKeyLength(16)) {
            _ = try envelope.withTPMSlot(sealedSecret: SecretBytes(Array(repeating: 1, count: 16)), binding: binding, envelopeKey: keys.envelopeKey)
        }

        let withoutPassphrase = try decoded.removingSlot(KeyEnvelope.passphraseSlot, envelopeKey: keys.envelopeKey)
        #expect(withoutPassphrase.slots.map(\.id) == ["tpm"])
        expectKeyError(.slotMissing("passphrase")) {
            _ = try withoutPassphrase.unlockKeys(secret: Self.passphrase, allowInsecureProfile: true)
        }
        #expect(try withoutPassphrase.unlockKeys(secret: sealed, slot: KeyEnvelope.tpmSlot).dataKey == dataKey)
        #expect(throws: KeyError.self) { _ = try withoutPassphrase.removingSlot(KeyEnvelope.tpmSlot, envelopeKey: keys.envelopeKey) }
        expectKeyError(.slotMissing("recovery")) { _ = try decoded.removingSlot("recovery", envelopeKey: keys.envelopeKey) }
    }

    @Test func aShreddedFileIsOverwrittenInPlaceAndReadAsShredded() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.db.keys")
        let (envelope, _) = try KeyEnvelope.create(passphrase: Self.passphrase, profile: .insecureTest, allowInsecureProfile: true)
        try envelope.write(to: url)
        let before = try Data(contentsOf: url)
        let inode = try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int

        let shredded = ShreddedEnvelope(replacing: envelope)
        try shredded.overwrite(inPlace: url)
        let after = try Data(contentsOf: url)
        #expect(after.count == before.count, "same length: every byte of the old file is rewritten")
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int == inode, "the same file")
        #expect(!contains(Array(after), Array(envelope.wrappedDataKey.utf8)) && !contains(Array(after), Array(envelope.slots[0].kdf.salt.utf8)))
        #expect(throws: KeyError.shredded) { _ = try KeyEnvelope.read(from: url) }
        #expect(ShreddedEnvelope.read(from: url) == shredded)
        #expect(ShreddedEnvelope.read(from: directory.file("absent")) == nil)
    }
}
