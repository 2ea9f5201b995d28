import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Ids name one item whatever the ASCII case of their letters, as SQL Server compares them; the
/// spelling first written is kept.
@Suite struct ItemIDMatchingTests {
    @Test(arguments: StorageFactory.all)
    func anIDFindsItsItemInAnyASCIICase(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            let stored = try await server.send(.post, "/tables/todo", object: ["id": "one", "text": "first"]).object
            try await server.send(.post, "/tables/todo", object: ["id": "two", "text": "second"])

            let again = try await server.send(.post, "/tables/todo", object: ["id": "ONE", "text": "another spelling"])
            #expect(again.status == .conflict && again.object == stored, "409 with the stored item")
            #expect(try await server.send(.get, "/tables/todo/One").object == stored)

            let filtered = try await server.send(.get, "/tables/todo?$filter=" + ODataQuery.encode("id eq 'ONE'")).array
            #expect(filtered.map { $0["id"] } == ["one"])
            let excluded = try await server.send(.get, "/tables/todo?$filter=" + ODataQuery.encode("id ne 'oNe'")).array
            #expect(excluded.map { $0["id"] } == ["two"])

            let patched = try await server.send(.patch, "/tables/todo/ONE", object: ["id": "oNE", "text": "edited"])
            #expect(patched.status == .ok && patched.object["id"] == "one" && patched.object["text"] == "edited")
            #expect(try await server.send(.patch, "/tables/todo/ONE", object: ["id": "two"]).status == .badRequest)

            let deleted = try await server.send(.delete, "/tables/todo/oNe")
            #expect(deleted.status == .ok && deleted.object["id"] == "one" && deleted.object["deleted"] == true)
            let restored = try await server.send(.post, "/tables/todo/ONE", json: "")
            #expect(restored.status == .created && restored.object["id"] == "one" && restored.object["deleted"] == false)

            let all = try await server.send(.get, "/tables/todo?__includeDeleted=true").array
            #expect(Set(all.compactMap { $0["id"]?.stringValue }) == ["one", "two"], "one item, under its first spelling")
        }
    }

    @Test(arguments: StorageFactory.all)
    func onlyASCIILettersFold(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            var statuses: [HTTPResponse.Status] = []
            for id in ["élan", "Élan", "ÉLAN"] {
                statuses.append(try await server.send(.post, "/tables/todo", object: ["id": .string(id)]).status)
            }
            #expect(statuses == [.created, .created, .conflict], "É is not an ASCII letter: Élan is an item of its own")
            let found = try await server.send(.get, "/tables/todo/" + ODataQuery.encode("éLAN")).object
            #expect(found["id"] == "élan")
        }
    }

    @Test(arguments: StorageFactory.all)
    func aHardDeleteFindsTheItemInAnyCaseToo(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(softDelete: false), storage: factory) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "Mixed"])
            #expect(try await server.send(.delete, "/tables/todo/mIXED").object["id"] == "Mixed")
            #expect(try await server.send(.get, "/tables/todo?__includeDeleted=true").array.isEmpty)
        }
    }
}
