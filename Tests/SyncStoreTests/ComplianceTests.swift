import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The at-rest checks of the compliance catalogue (encryption.md §6) that concern a store.
@Suite struct ComplianceTests {
    /// An encrypted store with markers in every table; returned open.
    func markedStore() async throws -> (TestStore, SQLiteStore, Markers) {
        let (test, store) = try await TestStore.make(.encrypted)
        let markers = Markers()
        try await markers.fill(store)
        return (test, store, markers)
    }

    // C01: the header is not the SQLite magic and not all zero.
    @Test func c01HeaderIsNotPlainSQLite() async throws {
        let (test, store, _) = try await markedStore()
        defer { test.directory.remove() }
        try await store.close()
        let header = [UInt8](try Data(contentsOf: test.url).prefix(16))
        #expect(header.count == 16)
        #expect(header != Array("SQLite format 3\0".utf8))
        #expect(header.contains { $0 != 0 })
        #expect(!SQLiteStore.isPlainDatabase(at: test.url))
    }

    // C02 / C38: the library is SQLCipher 3.4.1 with the OpenSSL provider on the store's connection.
    @Test func c02LibraryIdentity() async throws {
        let (test, store, _) = try await markedStore()
        defer { test.directory.remove() }
        let (version, provider) = try await store.withConnection { c in (try c.cipherVersion(), try c.cipherProvider()) }
        #expect(version == "3.4.1")
        #expect(provider == "openssl")
        try await store.close()
    }

    // C03: no marker, in any encoding, in the database, its WAL (open and after close) or the envelope.
    @Test func c03NoMarkerInAnyFile() async throws {
        let (test, store, markers) = try await markedStore()
        defer { test.directory.remove() }
        let whileOpen = try test.files()
        #expect(whileOpen.contains { $0.lastPathComponent.hasSuffix("-wal") })
        #expect(try markerHits(markers.all, in: whileOpen) == [])
        try await store.close()
        #expect(try markerHits(markers.all, in: try test.files()) == [])
    }

    // The control for C03: the same scan finds every marker in a plain store.
    @Test func c03ScanFindsMarkersInAPlainStore() async throws {
        let (test, store) = try await TestStore.make(.plain)
        defer { test.directory.remove() }
        let markers = Markers(count: 2)
        try await markers.fill(store)
        try await store.close()
        let hits = try markerHits(markers.all, in: try test.files())
        for marker in markers.all { #expect(hits.count >= 1, "\(marker) not found in a plain store") }
    }

    // C09: temp data never goes to files.
    @Test func c09TempStoreIsMemory() async throws {
        let (test, store, _) = try await markedStore()
        defer { test.directory.remove() }
        let (tempStore, options) = try await store.withConnection { c in
            (try c.integerPragma("temp_store"), try c.rows("PRAGMA compile_options").compactMap { $0.first?.textValue })
        }
        #expect(tempStore == 2)
        #expect(options.contains { $0 == "TEMP_STORE=2" || $0 == "TEMP_STORE=3" })
        try await store.close()
    }

    // C36: secure_delete is on, and a deleted queue entry is gone from the decrypted pages.
    @Test func c36DeletedQueueEntriesAreNotRecoverable() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        defer { test.directory.remove() }
        let kept = "KEPT" + UUID().uuidString, deleted = "GONE" + UUID().uuidString
        let doomed = try await store.write { w in
            _ = try w.addOperation(kind: .delete, table: "t", itemId: "k", item: ["text": .string(kept)])
            return try w.addOperation(kind: .delete, table: "t", itemId: "d", item: ["text": .string(deleted)])
        }
        try await store.close()
        let reopened = try await test.open()
        #expect(try await reopened.withConnection { try $0.integerPragma("secure_delete") } == 1)
        try await reopened.write { try $0.deleteOperation(id: doomed.id) }
        try await reopened.close()

        let key = try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: test.url))
            .unlock(passphrase: test.passphrase, allowInsecureProfile: true)
        let plaintext = try PageDecryptor.decrypt(file: test.url, key: key)
        #expect(contains(plaintext, Array(kept.utf8)), "decryption control: the kept entry must be visible")
        #expect(!contains(plaintext, Array(deleted.utf8)))
    }

    // C39: database, side files and envelope are 0600.
    @Test func c39FileModes() async throws {
        let (test, store, _) = try await markedStore()
        defer { test.directory.remove() }
        let files = try test.files()
        #expect(files.count >= 3)
        for file in files {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.lastPathComponent)")
        }
        try await store.close()
    }
}
