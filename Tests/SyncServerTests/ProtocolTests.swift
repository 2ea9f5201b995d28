import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// The server acceptance cases of docs/protocol.md §3 (52–62) and the status codes of §2.7.
@Suite struct ProtocolTests {
    @Test(arguments: StorageFactory.all)
    func case52APIVersionIsRequiredInAnyCaseOrAsAQueryParameter(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1"])
            let missing = try await server.send(.get, "/tables/todo", headers: [:])
            #expect(missing.status == .badRequest && missing.errorMessage?.contains("ZUMO-API-VERSION") == true)
            #expect(try await server.send(.get, "/tables/todo", headers: [HTTPField.Name("ZuMo-ApI-vErSiOn")!: "2.0.0"]).status == .ok)
            #expect(try await server.send(.get, "/tables/todo?zumo-api-version=2.0.0", headers: [:]).status == .ok)
            #expect(try await server.send(.get, "/tables/todo", headers: [HTTPField.Name("ZUMO-API-VERSION")!: "3.0.0"]).status == .badRequest)
        }
    }

    @Test(arguments: StorageFactory.all)
    func insertReturns201WithTheStoredItemAndItsETag(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let created = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a", "done": false])
            #expect(created.status == .created)
            let item = created.object
            #expect(item["text"] == "a" && item["deleted"] == false)
            let version = try #require(item["version"]?.stringValue)
            #expect(created.eTag == "\"\(version)\"")
            let created2 = try await server.send(.post, "/tables/todo", object: ["text": "no id"])
            #expect(ItemID.isValid(created2.object["id"]?.stringValue ?? ""))
            #expect(try await server.send(.get, "/tables/todo/1").eTag == "\"\(version)\"")
            // case 62: a list has no strong ETag.
            #expect(try await server.send(.get, "/tables/todo").eTag == nil)
        }
    }

    /// SQLite names columns without regard to ASCII case: `Text` is the column `text`, and an
    /// item may not name one column twice.
    @Test(arguments: StorageFactory.all)
    func propertyNamesFindTheirColumnWhateverTheCase(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"])
            let second = try await server.send(.post, "/tables/todo", object: ["id": "2", "Text": "b"])
            #expect(second.status == .created)
            #expect(second.object["text"] == "b" && second.object["Text"] == nil, "the stored spelling comes back")
            let patched = try await server.send(.patch, "/tables/todo/1", object: ["TEXT": "c", "Done": true])
            #expect(patched.status == .ok)
            let third = try await server.send(.post, "/tables/todo", object: ["id": "3", "done": false])
            #expect(third.status == .created && third.object["Done"] == false, "one column, first spelling")
            #expect(try await server.send(.get, "/tables/todo?$filter=TEXT%20eq%20'c'").array.map { $0["id"] } == ["1"])

            for body: JSONObject in [["id": "4", "text": "x", "Text": "y"], ["ID": "5"], ["id": "6", "Version": "v"]] {
                let refused = try await server.send(.post, "/tables/todo", object: body)
                #expect(refused.status == .badRequest, "\(body)")
                #expect(refused.errorMessage?.contains("differ only by case") == true, "\(refused.errorMessage ?? "")")
            }
            // An update naming a column exactly and again in another case is refused the same way.
            for body: JSONObject in [["text": "x", "Text": "y"], ["text": "x", "ID": "1"]] {
                let refused = try await server.send(.patch, "/tables/todo/1", object: body)
                #expect(refused.status == .badRequest, "\(body)")
                #expect(refused.errorMessage?.contains("differ only by case") == true, "\(refused.errorMessage ?? "")")
            }
            #expect(try await server.send(.get, "/tables/todo/1").object["text"] == "c", "no refused update was written")
            let rows = try await server.send(.get, "/tables/todo?__includeDeleted=true").array
            #expect(rows.compactMap { $0["id"]?.stringValue }.sorted() == ["1", "2", "3"], "nothing refused was stored")
        }
    }

    /// Table names, too, are SQLite identifiers: `/tables/TodoItem` and `/tables/todoitem` are one table.
    @Test(arguments: StorageFactory.all)
    func tableNamesFindTheirTableWhateverTheCase(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let created = try await server.send(.post, "/tables/TodoItem", object: ["id": "1", "text": "a"])
            #expect(created.status == .created)
            #expect(try await server.send(.get, "/tables/todoitem").array.map { $0["id"] } == ["1"])
            let patched = try await server.send(.patch, "/tables/TODOITEM/1", object: ["text": "b"])
            #expect(patched.object["text"] == "b")
            let second = try await server.send(.post, "/tables/todoItem", object: ["id": "2", "done": true])
            #expect(second.status == .created)
            #expect(try await server.send(.get, "/tables/TodoItem?$filter=done%20eq%20true").array.map { $0["id"] } == ["2"])
            #expect(try await server.send(.get, "/tables/TodoItems").status == .notFound)
        }
    }

    @Test(arguments: StorageFactory.all)
    func case53DuplicateInsertIs409WithTheStoredItem(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let stored = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "stored"]).object
            let duplicate = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "request"])
            #expect(duplicate.status == .conflict)
            #expect(duplicate.object == stored)
            #expect(duplicate.eTag == "\"\(stored["version"]?.stringValue ?? "")\"")
        }
    }

    @Test(arguments: StorageFactory.all)
    func case55And56IfMatchGuardsUpdatesAndDeletes(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let stored = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"]).object
            let version = stored["version"]?.stringValue ?? ""
            let stale = try await server.send(.patch, "/tables/todo/1", object: ["text": "b"], headers: TestServer.ifMatch("incorrect version"))
            #expect(stale.status == .preconditionFailed)
            #expect(stale.object["version"]?.stringValue == version && stale.object["text"] == "a")
            #expect(stale.eTag == "\"\(version)\"")
            let updated = try await server.send(.patch, "/tables/todo/1", object: ["text": "b"], headers: TestServer.ifMatch(version))
            #expect(updated.status == .ok && updated.object["text"] == "b")
            let newVersion = updated.object["version"]?.stringValue ?? ""
            #expect(newVersion != version)
            #expect((updated.object["updatedAt"]?.stringValue ?? "") > (stored["updatedAt"]?.stringValue ?? "~"))
            // A body version without If-Match is a concurrency check answered with 409.
            #expect(try await server.send(.patch, "/tables/todo/1", object: ["text": "c", "version": "old"]).status == .conflict)
            #expect(try await server.send(.delete, "/tables/todo/1", headers: TestServer.ifMatch("wrong")).status == .preconditionFailed)
            #expect(try await server.send(.delete, "/tables/todo/1", headers: TestServer.ifMatch(newVersion)).status == .ok)
            try await server.send(.post, "/tables/todo", object: ["id": "2"])
            #expect(try await server.send(.delete, "/tables/todo/2").status == .ok)
        }
    }

    /// If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches, even one that
    /// carries the current version.
    @Test(arguments: StorageFactory.all)
    func aWeakIfMatchIsAPreconditionFailure(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let stored = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"]).object
            let version = try #require(stored["version"]?.stringValue)
            var weak = TestServer.version
            weak[.ifMatch] = "W/\"\(version)\""
            let patched = try await server.send(.patch, "/tables/todo/1", object: ["text": "b"], headers: weak)
            #expect(patched.status == .preconditionFailed)
            #expect(patched.object["text"] == "a" && patched.eTag == "\"\(version)\"")
            #expect(try await server.send(.delete, "/tables/todo/1", headers: weak).status == .preconditionFailed)
            #expect(try await server.send(.post, "/tables/todo/1", headers: weak).status == .preconditionFailed)
            #expect(try await server.send(.get, "/tables/todo/1").object == stored, "nothing changed")
            let strong = try await server.send(.patch, "/tables/todo/1", object: ["text": "b"], headers: TestServer.ifMatch(version))
            #expect(strong.status == .ok && strong.object["text"] == "b")
        }
    }

    @Test(arguments: StorageFactory.all)
    func case57SoftDeleteHidesThenUndeleteRestores(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            let before = try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"]).object
            let deleted = try await server.send(.delete, "/tables/todo/1")
            #expect(deleted.object["deleted"] == true)
            #expect((deleted.object["updatedAt"]?.stringValue ?? "") > (before["updatedAt"]?.stringValue ?? "~"))
            #expect(deleted.object["version"] != before["version"])
            #expect(try await server.send(.get, "/tables/todo").array.isEmpty)
            #expect(try await server.send(.get, "/tables/todo?__includeDeleted=true").array.count == 1)
            #expect(try await server.send(.get, "/tables/todo/1").status == .notFound)
            #expect(try await server.send(.patch, "/tables/todo/1", object: ["text": "x"]).status == .notFound)
            #expect(try await server.send(.delete, "/tables/todo/1").status == .notFound)
            let restored = try await server.send(.post, "/tables/todo/1", json: "")
            #expect(restored.status == .created && restored.object["deleted"] == false)
            #expect(try await server.send(.get, "/tables/todo").array.count == 1)
        }
    }

    @Test(arguments: StorageFactory.all)
    func hardDeleteRemovesTheRow(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(softDelete: false), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1"])
            #expect(try await server.send(.delete, "/tables/todo/1").status == .ok)
            #expect(try await server.send(.get, "/tables/todo?__includeDeleted=true").array.isEmpty)
        }
    }

    @Test(arguments: StorageFactory.all)
    func case59MaxTop(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(maxTop: 1000), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1"])
            let tooMany = try await server.send(.get, "/tables/todo?$top=1001")
            #expect(tooMany.status == .badRequest && tooMany.errorMessage?.contains("1000") == true)
            #expect(try await server.send(.get, "/tables/todo?$top=1000").status == .ok)
        }
        try await TestServer.run(.testing(maxTop: 0), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1"])
            #expect(try await server.send(.get, "/tables/todo?$top=100000").status == .ok)
        }
    }

    @Test(arguments: StorageFactory.all)
    func case61BodyIDMustMatchTheURL(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"])
            #expect(try await server.send(.patch, "/tables/todo/2", object: ["id": "1", "text": "b"]).status == .badRequest)
            #expect(try await server.send(.patch, "/tables/todo/1", object: ["text": "changed"]).status == .ok)
            #expect(try await server.send(.get, "/tables/todo/1").object["text"] == "changed")
        }
    }

    @Test(arguments: StorageFactory.all)
    func badRequestsAre4xxWithAJSONMessageAndChangeNothing(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(maxBodySize: 1024), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "keep"])
            let cases: [(HTTPRequest.Method, String, String, HTTPResponse.Status)] = [
                (.post, "/tables/todo", "{not json", .badRequest),
                (.post, "/tables/todo", "[1,2]", .badRequest),
                (.post, "/tables/todo", "{\"id\":\"x\",\"updatedAt\":\"2001-01-01T00:00:00.000Z\"}", .badRequest),
                (.post, "/tables/todo", "{\"id\":\"x\",\"DELETED\":true}", .badRequest),
                (.post, "/tables/todo", "{\"id\":\"a/b\"}", .badRequest),
                (.post, "/tables/todo", "{\"id\":5}", .badRequest),
                (.post, "/tables/todo", "{\"id\":\"y\",\"bad name\":1}", .badRequest),
                (.post, "/tables/bad-table", "{}", .badRequest),
                (.post, "/tables/__operations", "{}", .badRequest),
                (.post, "/tables/todo", "{\"id\":\"z\",\"text\":\"\(String(repeating: "x", count: 2000))\"}", .contentTooLarge),
                (.patch, "/tables/todo/1", "{\"text\":\"\(String(repeating: "x", count: 2000))\"}", .contentTooLarge),
                (.get, "/tables/never", "", .notFound),
                (.get, "/tables/todo/missing", "", .notFound),
                (.get, "/tables/todo?$filter=missing%20eq%2020", "", .badRequest),
                (.get, "/tables/todo?$filter=text%20eq", "", .badRequest),
                (.get, "/tables/todo?$top=-1", "", .badRequest),
            ]
            for (method, uri, body, expected) in cases {
                let reply = try await server.send(method, uri, json: body)
                #expect(reply.status == expected, "\(method) \(uri) \(body.prefix(60))")
                #expect(reply.errorMessage != nil, "\(method) \(uri): a JSON message, a body too large included")
            }
            let all = try await server.send(.get, "/tables/todo").array
            #expect(all.count == 1 && all[0]["text"] == "keep")
        }
    }

    @Test(arguments: StorageFactory.all)
    func pagingCapsResultsAndSendsALinkToTheNextPage(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(pageSize: 3), storage: storage) { server in
            for i in 0..<7 { try await server.send(.post, "/tables/todo", object: ["id": .string("i\(i)"), "n": .int(Int64(i))]) }
            let first = try await server.send(.get, "/tables/todo?$orderby=n&$top=5")
            #expect(first.array.map { $0["n"] } == [0, 1, 2])
            let link = try #require(first.headers[HTTPField.Name("Link")!])
            #expect(link.hasSuffix("; rel=next") && link.contains("$skip=3") && link.contains("$top=2"))
            let second = try await server.send(.get, "/tables/todo?$orderby=n&$skip=3&$top=2")
            #expect(second.array.map { $0["n"] } == [3, 4])
            #expect(second.headers[HTTPField.Name("Link")!] == nil)
            let counted = try await server.send(.get, "/tables/todo?$inlinecount=allpages&$top=2").object
            #expect(counted["count"] == 7 && counted["results"]?.arrayValue?.count == 2)
            let selected = try await server.send(.get, "/tables/todo?$select=id,n&$filter=n%20eq%206").array
            #expect(selected == [["id": "i6", "n": 6]])
        }
    }

    @Test(arguments: StorageFactory.all)
    func newPropertiesAddColumns(_ storage: StorageFactory) async throws {
        try await TestServer.run(.testing(), storage: storage) { server in
            try await server.send(.post, "/tables/todo", object: ["id": "1", "text": "a"])
            try await server.send(.patch, "/tables/todo/1", object: ["priority": 3, "tags": ["x"]])
            let item = try await server.send(.get, "/tables/todo/1").object
            #expect(item["priority"] == 3 && item["tags"] == ["x"] && item["text"] == "a")
        }
    }
}
