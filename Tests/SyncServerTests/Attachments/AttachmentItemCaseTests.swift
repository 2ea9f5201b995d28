import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// An attachment's `itemId` names its item whatever the ASCII case of its letters, as every id
/// does (docs/protocol.md, "Ids and letter case"): deleting the item under any spelling deletes
/// the attachments whose `itemId` is another spelling of it, and no others.
@Suite struct AttachmentItemCaseTests {
    @Test(arguments: StorageFactory.all, [true, false])
    func deletingAnItemDeletesTheAttachmentsNamingItInAnyCase(_ factory: StorageFactory, softDelete: Bool) async throws {
        try await TestServer.run(.testing(softDelete: softDelete), storage: factory) { server in
            let bytes = AttachmentFixture.content(5000, seed: 21)
            for item in ["Photo-1", "Éclair"] {
                try #require(try await server.send(.post, "/tables/photos", object: ["id": .string(item)]).status == .created)
            }
            // Three spellings of Photo-1's id; "éclair" is another item's (only ASCII letters fold),
            // so its row is refused.
            let rows = [("a1", "Photo-1"), ("a2", "photo-1"), ("a3", "PHOTO-1"), ("b1", "Éclair")]
            for (id, item) in rows {
                let row = try AttachmentFixture.row(id, item: item, content: bytes)
                try #require(try await server.send(.post, "/tables/photos__attachments", object: row).status == .created)
                try #require(try await server.upload("photos", id, bytes, at: 0).status == .noContent)
            }
            let other = try AttachmentFixture.row("b2", item: "éclair", content: bytes)
            #expect(try await server.send(.post, "/tables/photos__attachments", object: other).errorMessage == "item not found")

            #expect(try await server.send(.delete, "/tables/photos/pHoTo-1").status == .ok)

            for (id, _) in rows.prefix(3) {
                #expect(try await server.send(.get, "/tables/photos__attachments/\(id)").status == .notFound, "\(id) went with its item")
                #expect(try await server.download("photos", id).status == .notFound, "\(id)'s content went with its item")
            }
            let kept = try await server.download("photos", "b1")
            #expect(kept.status == .ok && kept.body == Data(bytes), "another item's attachment stays")
            let all = try await server.send(.get, "/tables/photos__attachments?__includeDeleted=true").array
            let deletedIDs = all.filter { $0["deleted"] == .bool(true) }.compactMap { $0["id"]?.stringValue }.sorted()
            #expect(deletedIDs == (softDelete ? ["a1", "a2", "a3"] : []))
            #expect(all.compactMap { $0["id"]?.stringValue }.sorted() == (softDelete ? ["a1", "a2", "a3", "b1"] : ["b1"]))
        }
    }
}
