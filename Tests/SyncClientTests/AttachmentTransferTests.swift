import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

/// The local half of attachment transfers: uploads and downloads queued in the store's system
/// tables (surviving restarts, with back-off), uploads ready only once their rows are pushed, the
/// local content as an upload's source, and a download sink that seals and checks what it gets.
@Suite struct AttachmentTransferTests {
    @Test(arguments: StoreKind.allCases)
    func anUploadIsQueuedAndReadyOnlyAfterItsRowsArePushed(kind: StoreKind) async throws {
        let f = try await ClientFixture.make(kind)
        let table = try f.table()
        try await table.insert(["id": "a"])
        let content = Array((0..<100_000).map { UInt8(truncatingIfNeeded: $0 / 3) })
        let attachment = try await table.attach(.bytes(content), to: "a", name: "p.jpg", contentType: "image/jpeg")
        let queued = try await f.context.attachmentTransfers()
        #expect(queued.map(\.direction) == [.upload] && queued.first?.attachmentId == attachment.id)
        #expect(try await f.context.readyAttachmentTransfers().isEmpty, "the rows are not pushed yet")
        f.transport.enqueueEcho()
        f.transport.enqueueEcho()
        await f.context.setAttachmentTransfer(chunkBytes: 1 << 20, retry: AttachmentRetry(attempts: 1))
        let beforePush = Date()
        try await f.context.push()
        // The push tried the upload after the rows: no answer (none scripted), so it backs off.
        #expect(f.transport.requests.map(\.method) == [.post, .post, .head])

        // The queue survives a restart; the upload is ready after its back-off, and its source is
        // the content.
        let g = try await f.reopen()
        let deferred = try #require(try await g.context.attachmentTransfers().first)
        #expect(deferred.attempts == 1 && deferred.lastError != nil && deferred.notBefore >= beforePush.addingTimeInterval(2))
        #expect(try await g.context.readyAttachmentTransfers(now: beforePush).isEmpty)
        let ready = try await g.context.readyAttachmentTransfers(now: deferred.notBefore)
        #expect(ready == [deferred])
        let source = try await g.context.uploadSource(table: "todo", attachmentId: attachment.id)
        #expect(source.size == 100_000)
        #expect(try await source.read(at: 99_990, count: 100) == Array(content.suffix(10)))

        // A failure backs off longer; completion empties the queue.
        let now = Date()
        try await g.context.recordFailure(of: try #require(ready.first), message: "HTTP 503", now: now)
        let failed = try #require(try await g.context.attachmentTransfers().first)
        #expect(failed.attempts == 2 && failed.lastError == "HTTP 503")
        #expect(try await g.context.readyAttachmentTransfers(now: now.addingTimeInterval(3)).isEmpty)
        #expect(try await g.context.readyAttachmentTransfers(now: now.addingTimeInterval(5)).count == 1)
        try await g.context.complete(failed)
        #expect(try await g.context.attachmentTransfers().isEmpty)
        try await g.dispose()
    }

    /// A metadata row as a pull brings it: the content is elsewhere.
    static func pulledRow(_ f: ClientFixture, content: [UInt8]) async throws -> String {
        let id = UUID().uuidString.lowercased()
        try await f.store.upsert(
            table: "todo__attachments",
            items: [
                [
                    "id": .string(id), "itemId": "a", "name": "scan.pdf", "contentType": "application/pdf", "size": .int(Int64(content.count)),
                    "sha256": .string(hexDigest(content)),
                ]
            ])
        return id
    }

    @Test(arguments: StoreKind.allCases)
    func aDownloadIsQueuedAndItsSinkSealsAndChecksTheContent(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(["id": "a"])
            let content = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 5) }
            let id = try await Self.pulledRow(f, content: content)
            await #expect(throws: SyncError.attachmentContentUnavailable) { _ = try await table.content(ofAttachment: id) }
            try await table.requestDownload(ofAttachment: id)
            #expect(try await f.context.attachmentTransfers().map(\.direction) == [.download])

            let sink = try await f.context.downloadSink(table: "todo", attachmentId: id)
            await #expect(throws: SyncError.invalidAttachment) { try await sink.write([1], at: 5) }
            var offset = 0
            while offset < content.count {
                let end = min(offset + 65_000, content.count)
                try await sink.write(Array(content[offset..<end]), at: Int64(offset))
                offset = end
            }
            try await sink.finish()
            #expect(try await collect(try await table.content(ofAttachment: id)) == content)
            #expect(try await f.context.attachmentTransfers().isEmpty)
            #expect(try attachmentFiles(f).count == 1)

            // Content that does not match the row's SHA-256 is refused and leaves nothing.
            let other = try await Self.pulledRow(f, content: [1, 2, 3])
            let bad = try await f.context.downloadSink(table: "todo", attachmentId: other)
            try await bad.write([1, 2, 4], at: 0)
            await #expect(throws: SyncError.attachmentDamaged) { try await bad.finish() }
            await #expect(throws: SyncError.attachmentContentUnavailable) { _ = try await table.content(ofAttachment: other) }
            #expect(try attachmentFiles(f).count == 1)
        }
    }
}

/// A typed model carries a reference to an attachment; it round-trips through the typed table
/// and resolves to the attachment.
@Suite struct AttachmentReferenceTests {
    struct Inspection: Codable, Sendable, Equatable {
        var id: String
        var text: String
        var photo: AttachmentReference?
    }

    @Test(arguments: StoreKind.allCases)
    func aTypedModelCarriesAReference(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let typed = try f.context.syncTable("todo", as: Inspection.self)
            _ = try await typed.insert(Inspection(id: "i1", text: "Boiler", photo: nil))
            let attachment = try await f.table().attach(.bytes([1, 2, 3]), to: "i1", name: "b.jpg", contentType: "image/jpeg")
            try await typed.update(Inspection(id: "i1", text: "Boiler", photo: attachment.reference))
            let read = try #require(try await typed.lookup(id: "i1"))
            #expect(read.photo == AttachmentReference(id: attachment.id, name: "b.jpg"))
            #expect(try await f.table().attachment(id: try #require(read.photo?.id)) == attachment)
        }
    }
}
