import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// Hostile requests get a 4xx each, never a crash, and the data stays intact.
@Suite struct HostileInputTests {
    @Test(arguments: StorageFactory.all)
    func injectionAttemptsAreRefusedOrInert(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "keep"])
            let uris = [
                "/tables/todo?$filter=" + ODataQuery.encode("text eq 'x'' or 1=1 --'"),
                "/tables/todo?$filter=" + ODataQuery.encode("text eq 'a'; DROP TABLE todo; --"),
                "/tables/todo?$orderby=" + ODataQuery.encode("text; DROP TABLE todo"),
                "/tables/todo?$orderby=" + ODataQuery.encode("\"text\" desc"),
                "/tables/todo?$select=" + ODataQuery.encode("id, (SELECT 1)"),
                "/tables/todo/" + ODataQuery.encode("1' OR '1'='1"),
                "/tables/" + ODataQuery.encode("todo; DROP TABLE todo"),
                "/tables/todo?$filter=" + String(repeating: "(", count: 5000) + "id" + String(repeating: ")", count: 5000),
                "/tables/todo?$filter=" + ODataQuery.encode(String(repeating: "not ", count: 2000) + "text"),
            ]
            for uri in uris {
                let reply = try await server.send(.get, uri)
                #expect(reply.status == .badRequest || reply.status == .notFound || (reply.status == .ok && reply.array.isEmpty), "\(uri.prefix(80))")
            }
            #expect(try await server.send(.get, "/tables/todo").array.map { $0["text"] } == ["keep"])
        }
    }

    /// `floor` and `ceiling` repeat their operand in SQL, so nested calls grew as 5^n: a
    /// `$filter` of a few hundred bytes became gigabytes of SQL and took the server's memory.
    /// Such a filter is a 400 naming the reason; a reasonable one still runs.
    @Test func filtersThatWouldGrowExponentiallyInSQLAreRefused() async throws {
        try await TestServer.run(.testing()) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "n": 2])
            for function in ["floor", "ceiling"] {
                for depth in [7, 8] {
                    let filter = String(repeating: "\(function)(", count: depth) + "n" + String(repeating: ")", count: depth) + " eq 2"
                    let reply = try await server.send(.get, "/tables/todo?$filter=" + ODataQuery.encode(filter))
                    #expect(reply.status == .badRequest, "\(function) × \(depth)")
                    #expect(reply.errorMessage == "the filter is too large once written as SQL")
                }
                let reasonable = try await server.send(.get, "/tables/todo?$filter=" + ODataQuery.encode("\(function)(\(function)(n)) eq 2"))
                #expect(reasonable.array.map { $0["id"] } == ["1"])
            }
        }
    }

    /// An id whose escapes are not UTF-8 is a 400 on every route that names an item, and
    /// nothing changes (Foundation's decoding made `%A9` and `%AA` both U+FFFD: one item).
    @Test(arguments: StorageFactory.all)
    func idsEscapingBytesThatAreNotUTF8AreRefused(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "\u{FFFD}", "text": "keep"])
            for id in ["%A9", "%AA", "x%80", "%C3", "%FF"] {
                #expect(try await server.send(.get, "/tables/todo/\(id)").status == .badRequest, "\(id)")
                let patch = try await server.send(.patch, "/tables/todo/\(id)", object: ["text": "changed"])
                #expect(patch.status == .badRequest, "\(id)")
                #expect(patch.errorMessage == "Invalid item id")
                #expect(try await server.send(.delete, "/tables/todo/\(id)").status == .badRequest, "\(id)")
            }
            #expect(try await server.send(.get, "/tables/todo/%EF%BF%BD").object["text"] == "keep")
            #expect(try await server.send(.get, "/tables/todo").array.map { $0["text"] } == ["keep"])
        }
    }

    @Test(arguments: StorageFactory.all)
    func hugeAndGarbageBodiesAreRefused(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "keep"])
            let huge = "{\"id\":\"2\",\"text\":\"" + String(repeating: "x", count: 5 << 20) + "\"}"
            #expect(try await server.send(.post, "/tables/todo", json: huge).status == .contentTooLarge)
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<20 {
                let garbage = String(decoding: (0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self)
                #expect(try await server.send(.post, "/tables/todo", json: garbage).status == .badRequest)
                #expect(try await server.send(.patch, "/tables/todo/1", json: garbage).status == .badRequest)
            }
            #expect(try await server.send(.get, "/tables/todo").array.map { $0["text"] } == ["keep"])
        }
    }
}

/// Concurrent writers: optimistic concurrency holds and nothing is lost.
@Suite struct ConcurrencyTests {
    @Test(arguments: StorageFactory.all)
    func onlyOneOfManyPatchesWithTheSameIfMatchWins(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let version = try await server.send(.post, "/tables/todo", object: ["id": "1", "n": 0]).object["version"]?.stringValue ?? ""
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for i in 1...20 {
                    group.addTask {
                        try await server.send(.patch, "/tables/todo/1", object: ["n": .int(Int64(i))], headers: TestServer.ifMatch(version)).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .preconditionFailed }.count == 19)
        }
    }

    @Test(arguments: StorageFactory.all)
    func manyConcurrentInsertsLoseNothing(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(maxTop: 0), storage: storage) { server in
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for i in 0..<60 {
                    group.addTask {
                        try await server.send(.post, "/tables/todo", object: ["id": .string("i\(i)"), "extra\(i % 5)": .int(Int64(i))]).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == .created })
            let count = try await server.send(.get, "/tables/todo?$inlinecount=allpages&$top=1").object["count"]
            #expect(count == 60)
            let timestamps = try await server.send(.get, "/tables/todo?$top=60&$select=updatedAt").array.compactMap { $0["updatedAt"]?.stringValue }
            #expect(Set(timestamps).count == 50, "page size caps a response at 50; every timestamp is distinct")
        }
    }
}
