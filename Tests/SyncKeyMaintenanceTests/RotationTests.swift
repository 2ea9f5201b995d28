import Foundation
import SyncKeys
import SyncSQL
import SyncSQLite
import SyncStore
import SyncTestSupport
import Testing

@testable import SyncKeyMaintenance

/// `StoreKeys.rotateDataKey` on an encrypted store: the byte copy re-encrypted in place under the
/// new key holds exactly what the store held, only the new key opens it, and a copy that is
/// damaged or cannot be written leaves the store, its key envelope and its directory as they were.
@Suite struct RotationTests {
    /// An encrypted store closed cleanly, with tables of every kind beside the store's own:
    /// indexes, an AUTOINCREMENT table (`sqlite_sequence`), a WITHOUT ROWID table, overflow pages
    /// and a header value.
    static func makeStore() async throws -> TestStore {
        let (test, store) = try await TestStore.make(.encrypted)
        try await store.close()
        let connection = try open(test.url, key: try dataKey(of: test))
        defer { connection.close() }
        try connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT, body BLOB, score REAL)")
        try connection.execute("CREATE INDEX notes_title ON notes (title, score)")
        try connection.execute("CREATE TABLE tags (name TEXT PRIMARY KEY, uses INTEGER) WITHOUT ROWID")
        try connection.execute("CREATE UNIQUE INDEX tags_uses ON tags (uses, name)")
        try connection.execute("PRAGMA user_version = 7")
        try connection.execute("BEGIN")
        var generator = SeededGenerator(seed: 11)
        for i in 0..<3_000 {
            // Every 50th body spills onto overflow pages.
            let body = (0..<(i % 50 == 0 ? 9_000 : 120)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try connection.execute(
                "INSERT INTO notes (title, body, score) VALUES (?, ?, ?)",
                [.text("note \(i % 97)"), .blob(body), .real(Double(i) / 3)])
            try connection.execute("INSERT INTO tags (name, uses) VALUES (?, ?)", [.text("tag-\(i)"), .integer(Int64(i * 7))])
        }
        try connection.execute("COMMIT")
        return test
    }

    static func dataKey(of test: TestStore) throws -> SecretBytes {
        try KeyEnvelope.read(from: KeyEnvelope.url(forDatabase: test.url))
            .unlockKeys(secret: test.passphrase, allowInsecureProfile: true).dataKey
    }

    static func open(_ url: URL, key: SecretBytes) throws -> Connection {
        try key.withUnsafeBytes { try Connection.open(path: url.path, mode: .readWrite, key: $0) }
    }

    static func digest(of url: URL, key: SecretBytes) throws -> DatabaseDigest {
        let connection = try open(url, key: key)
        defer { connection.close() }
        return try DatabaseDigest.compute(connection)
    }

    /// The bytes of every file under the store's directory, by relative path.
    static func files(of test: TestStore) throws -> [String: Data] {
        try fileContents(in: test.directory.url)
    }

