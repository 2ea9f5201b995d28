import Foundation
import SyncKeys
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

/// The files of a fixture's attachment directory (no temporary files are left behind).
func attachmentFiles(_ f: ClientFixture) throws -> [String] {
    let directory = f.store.attachmentVault.directory.path
    guard FileManager.default.fileExists(atPath: directory) else { return [] }
    return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// Every byte of a stream.
func collect(_ content: AttachmentContent, chunkSize: Int = 1000) async throws -> [UInt8] {
    var bytes: [UInt8] = []
    for try await chunk in content.bytes(chunkSize: chunkSize) { bytes += chunk }
    return bytes
}

/// Attaching content to an item, listing, reading back, exporting, replacing and deleting it,
/// offline, on both stores; the metadata row is queued after the item's insert.
@Suite struct AttachmentTests {
    @Test(arguments: StoreKind.allCases)
    func attachedBytesReadBackAndTheMetadataIsQueuedAfterTheItem(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "item-1", "text": "inspection"])
            let content = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
            let attachment = try await table.attach(.bytes(content), to: "item-1", name: "photo.jpg", contentType: "image/jpeg")
            #expect(attachment.size == 150_000)
            #expect(attachment.sha256 == hexDigest(content))
            #expect(try await table.attachments(of: "item-1") == [attachment])
            #expect(try await table.attachment(id: attachment.id) == attachment)

            let stored = try #require(try await f.row(attachment.id, table: "todo__attachments"))
            #expect(Set(stored.keys) == ["id", "itemId", "name", "contentType", "size", "sha256"])
            #expect(stored["itemId"] == "item-1" && stored["size"]?.intValue == 150_000)
            let operations = try await f.operations()
            #expect(operations.map(\.table) == ["todo", "todo__attachments"])
            #expect(operations.map(\.kind) == [.insert, .insert])

            let read = try await table.content(ofAttachment: attachment.id)
            #expect(read.size == 150_000)
            #expect(try await collect(read, chunkSize: 65_000) == content)
            #expect(try await read.read(at: 65_530, count: 10) == Array(content[65_530..<65_540]))
            let exported = f.test.directory.file("export.jpg")
            try await read.export(to: exported)
            #expect(try [UInt8](Data(contentsOf: exported)) == content)
            // An existing file is never overwritten.
            await #expect(throws: SyncError.invalidAttachment) { try await read.export(to: exported) }
            #expect(try attachmentFiles(f).count == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFileIsStreamedIn(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            let source = f.test.directory.file("scan.pdf")
            let content = (0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }
            try Data(content).write(to: source)
            let attachment = try await table.attach(.file(source), to: "a", name: "scan.pdf", contentType: "application/pdf")
            #expect(attachment.size == Int64(content.count) && attachment.sha256 == hexDigest(content))
            #expect(try await collect(try await table.content(ofAttachment: attachment.id), chunkSize: 1 << 20) == content)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func invalidAttachmentsChangeNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            for name in ["", "a/b", "nul\u{0}", String(repeating: "n", count: 256)] {
                await #expect(throws: SyncError.invalidAttachment) {
                    try await table.attach(.bytes([1]), to: "a", name: name, contentType: "text/plain")
                }
            }
            for type in ["", "text/\u{1}plain"] {
                await #expect(throws: SyncError.invalidAttachment) { try await table.attach(.bytes([1]), to: "a", name: "x", contentType: type) }
            }
            await #expect(throws: SyncError.invalidAttachment) {
                try await table.attach(.bytes([1]), to: "missing", name: "x", contentType: "text/plain")
            }
            await #expect(throws: SyncError.invalidAttachment) {
                try await table.attach(.file(f.test.directory.file("none")), to: "a", name: "x", contentType: "text/plain")
            }
            await #expect(throws: SyncError.attachmentNotFound) { _ = try await table.content(ofAttachment: "nope") }
            await #expect(throws: SyncError.attachmentNotFound) { try await table.deleteAttachment(id: "nope") }
            #expect(try await f.operations().count == 1)
            #expect(try attachmentFiles(f) == [])
            #expect(try await table.attachments(of: "a") == [])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func replaceAndDelete(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            let first = try await table.attach(.bytes(Array("one".utf8)), to: "a", name: "note.txt", contentType: "text/plain")
            let second = try await table.replaceAttachment(id: first.id, with: .bytes(Array("two!".utf8)))
            #expect(second.id != first.id && second.name == "note.txt" && second.contentType == "text/plain" && second.size == 4)
            #expect(try await table.attachments(of: "a") == [second])
            #expect(try await collect(try await table.content(ofAttachment: second.id)) == Array("two!".utf8))
            #expect(try attachmentFiles(f).count == 1)
            try await table.deleteAttachment(id: second.id)
            #expect(try await table.attachments(of: "a") == [])
            #expect(try attachmentFiles(f) == [])
            // Never pushed: the attachments' inserts were cancelled by their deletes.
            #expect(try await f.operations().map(\.table) == ["todo"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deletingTheItemDeletesItsAttachmentsLocally(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            try await table.insert(["id": "b"])
            try await table.attach(.bytes([1, 2, 3]), to: "a", name: "1", contentType: "x/y")
            try await table.attach(.bytes([4, 5]), to: "a", name: "2", contentType: "x/y")
            let kept = try await table.attach(.bytes([6]), to: "b", name: "3", contentType: "x/y")
            try await table.delete(id: "a")
            #expect(try await table.attachments(of: "a") == [])
            #expect(try await table.attachments(of: "b") == [kept])
            #expect(try attachmentFiles(f).count == 1)
            #expect(try await f.operations().map(\.itemId) == ["b", kept.id])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func attachmentsSurviveARestart(kind: StoreKind) async throws {
        let f = try await ClientFixture.make(kind)
        let table = try f.table()
        try await table.insert(["id": "a"])
        let attachment = try await table.attach(.bytes(Array(repeating: 9, count: 70_000)), to: "a", name: "n", contentType: "x/y")
        let g = try await f.reopen()
        let read = try await collect(try await g.table().content(ofAttachment: attachment.id))
        try await g.dispose()
        #expect(read == Array(repeating: 9, count: 70_000))
    }

    @Test(arguments: StoreKind.allCases)
    func purgeRemovesTheFiles(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            try await table.attach(.bytes([1, 2, 3]), to: "a", name: "1", contentType: "x/y")
            f.transport.enqueueEcho()
            f.transport.enqueueEcho()
            await f.context.setAttachmentTransfer(chunkBytes: 1 << 20, retry: AttachmentRetry(attempts: 1))
            try await f.context.push()
            #expect(try await f.operations().isEmpty)
            // The rows first, then the upload's offset asked (unanswered here: it waits in the queue).
            #expect(f.transport.requests.map(\.line).prefix(2) == ["POST /app/tables/todo", "POST /app/tables/todo__attachments"])
            #expect(f.transport.requests.dropFirst(2).map(\.method) == [.head])
            try await table.purge()
            #expect(try attachmentFiles(f) == [])
            #expect(try await f.rows("todo__attachments") == [])
        }
    }

    @Test func aStoreWithoutAttachmentsSaysSo() async throws {
        // The spy is a LocalStore of its own that keeps no attachment files.
        try await withClient(.plain, spied: true) { f in
            try await f.table().insert(["id": "a"])
            await #expect(throws: SyncError.attachmentsUnsupported) {
                try await f.table().attach(.bytes([1]), to: "a", name: "x", contentType: "x/y")
            }
        }
    }
}

func hexDigest(_ bytes: [UInt8]) -> String {
    (try? KeyDerivation.sha256(bytes))?.map { String(format: "%02x", $0) }.joined() ?? ""
}
