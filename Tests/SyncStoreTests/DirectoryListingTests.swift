import Foundation
import SyncStore
import SyncTestSupport
import Testing

/// The test support's listings of a store's files walk its subdirectories (the store keeps its
/// attachments in `<db>.attachments/`): every regular file, by its path relative to the directory.
@Suite struct DirectoryListingTests {
    @Test func contentsAndFileURLsWalkSubdirectories() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("top".utf8).write(to: directory.file("a.db"))
        try FileManager.default.createDirectory(at: directory.file("a.db.attachments/deeper"), withIntermediateDirectories: true)
        try Data("nested".utf8).write(to: directory.file("a.db.attachments/f.csat"))
        try Data("deepest".utf8).write(to: directory.file("a.db.attachments/deeper/g.bin"))

        #expect(
            try directory.contents() == [
                "a.db": Data("top".utf8), "a.db.attachments/f.csat": Data("nested".utf8),
                "a.db.attachments/deeper/g.bin": Data("deepest".utf8),
            ])
        #expect(try directory.fileURLs().map(\.lastPathComponent).sorted() == ["a.db", "f.csat", "g.bin"])
    }

    @Test(arguments: StoreKind.allCases)
    func aStoresFilesIncludeItsAttachmentFiles(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let staged = try await attachMarked(store, markers: Markers())
        let attachments = test.url.lastPathComponent + ".attachments/" + staged.file
        #expect(try test.directory.contents().keys.contains(attachments))
        #expect(try test.files().contains { $0.lastPathComponent == staged.file })
        try await store.close()
    }
}
