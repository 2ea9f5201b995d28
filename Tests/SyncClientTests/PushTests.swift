import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Push: docs/protocol.md §3 cases 15–20 and 28, status handling, aborts.
@Suite struct PushTests {
    // Case 15
    @Test(arguments: StoreKind.allCases)
    func aSuccessfulInsertStoresTheServerAnswerAndRemovesTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "first"))
            f.transport.enqueueEcho(status: 201, version: "AAAA", updatedAt: "2020-05-06T07:08:09.123Z")
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            let row = try #require(try await f.row("a"))
            #expect(row["version"] == "AAAA")
            #expect(row["updatedAt"] == "2020-05-06T07:08:09.123Z")
            #expect(row["text"] == "first")
            // and a later insert + push works again
            try await table.insert(todo("b", "second"))
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "POST /app/tables/todo"])
            #expect(f.transport.requests.last?.jsonObject?["id"] == "b")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    /// A strong `ETag` header overrides the body's version; a weak one names no exact version
    /// (RFC 9110 strong comparison), so the body's stays.
    @Test(
        arguments: StoreKind.allCases,
        [
            (header: "\"from\\\"header\"", version: "from\"header"), (header: "W/\"weak\"", version: "body"),
        ])
    func theETagHeaderOverridesTheBodyVersionUnlessWeak(kind: StoreKind, eTag: (header: String, version: String)) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "first"))
            var answer = todo("a", "first", version: "body")
            answer["updatedAt"] = "2020-01-01T00:00:00.000Z"
            f.transport.enqueue(status: 201, json: .object(answer), headers: ["etag": eTag.header])
            try await f.context.push()
            #expect(try await f.row("a")?["version"] == .string(eTag.version))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func requestBodiesCarryNoSystemProperties(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            var item = todo("a", "first", version: "3")
            item["createdAt"] = "2000-01-01T00:00:00.000Z"
            item["DELETED"] = false  // reserved names are stripped whatever their case
            try await f.table().insert(item)
            f.transport.enqueueEcho()
            try await f.context.push()
            let body = try #require(f.transport.requests.first?.jsonObject)
            #expect(Set(body.keys) == ["id", "text"])
            #expect(f.transport.requests.first?.header("If-Match") == nil)
        }
    }

    // Case 16
    @Test(arguments: StoreKind.allCases)
    func aDeleteCarriesTheVersionInIfMatch(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "x", version: "123")])
            try await f.table().delete(todo("a", "x", version: "123"))
            f.transport.enqueue(status: 200, json: .object(todo("a", "x", version: "124")))
            try await f.context.push()
            let request = try #require(f.transport.requests.first)
            #expect(request.line == "DELETE /app/tables/todo/a")
            #expect(request.header("If-Match") == "\"123\"")
            #expect(request.body == nil)
        }
    }

    // Case 17
    @Test(arguments: StoreKind.allCases)
    func aPushedDeleteWritesNothingBack(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "x", version: "1")])
            try await f.table().delete(id: "a")
            f.transport.enqueue(status: 200, json: .object(todo("a", "server copy", version: "2")))
            try await f.context.push()
            #expect(try await f.row("a") == nil)
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases, [404, 410])
    func aDeleteAnsweredNotFoundCountsAsSuccess(kind: StoreKind, status: Int) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "x", version: "1")])
            try await f.table().delete(id: "a")
            f.transport.enqueue(status: status, json: ["error": "The item does not exist"])
            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    // Case 18
    @Test(arguments: StoreKind.allCases)
    func aPreconditionFailureIsRecordedWithTheServerItem(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "local name"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "servers name", "version": "1"], headers: ["ETag": "\"1\""])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.count == 1)
            let failure = try #require(error.operationErrors.first)
            #expect(failure.statusCode == 412)
            #expect(failure.isConflict)
            #expect(failure.kind == .insert && failure.itemId == "a" && failure.table == "todo")
            #expect(failure.serverItem?["text"] == "servers name")
            #expect(failure.item?["text"] == "local name")
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.operations().first?.state == .failed)
            #expect(try await f.storedErrors().count == 1)
            #expect(!error.description.contains("servers name") && !error.description.contains("local name"))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aConflictIsRecordedWithTheServerItemToo(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "mine"))
            f.transport.enqueue(status: 409, json: ["id": "a", "text": "theirs", "version": "5"])
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            let failure = try #require(error.operationErrors.first)
            #expect(failure.statusCode == 409)
            #expect(failure.serverItem?["text"] == "theirs")
            #expect(failure.rawResponse?.contains("theirs") == true)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func otherErrorsAreRecordedAndThePushGoesOn(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            try await table.insert(todo("c", "three"))
            f.transport.enqueue(status: 500, json: ["error": "internal"])
            f.transport.enqueue(status: 400, json: ["error": "bad"])
            f.transport.enqueueEcho()
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.map(\.statusCode) == [500, 400])
            #expect(error.operationErrors.map(\.itemId) == ["a", "b"])
            #expect(f.transport.requests.count == 3)
            #expect(try await f.operations().map(\.itemId) == ["a", "b"])
        }
    }

    // Case 20: 401
    @Test(arguments: StoreKind.allCases)
    func a401AbortsThePushAndKeepsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            let before = try await f.operations()
            f.transport.enqueue(status: 401, json: ["error": "Unauthorized"])
            await #expect(throws: SyncError.pushAbortedByAuthentication) { try await f.context.push() }
            #expect(f.transport.requests.count == 1)
            let after = try await f.operations()
            #expect(after.map(\.id) == before.map(\.id))
            #expect(after.map(\.kind) == before.map(\.kind))
            #expect(after.map(\.version) == before.map(\.version))
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    // Case 20: network
    @Test(arguments: StoreKind.allCases)
    func aNetworkErrorAbortsThePushAndKeepsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "one"))
            f.transport.enqueueNetworkError()
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByNetwork)
            #expect(error.isPushAbort)
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.storedErrors().isEmpty)
            // the next push sends it again
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo", "POST /app/tables/todo"])
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anAbortAfterAConflictStillReportsTheConflict(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "server", "version": "2"])
            f.transport.enqueueNetworkError()
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByNetwork)
            #expect(error.operationErrors.count == 1)
            #expect(error.operationErrors.first?.statusCode == 412)
        }
    }

    // Case 28
    @Test(arguments: StoreKind.allCases)
    func everyPushRequestCarriesTheProtocolHeaders(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await f.store.upsert(table: "todo", items: [todo("b", "two", version: "1")])
            try await table.update(todo("b", "two!"))
            try await f.store.upsert(table: "todo", items: [todo("c", "three", version: "1")])
            try await table.delete(id: "c")
            f.transport.enqueueEcho()
            f.transport.enqueueEcho(status: 200)
            f.transport.enqueue(status: 204)
            try await f.context.push()
            #expect(f.transport.requests.map(\.method) == [.post, .patch, .delete])
            for request in f.transport.requests {
                #expect(request.header("ZUMO-API-VERSION") == "2.0.0")
                let features = try #require(request.header("X-ZUMO-FEATURES"))
                #expect(features.split(separator: ",").contains("OL"))
                #expect(request.header("X-ZUMO-INSTALLATION-ID") == "install-1")
                #expect(request.header("X-ZUMO-VERSION")?.isEmpty == false)
                #expect(request.header("User-Agent") == request.header("X-ZUMO-VERSION"))
                #expect(request.header("Content-Type") == (request.body == nil ? nil : "application/json"))
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aMissingLocalRowIsRecordedAsAnErrorAndThePushGoesOn(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("a", "one"))
            try await table.insert(todo("b", "two"))
            try await f.store.delete(table: "todo", ids: ["a"])  // the row vanished behind the queue's back
            f.transport.enqueueEcho()
            let error = try await #require(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error.operationErrors.map(\.itemId) == ["a"])
            #expect(f.transport.requests.map { $0.jsonObject?["id"] } == ["b"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func idsArePercentEncodedInTheURL(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a b#ü%", "x", version: "1")])
            try await f.table().delete(id: "a b#ü%")
            f.transport.enqueue(status: 200)
            try await f.context.push()
            let request = try #require(f.transport.requests.first)
            #expect(request.url.absoluteString == "https://sync.example.test/app/tables/todo/a%20b%23%C3%BC%25")
            #expect(request.path == "/app/tables/todo/a b#ü%")
        }
    }
}
