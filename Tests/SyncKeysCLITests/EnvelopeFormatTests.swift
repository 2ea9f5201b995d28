import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import Testing

/// Keys/FORMAT.md stays true for what `sync-keys` writes: the independent decoder written from the
/// document (Tests/Tools/envelope_decoder.py: Python + `cryptography`, no project code) unwraps
/// the data key, and the stock `sqlcipher` CLI opens the database with it (key on stdin, never argv).
@Suite struct EnvelopeFormatTests {
    static let python = repositoryRoot.appendingPathComponent(".build/tools-venv/bin/python").path
    static let decoder = repositoryRoot.appendingPathComponent("Tests/Tools/envelope_decoder.py").path

    /// The data keys (hex) the independent decoder finds: the current one, then a pending one.
    func decodedKeys(_ fixture: Fixture) throws -> [String] {
        try #require(FileManager.default.isExecutableFile(atPath: Self.python), "run scripts/setup to prepare \(Self.python)")
        let result = try runProgram(Self.python, [Self.decoder, fixture.envelope.path], input: fixture.passphrase + "\n")
        #expect(result.status == 0, "\(result.error)")
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Row counts read by the stock sqlcipher CLI with a raw key, or `nil` when the key fails.
    func sqlcipherCounts(_ database: URL, keyHex: String) throws -> String? {
        let script = """
            PRAGMA key = "x'\(keyHex)'";
            PRAGMA cipher_page_size = 4096;
            SELECT count(*) FROM todos;
            SELECT count(*) FROM __operations;
            SELECT value FROM __config WHERE key = '\(Workload.tokenKeys[0])';

            """
        let result = try runProgram("/usr/bin/sqlcipher", [database.path], input: script)
        return result.status == 0 && !result.output.isEmpty ? result.output : nil
    }

    @Test func theIndependentDecoderAndStockSQLCipherReadWhatTheToolWrote() async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 500, operations: 60)
        let token = try #require(try await store.read { try $0.configValue(forKey: Workload.tokenKeys[0]) })
        try await store.close()
        let expected = "500\n60\n\(token)\n"

        let before = try decodedKeys(fixture)
        #expect(before.count == 1)
        #expect(try sqlcipherCounts(fixture.database, keyHex: try #require(before.first)) == expected)

        #expect(try fixture.run("rotate").exitCode == 0)
        let after = try decodedKeys(fixture)
        #expect(after.count == 1 && after != before)
        #expect(try sqlcipherCounts(fixture.database, keyHex: try #require(after.first)) == expected)
        #expect(try sqlcipherCounts(fixture.database, keyHex: try #require(before.first)) == nil)
        // The passphrase itself is no SQLCipher key.
        let passphraseAsKey = try runProgram(
            "/usr/bin/sqlcipher", [fixture.database.path],
            input: "PRAGMA key = '\(fixture.passphrase)';\nSELECT count(*) FROM todos;\n")
        #expect(passphraseAsKey.output.isEmpty)
    }

    /// While the envelope says `rotating`, it carries both keys and the database opens with one of
    /// them: the pending one once the rename happened, the current one before (FORMAT.md §5).
    @Test(arguments: [KeyMaintenanceStep.exported, .renamed])
    func anInterruptedRotationIsReadableFromTheDocumentAlone(_ step: KeyMaintenanceStep) async throws {
        let fixture = try Fixture.create()
        defer { fixture.remove() }
        let store = try await fixture.open()
        try await Workload.fill(store, rows: 200, operations: 20)
        let token = try #require(try await store.read { try $0.configValue(forKey: Workload.tokenKeys[0]) })
        try await store.close()
        let killed = try fixture.run("rotate", environment: [FaultHook.variable: step.rawValue])
        #expect(killed.wasKilled)
        let keys = try decodedKeys(fixture)
        #expect(keys.count == 2)
        let opening = try keys.compactMap { try sqlcipherCounts(fixture.database, keyHex: $0) }
        #expect(opening == ["200\n20\n\(token)\n"])
        #expect(try sqlcipherCounts(fixture.database, keyHex: keys[step == .renamed ? 1 : 0]) != nil)
    }
}
