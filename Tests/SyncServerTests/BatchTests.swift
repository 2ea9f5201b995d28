import Foundation
import HTTPTypes
import SyncSQL
import SyncServer
import SyncWire
import Testing

/// The batch extension: `GET /capabilities` advertises it; `POST /batch/{table}` applies each
/// operation as its own request would have been applied and answers each as it would have been
/// answered, in order.
@Suite struct BatchTests {
    static func batch(_ operations: [JSONObject]) -> JSONObject {
        ["operations": .array(operations.map(JSONValue.object))]
    }

    /// The single answer in the form of a batch result: status, `ETag`, body.
    static func result(of reply: Reply) -> JSONObject {
        var result: JSONObject = ["status": .int(Int64(reply.status.code)), "body": .object(reply.object)]
        if let tag = reply.eTag { result["etag"] = .string(tag) }
        return result
    }

    static func results(_ reply: Reply) -> [JSONObject] {
        reply.object["results"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    @Test func capabilitiesAdvertiseTheLimitAndNothingWhenTurnedOff() async throws {
        try await TestServer.run(.testing()) { server in
            let reply = try await server.send(.get, "/capabilities", headers: [:])
            #expect(reply.status == .ok)
            #expect(reply.object == ["batch": ["maxOperations": 1000, "maxBytes": .int(Int64(ServerConfiguration.testing().maxBodySize))]])
        }
        var off = ServerConfiguration.testing()
        off.maxBatchOperations = 0
        try await TestServer.run(off) { server in
            #expect(try await server.send(.get, "/capabilities", headers: [:]).object == [:])
            let refused = try await server.send(.post, "/batch/todo", object: Self.batch([["method": "POST", "item": ["id": "a"]]]))
            #expect(refused.status == .notFound)
            #expect(try await server.send(.get, "/tables/todo/a").status == .notFound)
        }
    }

    /// Each result is exactly the single route's answer: the same statuses, bodies (but for the
    /// stamps) and ETags, for successes, a conflict, a failed precondition, a missing item and a
    /// bad item; the others are applied whatever one of them does.
    @Test(arguments: StorageFactory.all)
    func eachResultIsTheAnswerOfItsOwnRequest(_ factory: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: factory) { server in
            let seeded = try await server.send(.post, "/tables/todo", object: ["id": "old", "text": "seeded", "n": 1])
            try #require(seeded.status == .created)
            let version = try #require(seeded.object["version"]?.stringValue)
            let reply = try await server.send(
                .post, "/batch/todo",
                object: Self.batch([
                    ["method": "POST", "item": ["id": "a", "text": "first", "n": 2]],
                    ["method": "POST", "item": ["id": "OLD", "text": "duplicate"]],
                    ["method": "PATCH", "id": "old", "ifMatch": .string(ETag.quote("stale")), "item": ["text": "late"]],
                    ["method": "PATCH", "id": "old", "ifMatch": .string(ETag.quote(version)), "item": ["text": "edited"]],
                    ["method": "PATCH", "id": "never", "item": ["text": "x"]],
                    ["method": "POST", "item": ["id": "b", "n": "not a number"]],
                    ["method": "DELETE", "id": "a"],
                ]))
            #expect(reply.status == .ok)
            let results = Self.results(reply)
            try #require(results.count == 7)
            #expect(results.map { $0["status"]?.intValue } == [201, 409, 412, 200, 404, 400, 200])
            let stored = try await server.send(.get, "/tables/todo/old")
            #expect(stored.object["text"] == "edited")
            #expect(results[3] == Self.result(of: stored), "the update's result is the stored row and its ETag")
            #expect(results[1]["body"]?.objectValue?["text"] == "seeded", "the conflict carries the stored row")
            #expect(results[2]["body"]?.objectValue?["version"] == .string(version), "the failed precondition: the row before the edit")
            #expect(results[2]["etag"] == .string(ETag.quote(version)))
            #expect(results[4]["body"] == ["error": "The item does not exist"])
            let single = try await server.send(.post, "/tables/todo", object: ["id": "b", "n": "not a number"])
            #expect(single.status == .badRequest && results[5]["body"] == .object(single.object))
            let deleted = try await server.send(.get, "/tables/todo/a?__includeDeleted=true")
            #expect(deleted.object["deleted"] == true && results[6]["body"] == .object(deleted.object))
            #expect(try await server.send(.get, "/tables/todo/b").status == .notFound)
        }
    }

    /// A batch that is not well formed is refused as a whole: 400 with a JSON message, nothing written.
    @Test(arguments: StorageFactory.all)
    func aBadBatchIsRefusedAndWritesNothing(_ factory: StorageFactory) async throws {
        let good: JSONValue = ["method": "POST", "item": ["id": "written", "text": "no"]]
        let bad: [(String, JSONObject)] = [
            ("no operations", [:]),
            ("not an array", ["operations": ["method": "POST"]]),
            ("empty", ["operations": []]),
            ("too many", ["operations": .array(Array(repeating: good, count: ServerConfiguration.testing().maxBatchOperations + 1))]),
            ("another member", ["operations": [good], "atomic": true]),
            ("unknown method", ["operations": [good, ["method": "PUT", "id": "x", "item": [:]]]]),
            ("an insert with an id outside its item", ["operations": [good, ["method": "POST", "id": "x", "item": [:]]]]),
            ("an update without an id", ["operations": [good, ["method": "PATCH", "item": ["text": "x"]]]]),
            ("a bad id", ["operations": [good, ["method": "DELETE", "id": "a/b"]]]),
            ("an item that is not an object", ["operations": [good, ["method": "PATCH", "id": "x", "item": [1]]]]),
            ("a delete with an item", ["operations": [good, ["method": "DELETE", "id": "x", "item": [:]]]]),
            ("ifMatch not a string", ["operations": [good, ["method": "DELETE", "id": "x", "ifMatch": 3]]]),
            ("an unknown member", ["operations": [good, ["method": "DELETE", "id": "x", "why": "?"]]]),
            ("an operation that is not an object", ["operations": [good, "DELETE"]]),
        ]
        try await TestServer.run(.testing(), storage: factory) { server in
            for (label, body) in bad {
                let reply = try await server.send(.post, "/batch/todo", object: body)
                #expect(reply.status == .badRequest, "\(label)")
                #expect(reply.errorMessage?.isEmpty == false, "\(label)")
            }
            let notJSON = try await server.send(.post, "/batch/todo", json: "{\"operations\": [")
            #expect(notJSON.status == .badRequest)
            let noVersion = try await server.send(.post, "/batch/todo", object: ["operations": [good]], headers: [:])
            #expect(noVersion.status == .badRequest)
            #expect(try await server.send(.get, "/tables/todo/written").status == .notFound)
        }
    }

    /// A per-user table: each operation reaches only the caller's rows, as its single request
    /// would; a batch without an identity is a 401 and writes nothing.
    @Test(arguments: StorageFactory.all)
    func perUserTablesAreScopedPerOperation(_ factory: StorageFactory) async throws {
        let configuration = ServerConfiguration.testing(
            authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"]))
        try await TestServer.run(configuration, storage: factory) { server in
            let alice = TestIdentityVerifier.headers("alice"), bob = TestIdentityVerifier.headers("bob")
            try #require(try await server.send(.post, "/tables/notes", object: ["id": "a", "text": "alice's"], headers: alice).status == .created)
            let reply = try await server.send(
                .post, "/batch/notes",
                object: Self.batch([
                    ["method": "PATCH", "id": "a", "item": ["text": "bob was here"]],
                    ["method": "DELETE", "id": "a"],
                    ["method": "POST", "item": ["id": "a", "text": "bob's own"]],
                ]), headers: bob)
            #expect(Self.results(reply).map { $0["status"]?.intValue } == [404, 404, 201])
            #expect(try await server.send(.get, "/tables/notes/a", headers: alice).object["text"] == "alice's")
            #expect(try await server.send(.get, "/tables/notes/a", headers: bob).object["text"] == "bob's own")
            let anonymous = try await server.send(
                .post, "/batch/notes", object: Self.batch([["method": "POST", "item": ["id": "z"]]]), headers: TestServer.version)
            #expect(anonymous.status == .unauthorized)
            #expect(try await server.send(.get, "/tables/notes/z", headers: alice).status == .notFound)
        }
    }

    /// The writes of a batch are stamped in order, as separate requests would be.
    @Test func theOperationsOfABatchAreStampedInOrder() async throws {
        try await TestServer.run(.testing()) { server in
            let operations: [JSONObject] = (0..<20).map { ["method": "POST", "item": ["id": .string("i\($0)")]] }
            let results = Self.results(try await server.send(.post, "/batch/todo", object: Self.batch(operations)))
            let stamps = results.compactMap { $0["body"]?.objectValue?["updatedAt"]?.stringValue }
            #expect(stamps.count == 20)
            #expect(stamps == stamps.sorted() && Set(stamps).count == 20)
        }
    }

    /// A batch that fails undoes the tables and columns it made, in the database and in the
    /// schemas the storage keeps: the next write that needs them makes them again.
    @Test func aFailedBatchLeavesNoTableOrColumnItMade() async throws {
        struct Failure: Error {}
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        _ = try await storage.ensureColumns("kept", scope: .shared, ["n": .integer])
        await #expect(throws: Failure.self) {
            try await storage.inTransaction {
                _ = try await storage.ensureColumns("kept", scope: .shared, ["extra": .text])
                _ = try await storage.ensureColumns("made", scope: .shared, ["n": .integer])
                throw Failure()
            }
        }
        #expect(await storage.schema(of: "made") == nil)
        #expect(await storage.schema(of: "kept")?.columns["extra"] == nil)
        #expect(await storage.schema(of: "kept")?.columns["n"] == .integer)
        #expect(try await storage.ensureColumns("kept", scope: .shared, ["extra": .text]).columns["extra"] == .text)
        #expect(try await storage.ensureColumns("made", scope: .shared, ["n": .integer]).columns["n"] == .integer)
        for table in ["kept", "made"] {
            let item: JSONObject = table == "kept" ? ["id": "a", "extra": "x"] : ["id": "a", "n": 7]
            guard case .written = try await storage.insert(table: table, scope: .shared, item: item) else {
                Issue.record("the insert into \(table) was not written")
                continue
            }
            let stored = try await storage.row(table: table, id: "a", scope: .shared)
            #expect(table == "kept" ? stored?["extra"] == "x" : stored?["n"] == 7)
        }
        try await storage.close()
    }
}
