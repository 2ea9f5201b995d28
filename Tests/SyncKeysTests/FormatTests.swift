import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Keys/FORMAT.md stays true: an independent decoder written from it (Tests/Tools/envelope_decoder.py,
/// Python + `cryptography`, no project code) unwraps the same data key as the SDK.
@Suite struct FormatTests {
    static let python = repositoryRoot.appendingPathComponent(".build/tools-venv/bin/python").path
    static let decoder = repositoryRoot.appendingPathComponent("Tests/Tools/envelope_decoder.py").path

    func decode(_ url: URL, passphrase: SecretBytes, slot: String = "passphrase") throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "run scripts/setup to prepare \(Self.python)")
        let input = passphrase.withUnsafeBytes { Array($0) } + [0x0A]
        let result = try runProgram(Self.python, [Self.decoder, url.path, slot], input: input)
        #expect(result.status == 0)
        return result.output.split(separator: "\n").map(String.init)
    }

    @Test(arguments: [KeyProfile.insecureTest, .pbkdf2SHA512])
    func independentDecoderUnwrapsTheSameKey(_ profile: KeyProfile) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secret = SecretBytes(Array("Grüße aus dem Feld \(UUID().uuidString)".utf8))
        let (envelope, key) = try KeyEnvelope.create(passphrase: secret, profile: profile, allowInsecureProfile: true)
        let url = directory.file("store.db.keys")
        try envelope.write(to: url)
        #expect(try decode(url, passphrase: secret) == [hex(key)])

        let keys = try envelope.unlockKeys(secret: secret, allowInsecureProfile: true)
        let newKey = try SecretBytes.random(count: 32)
        try envelope.beginningRotation(to: newKey, envelopeKey: keys.envelopeKey).write(to: url)
        #expect(try decode(url, passphrase: secret) == [hex(key), hex(newKey)])
    }

    @Test func theWorkedExampleUnlocks() throws {
        let example = repositoryRoot.appendingPathComponent("Keys/example/example.db.keys")
        let expected = try String(contentsOf: repositoryRoot.appendingPathComponent("Keys/example/data-key.hex"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let secret = SecretBytes(Array("correct horse battery staple".utf8))
        #expect(hex(try KeyEnvelope.read(from: example).unlock(passphrase: secret, allowInsecureProfile: true)) == expected)
        #expect(try decode(example, passphrase: secret) == [expected])
    }

    /// The TPM slot's known-answer vector: `Keys/example/example-tpm.db.keys` was written by the
    /// SDK with a TPM slot (PIN, no PCR policy) on a software TPM; `tpm2_unseal` (tpm2-tools) gave
    /// the sealed secret in `tpm-sealed-secret.hex`. The SDK and the independent decoder turn that
    /// secret into the data key of `tpm-data-key.hex`, which the passphrase slot yields too.
    @Test func theTPMSlotVectorUnlocks() throws {
        let example = repositoryRoot.appendingPathComponent("Keys/example/example-tpm.db.keys")
        func text(_ name: String) throws -> String {
            try String(contentsOf: repositoryRoot.appendingPathComponent("Keys/example/\(name)"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let expected = try text("tpm-data-key.hex")
        let sealedHex = try text("tpm-sealed-secret.hex")
        let sealed = SecretBytes(
            stride(from: 0, to: sealedHex.count, by: 2).compactMap { offset in
                let start = sealedHex.index(sealedHex.startIndex, offsetBy: offset)
                return UInt8(sealedHex[start..<sealedHex.index(start, offsetBy: 2)], radix: 16)
            })
        #expect(sealed.count == 32)
        let envelope = try KeyEnvelope.read(from: example)
        let slot = try #require(envelope.slots.first { $0.id == KeyEnvelope.tpmSlot })
        #expect(slot.kdf.algorithm == KeyEnvelope.tpmSealedAlgorithm && slot.tpm?.pin == true && slot.tpm?.pcrs == [])
        #expect(hex(try envelope.unlockKeys(secret: sealed, slot: KeyEnvelope.tpmSlot).dataKey) == expected)
        #expect(try decode(example, passphrase: SecretBytes(Array(sealedHex.utf8)), slot: "tpm") == [expected])
        let passphrase = SecretBytes(Array("correct horse battery staple".utf8))
        #expect(hex(try envelope.unlock(passphrase: passphrase, allowInsecureProfile: true)) == expected)

        // Another secret does not unwrap the slot: the TPM gave another object's secret.
        #expect(throws: KeyError.tpmKeyMissing) {
            _ = try envelope.unlockKeys(secret: SecretBytes(Array(repeating: 7, count: 32)), slot: KeyEnvelope.tpmSlot)
        }
        // A changed binding (another handle) changes the slot header and is caught by the digest.
        var moved = envelope
        moved.slots[1].tpm?.handle = "0x815c0001"
        #expect(throws: KeyError.self) { _ = try KeyEnvelope.decode(try moved.encoded()) }
    }
}
