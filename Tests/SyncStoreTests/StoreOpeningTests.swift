import Foundation
import SyncKeyMaintenance
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

func options(create: Bool = false) -> StoreOptions {
    StoreOptions(createIfMissing: create, keyProfile: .insecureTest, allowInsecureKeyProfile: true)
}

@Suite struct StoreOpeningTests {
    /// An encrypted store holding one row, closed.
    func makeClosedStore() async throws -> TestStore {
        let (test, store) = try await TestStore.make(.encrypted)
        try await store.upsert(table: "todo", items: [["id": "a", "text": "hello"]])
        try await store.close()
        return test
    }

    @Test func wrongPassphraseIsTypedAndTouchesNothing() async throws {
        let test = try await makeClosedStore()
        defer { test.directory.remove() }
        let before = try test.directory.contents()
        for _ in 0..<5 {
            await #expect(throws: StoreError.self) {
                do {
                    _ = try await SQLiteStore.open(at: test.url, encryption: .passphrase(.testPassphrase()), options: options())
                } catch StoreError.wrongPassphrase {
                    throw StoreError.wrongPassphrase
                } catch {
                    Issue.record("expected wrongPassphrase, got \(error)")
                }
            }
        }
        #expect(try test.directory.contents() == before)
        let store = try await test.open()
        #expect(try await store.lookup(table: "todo", id: "a")?["text"] == "hello")
        try await store.close()
    }

    @Test func missingEnvelopeIsKeyMaterialMissingAndNeverRecreates() async throws {
        let test = try await makeClosedStore()
        defer { test.directory.remove() }
        try FileManager.default.removeItem(at: KeyEnvelope.url(forDatabase: test.url))
        let before = try test.directory.contents()
        for create in [false, true] {
            do {
                _ = try await SQLiteStore.open(at: test.url, encryption: .passphrase(test.passphrase), options: options(create: create))
                Issue.record("opened without key material")
            } catch StoreError.keyMaterialMissing {
            } catch {
                Issue.record("expected keyMaterialMissing, got \(error)")
            }
        }
        #expect(try test.directory.contents() == before)
    }

    @Test func missingStoreIsNotCreatedUnlessAsked() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for encryption in [StoreEncryption.none, .passphrase(.testPassphrase())] {
            do {
                _ = try await SQLiteStore.open(at: directory.file("none.db"), encryption: encryption, options: options())
                Issue.record("opened a store that does not exist")
            } catch StoreError.storeNotFound {
            } catch {
                Issue.record("expected storeNotFound, got \(error)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func plainAndEncryptedStoresAreNotConfused() async throws {
        let (plain, plainStore) = try await TestStore.make(.plain)
        defer { plain.directory.remove() }
        try await plainStore.upsert(table: "t", items: [["id": "a"]])
        try await plainStore.close()
        let plainBefore = try plain.directory.contents()
        do {
            _ = try await SQLiteStore.open(at: plain.url, encryption: .key(.random(count: 32)), options: options())
            Issue.record("a plain store opened with a key")
        } catch StoreError.encryptionMismatch {}
        #expect(try plain.directory.contents() == plainBefore)

        let encrypted = try await makeClosedStore()
        defer { encrypted.directory.remove() }
        let encryptedBefore = try encrypted.directory.contents()
        do {
            _ = try await SQLiteStore.open(at: encrypted.url, encryption: .none, options: options())
            Issue.record("an encrypted store opened without a key")
        } catch StoreError.encryptionMismatch {}
        #expect(try encrypted.directory.contents() == encryptedBefore)
    }

    @Test func emptyPassphraseIsRefusedBeforeAnyFileIsWritten() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        await #expect(throws: StoreError.self) {
            _ = try await SQLiteStore.open(at: directory.file("s.db"), encryption: .passphrase(SecretBytes([])), options: options(create: true))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func unicodePassphrasesAreNormalized() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = directory.file("s.db")
        let composed = SecretBytes(Array("Caf\u{00E9} r\u{00E9}sum\u{00E9} 42".utf8))
        let decomposed = SecretBytes(Array("Cafe\u{0301} re\u{0301}sume\u{0301} 42".utf8))
        let store = try await SQLiteStore.open(at: url, encryption: .passphrase(composed), options: options(create: true))
        try await store.close()
        let again = try await SQLiteStore.open(at: url, encryption: .passphrase(decomposed), options: options())
        try await again.close()
    }

    @Test(arguments: StoreKind.allCases)
    func filesAreOwnerOnly(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(table: "t", items: [["id": "a"]])
        for file in try test.files() {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.lastPathComponent) has mode \(String(mode ?? 0, radix: 8))")
        }
        try await store.close()
    }

    /// A key-file write killed before its rename leaves its temporary file (found by the chaos
    /// suite, PostgreSQL seed 60082: a device killed during a passphrase change, and
    /// `sync-keys verify` then named the file a stray). The next opening removes it, unless a key
    /// change holds the store's lock (its own temporary file may be the one).
    @Test func openingRemovesTheTemporaryKeyFileOfAKilledKeyChange() async throws {
        let test = try await makeClosedStore()
        defer { test.directory.remove() }
        let leftover = URL(fileURLWithPath: test.url.path + ".keys.tmp-A2269D0E")
        #expect(FileManager.default.createFile(atPath: leftover.path, contents: Data("{\"format\":".utf8)))

        do {
            let held = try #require(try StoreLock.acquire(for: test.url, mode: .shared))
            let whileHeld = try await test.open()
            try await whileHeld.close()
            #expect(FileManager.default.fileExists(atPath: leftover.path), "removed while a key change held the lock")
            withExtendedLifetime(held) {}
        }

        let store = try await test.open()
        #expect(try await store.lookup(table: "todo", id: "a")?["text"] == "hello")
        try await store.close()
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }
}
