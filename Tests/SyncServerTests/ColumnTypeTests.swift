import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// A value reads back as it was sent: one whose JSON type does not fit its column's type is a
/// 400 naming the property, and nothing is written. Numbers fit integer and real columns alike.
@Suite struct ColumnTypeTests {
    @Test(arguments: StorageFactory.all)
    func aValueThatDoesNotFitItsColumnIsRefusedAndWritesNothing(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            let seed: JSONObject = ["id": "1", "count": 1, "price": 1.5, "text": "a", "done": false, "tags": ["x"]]
            try #require(try await server.send(.post, "/tables/shop", object: seed).status == .created)
            let before = try await server.send(.get, "/tables/shop?__includeDeleted=true").body

            let misfits: [(String, JSONValue, String)] = [
                ("count", [[1, 2]], "is an array, but the column 'count' holds numbers"),
                ("Count", ["a": 1], "is an object, but the column 'count' holds numbers"),
                ("count", "12", "is a string, but the column 'count' holds numbers"),
                ("count", true, "is a Boolean, but the column 'count' holds numbers"),
                ("text", 5, "is a number, but the column 'text' holds strings"),
                ("text", ["a"], "is an array, but the column 'text' holds strings"),
                ("done", 1, "is a number, but the column 'done' holds Booleans"),
                ("tags", "[\"x\"]", "is a string, but the column 'tags' holds objects and arrays"),
                ("price", false, "is a Boolean, but the column 'price' holds numbers"),
            ]
            for (name, value, message) in misfits {
                var body: JSONObject = ["id": "2", "other": 1]
                body[name] = value
                let inserted = try await server.send(.post, "/tables/shop", object: body)
                #expect(
                    inserted.status == .badRequest && inserted.errorMessage == "The property '\(name)' \(message)", "\(inserted.errorMessage ?? "")")
                let patched = try await server.send(.patch, "/tables/shop/1", object: [name: value, "other": 1])
                #expect(patched.status == .badRequest && patched.errorMessage == "The property '\(name)' \(message)")
            }
            #expect(try await server.send(.get, "/tables/shop?__includeDeleted=true").body == before, "nothing written, no column added")

            let numbers = try await server.send(.patch, "/tables/shop/1", object: ["count": 2.5, "price": 3, "text": nil, "done": true])
            #expect(numbers.status == .ok)
            let read = try await server.send(.get, "/tables/shop/1").object
            #expect(read["count"] == 2.5 && read["price"] == 3.0 && read["text"] == JSONValue.null && read["done"] == true && read["tags"] == ["x"])
        }
    }
}
