import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// An attachment whose content, name and content type carry markers, written into a store as the
/// SDK writes one: the file through the vault (content in chunks), then its row and metadata in one
/// transaction. `duringWrite` runs after each chunk is handed over.
func attachMarked(
    _ store: SQLiteStore, markers: Markers, id: String = UUID().uuidString.lowercased(), duringWrite: () throws -> Void = {}
) async throws -> StagedAttachment {
    let chunk = Array(Array(repeating: markers.ascii[0] + " " + markers.unicode[0] + "\n", count: 2000).joined().utf8)
    var left = 5
    let staged = try store.attachmentVault.write(table: "records", id: id) {
        try duringWrite()
        guard left > 0 else { return nil }
        left -= 1
        return chunk
    }
    let name = markers.ascii[1], type = markers.unicode[1]
    try await store.writeAttachments { writer, rows in
        try rows.insert(staged)
        try writer.upsert(
            table: "records__attachments",
            items: [["id": .string(id), "itemId": "r0", "name": .string(name), "contentType": .string(type), "size": .int(staged.size)]],
            ignoreMissingColumns: false)
    }
    store.attachmentVault.settle(staged, committed: true)
    return staged
}

/// The at-rest checks of the compliance catalogue for attachments: no plaintext, name or content
/// type of a marked attachment anywhere under the store's directory (its attachment files and the
/// temporary files they are written through included), while open and after close; the control:
/// the same scan finds them in a plain store.
@Suite struct ComplianceAttachmentTests {
    @Test func noMarkerOfAnAttachmentOnDisk() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        defer { test.directory.remove() }
        let markers = Markers()
        var temporaryScans = 0
        _ = try await attachMarked(store, markers: markers) {
            // While the content streams in, its temporary file holds only ciphertext.
            let files = try regularFiles(under: store.attachmentVault.directory)
            if files.contains(where: { $0.lastPathComponent.hasSuffix(".tmp") }) { temporaryScans += 1 }
            let hits = try markerHits(markers.all, in: files)
            #expect(hits == [])
        }
        #expect(temporaryScans >= 4)
        let files = try regularFiles(under: test.directory.url)
        #expect(files.contains { $0.pathExtension == "csat" })
        #expect(!files.contains { $0.lastPathComponent.hasSuffix(".tmp") })
        #expect(try markerHits(markers.all, in: files) == [])
        try await store.close()
        #expect(try markerHits(markers.all, in: try regularFiles(under: test.directory.url)) == [])
        // The directory is the store's own.
        let mode = try FileManager.default.attributesOfItem(atPath: store.attachmentVault.directory.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test func theScanFindsTheMarkersInAPlainStore() async throws {
        let (test, store) = try await TestStore.make(.plain)
        defer { test.directory.remove() }
        let markers = Markers()
        _ = try await attachMarked(store, markers: markers)
        try await store.close()
        let hits = try markerHits([markers.ascii[0], markers.unicode[0]], in: try regularFiles(under: store.attachmentVault.directory))
        #expect(hits.count >= 2)
    }

    @Test func aFileWithoutACommittedRowIsSweptAtOpen() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        defer { test.directory.remove() }
        let kept = try await attachMarked(store, markers: Markers())
        // A file whose row never committed (a crash between the rename and the commit), and a
        // temporary file left by a crash in the middle of a write.
        let orphan = try store.attachmentVault.write(table: "records", id: "orphan") { nil }
        try Data([1, 2, 3]).write(to: store.attachmentVault.directory.appendingPathComponent(".crashed.tmp"))
        try await store.close()
        let reopened = try await test.open()
        let names = try FileManager.default.contentsOfDirectory(atPath: reopened.attachmentVault.directory.path)
        #expect(names == [kept.file])
        #expect(orphan.file != kept.file)
        try await reopened.close()
    }
}
