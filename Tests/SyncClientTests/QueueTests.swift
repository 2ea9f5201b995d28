import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Local writes and the operation queue: docs/protocol.md §3 cases 1–9, ordering, atomicity.
@Suite struct QueueTests {
    // Case 1
    @Test(arguments: StoreKind.allCases)
    func insertWithoutIdGeneratesAStringId(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let stored = try await f.table().insert(["name": "x"])
            let id = try #require(stored["id"]?.stringValue)
            #expect(ItemID.isValid(id))
            #expect(UUID(uuidString: id) != nil)
            #expect(try await f.row(id)?["name"] == "x")
            #expect(try await f.context.pendingOperationsCount == 1)
            let operation = try #require(try await f.operations().first)
            #expect(operation.kind == .insert && operation.itemId == id && operation.table == "todo")
        }
    }

    // Case 2
    @Test(arguments: StoreKind.allCases)
    func insertThenUpdateSendsOnePostWithTheUpdatedValues(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("test1", "first"))
            try await table.update(todo("test1", "second"))
            #expect(try await f.context.pendingOperationsCount == 1)
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo"])
            #expect(f.transport.requests.first?.jsonObject?["text"] == "second")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    /// A table name is an SQLite identifier: spelled another way, it is the same table and the
    /// same queue (the operation keeps its first spelling).
    @Test(arguments: StoreKind.allCases)
    func aTableSpelledAnotherWayIsTheSameTableAndQueue(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table("TodoItem").insert(todo("test1", "first"))
            try await f.table("todoitem").update(todo("test1", "second"))
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.table("TODOITEM").lookup(id: "test1")?["text"] == "second")
            await #expect(throws: SyncError.operationNotAllowed) { try await f.table("todoItem").insert(todo("test1", "again")) }
            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/TodoItem"])
            #expect(f.transport.requests.first?.jsonObject?["text"] == "second")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    // Case 3
    @Test(arguments: StoreKind.allCases)
    func insertThenDeleteSendsNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("test1", "first"))
            try await table.delete(id: "test1")
            #expect(try await f.context.pendingOperationsCount == 0)
            try await f.context.push()
            #expect(f.transport.requests.isEmpty)
            #expect(try await f.row("test1") == nil)
        }
    }

    // Case 4
    @Test(arguments: StoreKind.allCases)
    func insertAfterAPendingInsertFails(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("test1", "first"))
            await #expect(throws: SyncError.operationNotAllowed) { try await table.insert(todo("test1", "again")) }
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.row("test1")?["text"] == "first")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func insertOfAnIdThatExistsLocallyFails(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("test1", "first"))
            f.transport.enqueueEcho()
            try await f.context.push()
            await #expect(throws: SyncError.itemAlreadyExists) { try await table.insert(todo("test1", "again")) }
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.row("test1")?["text"] == "first")
        }
    }

    // Case 6
    @Test(arguments: StoreKind.allCases)
    func insertAfterAPendingUpdateFails(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.update(todo("test1", "edited", version: "1"))  // an item pulled before
            await #expect(throws: SyncError.operationNotAllowed) { try await table.insert(todo("test1", "new")) }
            let operations = try await f.operations()
            #expect(operations.map(\.kind) == [.update])
            #expect(try await f.row("test1")?["text"] == "edited")
        }
    }

    // Case 7
    @Test(arguments: StoreKind.allCases)
    func twoUpdatesSendOnePatchWithTheLastValues(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.update(todo("test1", "one", version: "v1"))
            try await table.update(todo("test1", "two"))
            #expect(try await f.context.pendingOperationsCount == 1)
            f.transport.enqueueEcho(status: 200, version: "v2")
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["PATCH /app/tables/todo/test1"])
            let body = try #require(f.transport.requests.first?.jsonObject)
            #expect(body["text"] == "two")
            #expect(body["version"] == nil)
            #expect(f.transport.requests.first?.header("If-Match") == "\"v1\"")
            #expect(try await f.row("test1")?["version"] == "v2")
        }
    }

    // Case 8
    @Test(arguments: StoreKind.allCases)
    func updateThenDeleteSendsOneDeleteAndNoPatch(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.update(todo("test1", "one", version: "v1"))
            try await table.delete(id: "test1")
            #expect(try await f.operations().map(\.kind) == [.delete])
            f.transport.enqueue(status: 200, json: .object(todo("test1", "one")))
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["DELETE /app/tables/todo/test1"])
            #expect(f.transport.requests.first?.header("If-Match") == "\"v1\"")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    // Case 9
    @Test(arguments: StoreKind.allCases)
    func nothingMayFollowAPendingDelete(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.update(todo("test1", "one", version: "1"))  // an item pulled before
            try await table.delete(id: "test1")
            await #expect(throws: SyncError.operationNotAllowed) { try await table.insert(todo("test1", "a")) }
            await #expect(throws: SyncError.operationNotAllowed) { try await table.update(todo("test1", "b")) }
            await #expect(throws: SyncError.operationNotAllowed) { try await table.delete(id: "test1") }
            #expect(try await f.operations().map(\.kind) == [.delete])
            #expect(try await f.row("test1") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func operationsArePushedInQueueOrderAcrossTables(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let lists = try f.table("lists")
            let items = try f.table("items")
            try await lists.insert(todo("L1", "groceries"))
            try await items.insert(todo("I1", "milk"))
            try await lists.insert(todo("L2", "hardware"))
            try await lists.update(todo("L1", "food"))
            let pending = try await f.context.pendingOperations()
            #expect(pending.map(\.itemId) == ["L1", "I1", "L2"])
            #expect(pending.map(\.id) == pending.map(\.id).sorted())
            #expect(try await f.context.pendingOperations(table: "lists").map(\.itemId) == ["L1", "L2"])
            for _ in 0..<3 { f.transport.enqueueEcho() }
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/lists", "POST /app/tables/items", "POST /app/tables/lists"])
            #expect(f.transport.requests.map { $0.jsonObject?["id"] } == ["L1", "I1", "L2"])
            #expect(f.transport.requests.first?.jsonObject?["text"] == "food")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func collapsingDeletesTheStoredErrors(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.update(todo("a", "one", version: "1"))  // an item pulled before
            try await table.insert(todo("b", "two"))
            // Clear refusals: a 5xx would leave both marked attempted (maybe applied), see UncertainInsertTests.
            f.transport.enqueue(status: 400, json: ["error": "bad"])
            f.transport.enqueue(status: 400, json: ["error": "bad"])
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            #expect(try await f.storedErrors().count == 2)
            try await table.update(todo("a", "replace"))  // update over update: keep, error dropped
            try await table.delete(id: "b")  // delete over a refused insert: both cancelled, error dropped
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.operations().map(\.itemId) == ["a"])
            #expect(try await f.operations().first?.state == .pending)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteKeepsTheStoredItemWithItsVersionInTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await f.store.upsert(table: "todo", items: [todo("s1", "server", version: "7")])
            try await table.delete(id: "s1")
            let operation = try #require(try await f.operations().first)
            #expect(operation.kind == .delete)
            #expect(operation.item?["version"] == "7")
            #expect(operation.item?["text"] == "server")
            #expect(try await f.row("s1") == nil)
        }
    }
}
