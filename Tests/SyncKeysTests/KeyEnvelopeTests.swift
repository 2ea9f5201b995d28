import Foundation
import SyncKeys
import SyncTestSupport
import Testing

func passphrase() -> SecretBytes { SecretBytes(Array("pass-\(UUID().uuidString)".utf8)) }

/// The key envelope: create, unlock, change, tamper (C11, C13, C17, C21, C22, C40).
@Suite struct KeyEnvelopeTests {
    func make(_ secret: SecretBytes, profile: KeyProfile = .insecureTest) throws -> (KeyEnvelope, SecretBytes) {
        try KeyEnvelope.create(passphrase: secret, profile: profile, allowInsecureProfile: true)
    }

    @Test func createThenUnlockGivesTheSameDataKey() throws {
        let secret = passphrase()
        let (envelope, key) = try make(secret)
        #expect(key.count == 32)
        #expect(try envelope.unlock(passphrase: secret, allowInsecureProfile: true) == key)
        #expect(throws: KeyError.wrongPassphrase) { try envelope.unlock(passphrase: passphrase(), allowInsecureProfile: true) }
    }

    @Test func theDefaultProfileIsTheRealOne() throws {
        let secret = passphrase()
        let (envelope, key) = try KeyEnvelope.create(passphrase: secret)
        let kdf = envelope.slots[0].kdf
        #expect(kdf.algorithm == "scrypt" && kdf.n == 1 << 17 && kdf.r == 8 && kdf.p == 1)
        #expect((Data(base64Encoded: kdf.salt)?.count ?? 0) >= 16)
        #expect(try envelope.unlock(passphrase: secret) == key)
    }

    @Test func pbkdf2ProfileMeetsTheFloor() throws {
        let secret = passphrase()
        let (envelope, key) = try KeyEnvelope.create(passphrase: secret, profile: .pbkdf2SHA512)
        #expect(envelope.slots[0].kdf.iterations == 220_000)
        #expect(try envelope.unlock(passphrase: secret) == key)
    }

    @Test func theInsecureProfileNeedsAnExplicitOptIn() throws {
        let secret = passphrase()
        #expect(throws: KeyError.self) { try KeyEnvelope.create(passphrase: secret, profile: .insecureTest) }
        let (envelope, _) = try make(secret)
        #expect(throws: KeyError.self) { try envelope.unlock(passphrase: secret) }
    }

    @Test func sameSecretGivesDifferentSaltsAndWrappedKeys() throws {
        let secret = passphrase()
        let (a, keyA) = try make(secret), (b, keyB) = try make(secret)
        #expect(a.slots[0].kdf.salt != b.slots[0].kdf.salt)
        #expect(a.slots[0].wrappedKey != b.slots[0].wrappedKey)
        #expect(a.wrappedDataKey != b.wrappedDataKey)
        #expect(keyA != keyB)
    }

    @Test func emptyAndOverlongPassphrasesAreRefused() throws {
        #expect(throws: KeyError.emptyPassphrase) { try make(SecretBytes([])) }
        #expect(throws: KeyError.passphraseTooLong) { try make(SecretBytes([UInt8](repeating: 65, count: 1025))) }
    }

    @Test func unicodeFormsOfOneTextUnlock() throws {
        let composed = SecretBytes(Array("Caf\u{00E9} \u{00C5}ngstr\u{00F6}m".utf8))
        let decomposed = SecretBytes(Array("Cafe\u{0301} A\u{030A}ngstro\u{0308}m".utf8))
        #expect(composed != decomposed)
        let (envelope, key) = try make(composed)
        #expect(try envelope.unlock(passphrase: decomposed, allowInsecureProfile: true) == key)
    }

    @Test func changingThePassphraseKeepsTheDataKey() throws {
        let old = passphrase(), new = passphrase()
        let (envelope, key) = try make(old)
        let changed = try envelope.changingSecret(from: old, to: new, profile: .insecureTest, allowInsecureProfile: true)
        #expect(changed.wrappedDataKey == envelope.wrappedDataKey)
        #expect(changed.slots[0].kdf.salt != envelope.slots[0].kdf.salt)
        #expect(try changed.unlock(passphrase: new, allowInsecureProfile: true) == key)
        #expect(throws: KeyError.wrongPassphrase) { try changed.unlock(passphrase: old, allowInsecureProfile: true) }
        #expect(throws: KeyError.wrongPassphrase) {
            try envelope.changingSecret(from: passphrase(), to: new, profile: .insecureTest, allowInsecureProfile: true)
        }
    }

    @Test func aSecondSlotUnlocksTheSameKeys() throws {
        let secret = passphrase(), recovery = passphrase()
        let (envelope, key) = try make(secret)
        let keys = try envelope.unlockKeys(secret: secret, allowInsecureProfile: true)
        let withRecovery = try envelope.withSlot(
            id: KeyEnvelope.recoverySlot, secret: recovery, profile: .insecureTest, envelopeKey: keys.envelopeKey,
            allowInsecureProfile: true)
        #expect(try withRecovery.unlockKeys(secret: recovery, slot: KeyEnvelope.recoverySlot, allowInsecureProfile: true).dataKey == key)
        #expect(try withRecovery.unlock(passphrase: secret, allowInsecureProfile: true) == key)
    }

    @Test func rotationStateCarriesBothKeysUntilItEnds() throws {
        let secret = passphrase()
        let (envelope, key) = try make(secret)
        let keys = try envelope.unlockKeys(secret: secret, allowInsecureProfile: true)
        let newKey = try SecretBytes.random(count: 32)
        let rotating = try envelope.beginningRotation(to: newKey, envelopeKey: keys.envelopeKey)
        let during = try KeyEnvelope.decode(rotating.encoded()).unlockKeys(secret: secret, allowInsecureProfile: true)
        #expect(rotating.state == .rotating && during.dataKey == key && during.pendingDataKey == newKey)
        let committed = try rotating.endingRotation(commit: true, envelopeKey: keys.envelopeKey)
        #expect(committed.state == .active && committed.keyId == rotating.pendingKeyId)
        #expect(try committed.unlock(passphrase: secret, allowInsecureProfile: true) == newKey)
        let rolledBack = try rotating.endingRotation(commit: false, envelopeKey: keys.envelopeKey)
        #expect(try rolledBack.unlock(passphrase: secret, allowInsecureProfile: true) == key)
    }

    @Test func fileIsWrittenAtomicallyWithOwnerOnlyMode() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("store.db.keys")
        let secret = passphrase()
        let (envelope, key) = try make(secret)
        try envelope.write(to: url)
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["store.db.keys"])
        #expect(try KeyEnvelope.read(from: url).unlock(passphrase: secret, allowInsecureProfile: true) == key)
        #expect(throws: KeyError.keyMaterialMissing) { try KeyEnvelope.read(from: directory.file("absent.keys")) }
    }
}