    @Test func rotationKeepsEveryTableIndexAndSystemTableUnderTheNewKeyAlone() async throws {
        let test = try await Self.makeStore()
        defer { test.directory.remove() }
        let oldKey = try Self.dataKey(of: test)
        let before = try Self.digest(of: test.url, key: oldKey)
        #expect(before.tables.map(\.name).contains("sqlite_sequence") && before.tables.contains { $0.name == "tags" && $0.rows == 3_000 })

        var events: [KeyMaintenanceEvent] = []
        let rotation = try StoreKeys.rotateDataKey(forDatabase: test.url, passphrase: test.passphrase, allowInsecureProfile: true) {
            events.append($0)
        }

        let newKey = try Self.dataKey(of: test)
        #expect(newKey != oldKey)
        #expect(!StoreFiles.isPlainDatabase(at: test.url))
        #expect(try Self.digest(of: test.url, key: newKey) == before)
        let connection = try Self.open(test.url, key: newKey)
        #expect(try connection.integrityCheck() == ["ok"])
        #expect(try connection.scalar("PRAGMA user_version")?.integerValue == 7)
        connection.close()
        #expect(throws: SQLiteError.self) { try Self.open(test.url, key: oldKey).close() }
        #expect(Set(try Self.files(of: test).keys) == ["store.db", "store.db.keys", "store.db.lock"])

        // The steps in order, with progress reports in the copy that end at every page.
        let steps = events.compactMap { event -> KeyMaintenanceStep? in
            if case .step(let step) = event { return step }
            return nil
        }
        #expect(
            steps == [
                .locked, .envelopeRotating, .checkpointed, .attached, .exported, .synced, .verified, .sourceClosed, .renamed,
                .sideFilesRemoved, .directorySynced, .envelopeActive,
            ])
        let progress = events.compactMap { event -> Int? in
            if case .progress(let written, let total) = event, total == rotation.pages { return written }
            return nil
        }
        #expect(progress.count == events.count - steps.count, "every report counts the pages of the database")
        #expect(progress.count >= 8 && progress == progress.sorted() && progress.last == rotation.pages)
        let attached = try #require(events.firstIndex(of: .step(.attached)))
        let exported = try #require(events.firstIndex(of: .step(.exported)))
        #expect(events[attached + 1..<exported].allSatisfy { if case .progress = $0 { true } else { false } })
        #expect(rotation.pages == Int((try FileManager.default.attributesOfItem(atPath: test.url.path)[.size] as? Int ?? 0) / 4_096))
    }

    /// Runs a rotation whose report hook acts on the scratch file at the first event `when`
    /// accepts, expects it to fail with `expected`, and checks that every file of the store is as
    /// it was.
    static func expectRefused(
        _ label: String, when: @escaping (KeyMaintenanceEvent) -> Bool, expected: StoreError, _ act: @escaping (URL) throws -> Void
    ) async throws {
        let test = try await Self.makeStore()
        defer { test.directory.remove() }
        let oldKey = try Self.dataKey(of: test)
        let content = try Self.digest(of: test.url, key: oldKey)
        let before = try Self.files(of: test)
        let scratch = StoreFiles.exportFile(of: test.url)
        var acted = false
        #expect(throws: expected, "\(label)") {
            try StoreKeys.rotateDataKey(forDatabase: test.url, passphrase: test.passphrase, allowInsecureProfile: true) { event in
                guard when(event), !acted else { return }
                acted = true
                #expect(throws: Never.self) { try act(scratch) }
            }
        }
        #expect(acted, "\(label)")
        #expect(try Self.files(of: test) == before, "\(label): every file as it was, no scratch file left")
        #expect(try Self.dataKey(of: test) == oldKey, "\(label)")
        #expect(try Self.digest(of: test.url, key: oldKey) == content, "\(label)")
    }

    @Test(arguments: [1, 2, 40, 120])
    func aCopyDamagedAfterItsReencryptionIsRefused(page: Int) async throws {
        try await Self.expectRefused("page \(page)", when: { $0 == .step(.exported) }, expected: .verificationFailed("")) { scratch in
            let handle = try FileHandle(forUpdating: scratch)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64((page - 1) * 4_096 + 2_000))
            let bytes = try #require(try handle.read(upToCount: 16))
            try handle.seek(toOffset: UInt64((page - 1) * 4_096 + 2_000))
            try handle.write(contentsOf: Data(bytes.map { $0 ^ 0x5A }))
        }
    }

    @Test func aCopyCutShortBeforeItsReencryptionIsRefused() async throws {
        // The copy counts a page half: its last report is about half the pages, and the
        // re-encryption of the copy comes next.
        let copied: (KeyMaintenanceEvent) -> Bool = { event in
            guard case .progress(let written, let total) = event else { return false }
            return written < total && written >= (total - 1) / 2
        }
        try await Self.expectRefused("cut", when: copied, expected: .verificationFailed("")) { scratch in
            let size = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path)[.size] as? Int)
            #expect(truncate(scratch.path, off_t(size / 2)) == 0)
        }
    }

    @Test func aScratchFileThatCannotBeOpenedForTheCopyLeavesTheStoreAsItWas() async throws {
        try await Self.expectRefused("symlink", when: { $0 == .step(.attached) }, expected: .fileSystem("")) { scratch in
            // The copy opens its scratch file without following links: a link put in its place
            // stops the copy before any byte is written.
            try FileManager.default.removeItem(at: scratch)
            try FileManager.default.createSymbolicLink(atPath: scratch.path, withDestinationPath: "/dev/null")
        }
    }
}
