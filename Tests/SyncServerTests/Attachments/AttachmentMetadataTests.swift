import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// The companion table `T__attachments` of every table: an ordinary table of the protocol whose
/// rows are checked, belong to a live item of `T`, change only their name, and go with their item.
@Suite struct AttachmentMetadataTests {
    static func configuration(softDelete: Bool = true) -> ServerConfiguration {
        var configuration = ServerConfiguration.testing(softDelete: softDelete)
        configuration.maxAttachmentBytes = 1000
        return configuration
    }

    static let content = AttachmentFixture.content(100)

    /// An item `p1` of `photos`.
    static func seed(_ server: TestServer) async throws {
        try #require(try await server.send(.post, "/tables/photos", object: ["id": "p1", "title": "porch"]).status == .created)
    }

    @Test(arguments: StorageFactory.all)
    func aRowIsAnItemOfTheCompanionTable(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration(), storage: factory) { server in
            try await Self.seed(server)
            let inserted = try await server.send(
                .post, "/tables/photos__attachments", object: try AttachmentFixture.row("a1", item: "p1", content: Self.content))
            #expect(inserted.status == .created, "\(inserted.errorMessage ?? "")")
            #expect(inserted.object["size"] == 100 && inserted.object["deleted"] == false && inserted.eTag != nil)
            let listed = try await server.send(.get, "/tables/photos__attachments?$filter=" + ODataQuery.encode("itemId eq 'p1'"))
            #expect(listed.status == .ok && listed.array.map { $0["id"] } == ["a1"])
            let renamed = try await server.send(.patch, "/tables/photos__attachments/a1", object: ["name": "porch.jpg"])
            #expect(renamed.status == .ok && renamed.object["name"] == "porch.jpg")
        }
    }

    @Test func badRowsAreRefusedAndNothingIsWritten() async throws {
        try await TestServer.run(Self.configuration()) { server in
            try await Self.seed(server)
            let good = try AttachmentFixture.row("a1", item: "p1", content: Self.content)
            var bad: [(JSONObject, HTTPResponse.Status)] = []
            for property in ["itemId", "name", "contentType", "size", "sha256"] {
                var row = good
                row.removeValue(forKey: property)
                bad.append((row, .badRequest))
            }
            for (property, value) in [
                ("name", JSONValue.string("a/b")), ("name", ""), ("name", .string(String(repeating: "n", count: 256))), ("name", "a\u{0}b"),
                ("size", -1), ("size", "100"), ("size", 1.5), ("sha256", .string(String(repeating: "A", count: 64))),
                ("sha256", "abc"), ("itemId", 7), ("contentType", ""), ("extra", true),
            ] {
                var row = good
                row[property] = value
                bad.append((row, .badRequest))
            }
            var large = good
            large["size"] = 1001
            bad.append((large, .contentTooLarge))
            for (row, status) in bad {
                let reply = try await server.send(.post, "/tables/photos__attachments", object: row)
                #expect(reply.status == status, "\(row)")
                #expect(reply.errorMessage?.isEmpty == false)
            }
            let listed = try await server.send(.get, "/tables/photos__attachments?__includeDeleted=true")
            #expect(listed.status == .notFound || listed.array.isEmpty, "no row was written")
            #expect(try await server.send(.post, "/tables/photos__attachments", object: good).status == .created)
        }
    }

    @Test(arguments: StorageFactory.all)
    func aRowOfAMissingOrDeletedItemIs404(_ factory: StorageFactory) async throws {
        try await TestServer.run(Self.configuration(), storage: factory) { server in
            try await Self.seed(server)
            try #require(try await server.send(.post, "/tables/photos", object: ["id": "p2"]).status == .created)
            try #require(try await server.send(.delete, "/tables/photos/p2").status == .ok)
            for item in ["never", "p2"] {
                let reply = try await server.send(
                    .post, "/tables/photos__attachments", object: try AttachmentFixture.row("a-\(item)", item: item, content: Self.content))
                #expect(reply.status == .notFound && reply.errorMessage == "item not found", "\(item)")
            }
            let none = try await server.send(
                .post, "/tables/videos__attachments", object: try AttachmentFixture.row("a", item: "p1", content: Self.content))
            #expect(none.status == .notFound && none.errorMessage == "item not found", "a table without items")
        }
    }

    @Test func onlyTheNameChanges() async throws {
        try await TestServer.run(Self.configuration()) { server in
            try await Self.seed(server)
            try #require(try await server.send(.post, "/tables/photos", object: ["id": "p2"]).status == .created)
            let row = try AttachmentFixture.row("a1", item: "p1", content: Self.content)
            try #require(try await server.send(.post, "/tables/photos__attachments", object: row).status == .created)
            for (property, value) in [
                ("size", JSONValue.int(5)), ("sha256", .string(String(repeating: "0", count: 64))), ("itemId", "p2"), ("contentType", "text/plain"),
                ("extra", 1),
            ] {
                let reply = try await server.send(.patch, "/tables/photos__attachments/a1", object: [property: value, "name": "x.jpg"])
                #expect(reply.status == .badRequest, "\(property)")
            }
            #expect(try await server.send(.patch, "/tables/photos__attachments/a1", object: ["name": "a/b"]).status == .badRequest)
            var whole = row
            whole["name"] = "renamed.jpg"
            let renamed = try await server.send(.patch, "/tables/photos__attachments/a1", object: whole)
            #expect(renamed.status == .ok && renamed.object["name"] == "renamed.jpg", "the stored values may be sent again")
            let stored = try await server.send(.get, "/tables/photos__attachments/a1").object
            #expect(stored["name"] == "renamed.jpg" && stored["itemId"] == "p1" && stored["size"] == 100)
        }
    }

    @Test(arguments: StorageFactory.all, [true, false])
    func deletingAnItemDeletesItsAttachmentsInOneStep(_ factory: StorageFactory, softDelete: Bool) async throws {
        try await TestServer.run(Self.configuration(softDelete: softDelete), storage: factory) { server in
            try await Self.seed(server)
            try #require(try await server.send(.post, "/tables/photos", object: ["id": "p2"]).status == .created)
            for (id, item) in [("a1", "p1"), ("a2", "p1"), ("a3", "p2")] {
                try #require(
                    try await server.send(
                        .post, "/tables/photos__attachments", object: try AttachmentFixture.row(id, item: item, content: Self.content)
                    ).status == .created)
            }
            // The last write before the delete.
            let before = try await server.send(.get, "/tables/photos__attachments/a3").object["updatedAt"]?.stringValue ?? ""
            let deleted = try await server.send(.delete, "/tables/photos/p1")
            try #require(deleted.status == .ok)
            let rows = try await server.send(.get, "/tables/photos__attachments?__includeDeleted=true&$orderby=id").array
            if softDelete {
                #expect(rows.map { $0["id"] } == ["a1", "a2", "a3"])
                #expect(rows.map { $0["deleted"] } == [true, true, false])
                let since = try await server.send(
                    .get, "/tables/photos__attachments?__includeDeleted=true&$filter=" + ODataQuery.encode("updatedAt gt '\(before)'"))
                #expect(Set(since.array.compactMap { $0["id"]?.stringValue }) == ["a1", "a2"], "an incremental pull sees them deleted")
            } else {
                #expect(rows.map { $0["id"] } == ["a3"])
            }
            #expect(try await server.send(.get, "/tables/photos__attachments").array.map { $0["id"] } == ["a3"])
        }
    }

    @Test func aTableNameCannotEndWithTheSuffixUnlessItIsACompanion() async throws {
        try await TestServer.run(Self.configuration()) { server in
            for table in ["1x__attachments", "x__attachments__attachments", "__attachments"] {
                let reply = try await server.send(.post, "/tables/\(table)", object: ["id": "a"])
                #expect(reply.status == .badRequest && reply.errorMessage == "Invalid table name", "\(table)")
            }
        }
    }
}
