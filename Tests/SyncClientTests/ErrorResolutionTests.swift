import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The resolution calls on a TableOperationError: docs/protocol.md §3 cases 23–25 and the others.
@Suite struct ErrorResolutionTests {
    /// Queues an insert of `a`, pushes it against a 409 and returns the recorded error.
    func failedInsert(_ f: ClientFixture) async throws -> TableOperationError {
        try await f.table().insert(todo("a", "local"))
        f.transport.enqueue(status: 409, json: ["id": "a", "text": "server", "version": "5"])
        let error = try await #require(throws: SyncError.self) { try await f.context.push() }
        return try #require(error.operationErrors.first)
    }

    // Case 23
    @Test(arguments: StoreKind.allCases)
    func cancelAndUpdateStoresTheItemAndDropsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            try await error.cancelAndUpdate(todo("a", "resolved", version: "5"))
            #expect(try await f.row("a")?["text"] == "resolved")
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    // Case 24
    @Test(arguments: StoreKind.allCases)
    func cancelAndDiscardDropsTheRowAndTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            try await error.cancelAndDiscard()
            #expect(try await f.row("a") == nil)
            #expect(try await f.context.pendingOperationsCount == 0)
            #expect(try await f.storedErrors().isEmpty)
        }
    }

    // Case 25 (Swift has no nil item: an empty item or another item's id is the bad input)
    @Test(arguments: StoreKind.allCases)
    func cancelAndUpdateWithoutAUsableItemFailsAndKeepsTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            await #expect(throws: SyncError.invalidItem) { try await error.cancelAndUpdate([:]) }
            await #expect(throws: SyncError.invalidItem) { try await error.cancelAndUpdate(todo("other", "x")) }
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.storedErrors().count == 1)
            #expect(try await f.row("a")?["text"] == "local")
            #expect(try await f.row("other") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func keepAndUpdateRequeuesWithTheNewContent(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            let before = try #require(try await f.operations().first)
            // the duplicate insert becomes an update of the server's item, over its version
            try await error.changeOperationType(to: .update, item: todo("a", "merged", version: "5"))
            let after = try #require(try await f.operations().first)
            #expect(after.kind == .update && after.state == .pending && after.version > before.version)
            #expect(try await f.storedErrors().isEmpty)
            #expect(try await f.row("a")?["text"] == "merged")
            f.transport.enqueueEcho(status: 200, version: "6")
            try await f.context.push()
            let request = try #require(f.transport.requests.last)
            #expect(request.line == "PATCH /app/tables/todo/a")
            #expect(request.header("If-Match") == "\"5\"")
            #expect(request.jsonObject?["text"] == "merged")
            #expect(try await f.context.pendingOperationsCount == 0)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func changingToADeleteRemovesTheRowAndKeepsTheItemInTheOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("a", "local", version: "1")])
            try await f.table().update(todo("a", "local!"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "server", "version": "2"])
            let error = try #require(try await #require(throws: SyncError.self) { try await f.context.push() }.operationErrors.first)
            try await error.changeOperationType(to: .delete, item: ["version": "2"])
            #expect(try await f.row("a") == nil)
            let operation = try #require(try await f.operations().first)
            #expect(operation.kind == .delete && operation.item?["version"] == "2")
            f.transport.enqueue(status: 200)
            try await f.context.push()
            #expect(f.transport.requests.last?.header("If-Match") == "\"2\"")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func keepAndUpdateKeepsTheKind(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            try await error.keepAndUpdate(todo("a", "retry"))
            #expect(try await f.operations().map(\.kind) == [.insert])
            #expect(try await f.row("a")?["text"] == "retry")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aResolutionOfAChangedOperationFails(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            try await f.table().update(todo("a", "newer edit"))  // bumps the operation's version
            await #expect(throws: SyncError.operationChanged) { try await error.cancelAndDiscard() }
            #expect(try await f.row("a")?["text"] == "newer edit")
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aResolutionOfAGoneOperationFails(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            try await error.cancelAndDiscard()
            await #expect(throws: SyncError.operationNotFound) { try await error.cancelAndUpdate(todo("a", "late")) }
            #expect(try await f.row("a") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func storedErrorsAreListedByTheContext(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let error = try await failedInsert(f)
            let listed = try await f.context.operationErrors()
            #expect(listed.map(\.id) == [error.id])
            #expect(listed.first?.serverItem?["text"] == "server")
        }
    }
}
