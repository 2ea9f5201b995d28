import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Where SQL engines differ by default, the server answers alike on every storage: `NULL`
/// sorts as the least value, text sorts by its bytes, only ASCII letters fold (in ids and in
/// case-insensitive matching), `mod` takes integer parts, a division by zero is `NULL`.
@Suite struct EngineAgreementTests {
    @Test(arguments: StorageFactory.all)
    func nullSortsAsTheLeastValue(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            for (id, n) in [("a", JSONValue.int(1)), ("b", .null), ("c", .int(2))] {
                try #require(try await server.send(.post, "/tables/t", object: ["id": .string(id), "n": n, "m": 0]).status == .created)
            }
            #expect(try await server.send(.get, "/tables/t?$orderby=n").array.map { $0["id"] } == ["b", "a", "c"])
            #expect(try await server.send(.get, "/tables/t?$orderby=n%20desc").array.map { $0["id"] } == ["c", "a", "b"])
        }
    }

    @Test(arguments: StorageFactory.all)
    func textSortsByItsBytesAndIdsByTheirFoldedText(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            for (id, title) in [("B2", "b"), ("a1", "B"), ("C3", "a"), ("b4", "é"), ("_5", "Z")] {
                try #require(try await server.send(.post, "/tables/t", object: ["id": .string(id), "title": .string(title)]).status == .created)
            }
            #expect(try await server.send(.get, "/tables/t?$orderby=title").array.map { $0["title"] } == ["B", "Z", "a", "b", "é"])
            #expect(try await server.send(.get, "/tables/t?$orderby=id").array.map { $0["id"] } == ["_5", "a1", "B2", "b4", "C3"])
            #expect(try await server.send(.get, "/tables/t").array.map { $0["id"] } == ["_5", "a1", "B2", "b4", "C3"], "the default order")
        }
    }

    @Test(arguments: StorageFactory.all)
    func onlyASCIILettersFoldInIdsAndMatching(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            #expect(try await server.send(.post, "/tables/t", object: ["id": "Émile", "name": "Émile"]).status == .created)
            #expect(try await server.send(.post, "/tables/t", object: ["id": "émile", "name": "émile"]).status == .created, "É and é are two ids")
            let clash = try await server.send(.post, "/tables/t", object: ["id": "ÉMILE", "name": "x"])
            #expect(clash.status == .conflict && clash.object["id"] == "Émile")
            #expect(try await server.send(.get, "/tables/t/%C3%A9MILE").object["name"] == "émile")
            let byID = ODataQuery.encode("id eq 'ÉMILE'")
            #expect(try await server.send(.get, "/tables/t?$filter=\(byID)").array.map { $0["id"] } == ["Émile"])
            let matching = ODataQuery.encode("substringof('ÉM', name)")
            #expect(try await server.send(.get, "/tables/t?$filter=\(matching)").array.map { $0["id"] } == ["Émile"])
            let lowered = ODataQuery.encode("tolower(name) eq 'Émile'")
            #expect(try await server.send(.get, "/tables/t?$filter=\(lowered)").array.map { $0["id"] } == ["Émile"])
        }
    }

    @Test(arguments: StorageFactory.all)
    func modTakesIntegerPartsAndDivisionByZeroIsNull(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            for (id, x) in [("a", 5.5), ("b", -7.5), ("c", 4.0)] {
                try #require(try await server.send(.post, "/tables/t", object: ["id": .string(id), "x": .double(x), "k": 7]).status == .created)
            }
            for (filter, expected) in [
                ("x mod 2 eq 1", ["a"]), ("x mod 2 eq -1", ["b"]), ("x mod 0 eq null", ["a", "b", "c"]),
                ("x div 0 eq null", ["a", "b", "c"]), ("k div 2 eq 3", ["a", "b", "c"]), ("x div 2 eq 2.75", ["a"]),
            ] {
                let reply = try await server.send(.get, "/tables/t?$filter=\(ODataQuery.encode(filter))")
                #expect(reply.status == .ok && reply.array.map { $0["id"]?.stringValue ?? "" } == expected, "\(filter): \(reply.errorMessage ?? "")")
            }
        }
    }
}
