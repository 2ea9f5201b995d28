import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// An item with two complete attachments, and the checks that all of it is as it was.
enum CascadeFixture {
    static let first = AttachmentFixture.content(300_000, seed: 11)
    static let second = AttachmentFixture.content(1234, seed: 12)
    static let attachments = [("a1", first), ("a2", second)]

    /// Item `p1` of `photos` with attachments `a1` and `a2`, both uploaded.
    static func seed(_ server: TestServer) async throws {
        try #require(try await server.send(.post, "/tables/photos", object: ["id": "p1"]).status == .created)
        for (id, bytes) in attachments {
            let row = try AttachmentFixture.row(id, item: "p1", content: bytes)
            try #require(try await server.send(.post, "/tables/photos__attachments", object: row).status == .created)
            try #require(try await server.upload("photos", id, bytes, at: 0).status == .noContent)
        }
    }

    /// The item, both rows and both contents are there, as seeded.
    static func expectUntouched(_ server: TestServer, _ comment: Comment) async throws {
        #expect(try await server.send(.get, "/tables/photos/p1").status == .ok, comment)
        for (id, bytes) in attachments {
            #expect(try await server.send(.get, "/tables/photos__attachments/\(id)").status == .ok, comment)
            let content = try await server.download("photos", id)
            #expect(content.status == .ok && content.body == Data(bytes), comment)
        }
    }

    /// The item and both rows are deleted, and neither content is served.
    static func expectDeleted(_ server: TestServer) async throws {
        #expect(try await server.send(.get, "/tables/photos/p1").status == .notFound)
        for (id, _) in attachments {
            #expect(try await server.send(.get, "/tables/photos__attachments/\(id)").status == .notFound)
            #expect(try await server.download("photos", id).status == .notFound)
        }
    }

    /// The files left in an SQLite file's content directory.
    static func files(_ access: DatabaseAccess) throws -> [String] {
        guard let directory = access.contentDirectory else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}

/// Deleting an item deletes its attachment rows and their content in one transaction, on every
/// storage: a failure at any step leaves the item, the rows and the content as they were.
@Suite struct AttachmentCascadeAtomicityTests {
    @Test(arguments: ReachableEngine.allCases, [true, false])
    func aFailingDeleteOfTheRowsLeavesTheItemTheRowsAndTheContent(_ engine: ReachableEngine, softDelete: Bool) async throws {
        try await TestServer.run(.testing(softDelete: softDelete), reaching: engine) { server, access in
            try await CascadeFixture.seed(server)
            try await access.failWrites(of: "photos__attachments", on: softDelete ? "UPDATE" : "DELETE", engine: engine)
            let refused = try await server.send(.delete, "/tables/photos/p1")
            #expect(refused.status == .internalServerError)
            try await CascadeFixture.expectUntouched(server, "the rows' delete failed: nothing changed")
        }
    }

    @Test(arguments: ReachableEngine.allCases)
    func aFailingRemovalOfTheContentLeavesTheItemTheRowsAndTheContent(_ engine: ReachableEngine) async throws {
        try await TestServer.run(.testing(), reaching: engine) { server, access in
            try await CascadeFixture.seed(server)
            let stored = try CascadeFixture.files(access)
            #expect(stored.count == (engine == .sqliteFile ? 2 : 0))
            switch engine {
            case .sqliteFile:
                // A non-empty directory where a content file would be moved away: the move fails.
                for file in stored {
                    let blocker = "\(access.contentDirectory ?? "")/\(file).removed"
                    try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: false)
                    try Data([1]).write(to: URL(fileURLWithPath: blocker + "/x"))
                }
            case .postgres:
                try await access.failWrites(of: "__ciphersync_attachments", on: "DELETE", engine: engine)
            }
            let refused = try await server.send(.delete, "/tables/photos/p1")
            #expect(refused.status == .internalServerError)
            try await CascadeFixture.expectUntouched(server, "the content's removal failed: nothing changed")

            switch engine {
            case .sqliteFile:
                for file in stored { try FileManager.default.removeItem(atPath: "\(access.contentDirectory ?? "")/\(file).removed") }
            case .postgres:
                try await access.execute("DROP TRIGGER \"fail_delete_ciphersyncattachments\" ON \"__ciphersync_attachments\"")
            }
            #expect(try await server.send(.delete, "/tables/photos/p1").status == .ok)
            try await CascadeFixture.expectDeleted(server)
            #expect(try CascadeFixture.files(access).isEmpty, "no content file is left behind")
        }
    }
}

/// A batch that deletes an item and is then rolled back keeps the item's attachment content: the
/// content goes only once the deleting transaction committed.
@Suite struct AttachmentBatchRollbackTests {
    static func batch(_ operations: [JSONObject]) -> JSONObject {
        ["operations": .array(operations.map(JSONValue.object))]
    }

    @Test(arguments: ReachableEngine.allCases)
    func aRolledBackBatchKeepsTheContentOfTheItemItDeleted(_ engine: ReachableEngine) async throws {
        try await TestServer.run(.testing(), reaching: engine) { server, access in
            try await CascadeFixture.seed(server)
            // The batch's second write fails in the database, after the delete and its cascade ran.
            try await access.failWrites(of: "photos", on: "INSERT", when: "ROW.\"id\" = 'boom'", engine: engine)
            let failed = try await server.send(
                .post, "/batch/photos", object: Self.batch([["method": "DELETE", "id": "p1"], ["method": "POST", "item": ["id": "boom"]]]))
            #expect(failed.status == .internalServerError)
            try await CascadeFixture.expectUntouched(server, "the batch rolled back: its delete did not happen")

            let committed = try await server.send(.post, "/batch/photos", object: Self.batch([["method": "DELETE", "id": "p1"]]))
            #expect(committed.status == .ok && committed.object["results"]?.arrayValue?.first?.objectValue?["status"] == .int(200))
            try await CascadeFixture.expectDeleted(server)
            #expect(try CascadeFixture.files(access).isEmpty, "the committed batch removed the content")
        }
    }
}
