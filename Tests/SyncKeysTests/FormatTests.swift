import Foundation
import SyncKeys
import SyncTestSupport
import Testing

/// Keys/FORMAT.md stays true: an independent decoder written from it (Tests/Tools/envelope_decoder.py,
/// Python + `cryptography`, no project code) unwraps the same data key as the SDK.
@Suite struct FormatTests {
    static let python = repositoryRoot.appendingPathComponent(".build/tools-venv/bin/python").path
    static let decoder = repositoryRoot.appendingPathComponent("Tests/Tools/envelope_decoder.py").path

    func decode(_ url: URL, passphrase: SecretBytes) throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "run scripts/setup to prepare \(Self.python)")
        let input = passphrase.withUnsafeBytes { Array($0) } + [0x0A]
        let result = try runProgram(Self.python, [Self.decoder, url.path], input: input)
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
}
