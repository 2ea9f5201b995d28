import Foundation
import SyncKeys
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Wrong keys, damaged files and outside readers (encryption.md §6: C11–C16, C22, C34).
@Suite struct ComplianceTamperTests {
    /// An encrypted store with enough rows to span several pages, closed.
    func filledStore(rows: Int = 400) async throws -> TestStore {
        let (test, store) = try await TestStore.make(.encrypted)
        let items: [JSONObject] = (0..<rows).map { ["id": .string("row\($0)"), "text": .string(String(repeating: "x", count: 150) + "\($0)")] }
        try await store.upsert(table: "records", items: items)
        try await store.close()
        return test
    }

    /// Reads every row, then every page (integrity check); a damaged store throws.
    func readAll(_ test: TestStore) async throws -> Int {
        let store = try await test.open()
        do {
            let count = try await store.read(QueryDescription(table: "records")).items.count
            let problems = try await store.checkIntegrity()
            try await store.close()
            if !problems.isEmpty { throw StoreError.corruptOrKeyMismatch }
            return count
        } catch {
            try? await store.close()
            throw error
        }
    }

    func mutate(_ url: URL, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: url))
        change(&bytes)
        try Data(bytes).write(to: url)
    }

    // C11 / C12 are in StoreOpeningTests (wrong passphrase: typed, files byte-identical, right one still opens).

    // C14: a flipped byte in page 5 is reported as corruption, never as a wrong passphrase.
    @Test func c14FlippedPageByteIsCorruption() async throws {
        let test = try await filledStore()
        defer { test.directory.remove() }
        #expect(try await readAll(test) == 400)
        try mutate(test.url) { $0[4 * 4096 + 100] ^= 0x01 }
        do {
            _ = try await readAll(test)
            Issue.record("read a damaged page without an error")
        } catch StoreError.corruptOrKeyMismatch {
        } catch {
            Issue.record("expected corruptOrKeyMismatch, got \(error)")
        }
    }

    // C15: swapped pages and a truncated file are detected (page HMACs cover the page number).
    @Test func c15SwappedPagesAndTruncationAreDetected() async throws {
        let swapped = try await filledStore()
        defer { swapped.directory.remove() }
        try mutate(swapped.url) { bytes in
            let a = Array(bytes[(3 * 4096)..<(4 * 4096)])
            bytes.replaceSubrange((3 * 4096)..<(4 * 4096), with: bytes[(4 * 4096)..<(5 * 4096)])
            bytes.replaceSubrange((4 * 4096)..<(5 * 4096), with: a)
        }
        await #expect(throws: StoreError.self) { _ = try await readAll(swapped) }

        let truncated = try await filledStore()
        defer { truncated.directory.remove() }
        try mutate(truncated.url) { $0.removeLast(3 * 4096) }
        await #expect(throws: StoreError.self) { _ = try await readAll(truncated) }
    }

    // C16: the envelope's data key opens the file in the stock sqlcipher CLI as a raw key; the
    // passphrase given to SQLCipher directly does not.
    @Test func c16RawKeyOpensWithStockSQLCipherAndThePassphraseDoesNot() async throws {
        let test = try await filledStore(rows: 3)
        defer { test.directory.remove() }
        let key = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: test.url))
            .unlock(passphrase: test.passphrase, allowInsecureProfile: true)
        let withKey = try runProgram(
            "/usr/bin/sqlcipher", [test.url.path],
            input: "PRAGMA key = \"x'\(hex(key))'\";\nPRAGMA cipher_page_size = 4096;\nSELECT count(*) FROM records;\n")
        #expect(withKey.output.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
        let passphrase = test.passphrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let withPassphrase = try runProgram(
            "/usr/bin/sqlcipher", [test.url.path],
            input: "PRAGMA key = '\(passphrase)';\nPRAGMA cipher_page_size = 4096;\nSELECT count(*) FROM records;\n")
        #expect(withPassphrase.output.trimmingCharacters(in: .whitespacesAndNewlines) != "3")
        #expect(withPassphrase.error.contains("not a database"))
    }

    // C22: a passphrase change leaves the database byte-identical; old fails, new works.
    @Test func c22PassphraseChangeLeavesTheDatabaseByteIdentical() async throws {
        let test = try await filledStore(rows: 10)
        defer { test.directory.remove() }
        let before = try Data(contentsOf: test.url)
        let newPassphrase = SecretBytes.testPassphrase()
        try StoreKeys.changePassphrase(forDatabase: test.url, from: test.passphrase, to: newPassphrase, allowInsecureProfile: true)
        #expect(try Data(contentsOf: test.url) == before)
        do {
            _ = try await readAll(test)
            Issue.record("the old passphrase still opens the store")
        } catch StoreError.wrongPassphrase {}
        let store = try await SQLiteStore.open(
            at: test.url, encryption: .passphrase(newPassphrase),
            options: StoreOptions(keyProfile: .insecureTest, allowInsecureKeyProfile: true))
        #expect(try await store.read(QueryDescription(table: "records")).items.count == 10)
        try await store.close()
    }

    // C34: the file is 4096-byte pages with HMAC, and SQLCipher 4 opens it with compatibility 3.
    @Test func c34FormatIsPinnedAndOpensInSQLCipher4() async throws {
        let test = try await filledStore(rows: 5)
        defer { test.directory.remove() }
        let size = try FileManager.default.attributesOfItem(atPath: test.url.path)[.size] as? Int ?? 0
        #expect(size > 0 && size % 4096 == 0)
        let store = try await test.open()
        let (pageSize, hmac) = try await store.withConnection { c in
            (try c.integerPragma("cipher_page_size"), try c.integerPragma("cipher_use_hmac"))
        }
        #expect(pageSize == 4096 && hmac == 1)
        try await store.close()

        let key = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: test.url))
            .unlock(passphrase: test.passphrase, allowInsecureProfile: true)
        let python = repositoryRoot.appendingPathComponent(".build/tools-venv/bin/python").path
        try #require(FileManager.default.isExecutableFile(atPath: python), "run scripts/setup to prepare \(python)")
        let script = """
            import sys, sqlcipher3
            key = sys.stdin.readline().strip()
            db = sqlcipher3.connect(sys.argv[1])
            db.execute("PRAGMA key = \\"x'%s'\\"" % key)
            db.execute("PRAGMA cipher_compatibility = 3")
            db.execute("PRAGMA cipher_page_size = 4096")
            print(db.execute("PRAGMA cipher_version").fetchone()[0])
            print(db.execute("SELECT count(*) FROM records").fetchone()[0])
            """
        let result = try runProgram(python, ["-c", script, test.url.path], input: hex(key) + "\n")
        let lines = result.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("4.") == true, "\(result.error)")
        #expect(lines.last == "5")
    }
}
