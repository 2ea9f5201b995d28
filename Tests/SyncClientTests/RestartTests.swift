import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Restart safety: the queue, its errors and the delta tokens live in the store and survive
/// closing and reopening it; the next push continues in order (case 13).
@Suite struct RestartTests {
    // Case 13
    @Test(arguments: StoreKind.allCases)
    func queuedInsertsArePushedInOrderAfterARestart(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("first", "1"))
            try await f.table().insert(todo("second", "2"))
            let restarted = try await f.reopen()
            #expect(try await restarted.context.pendingOperationsCount == 2)
            restarted.transport.enqueueEcho()
            restarted.transport.enqueueEcho()
            try await restarted.context.push()
            #expect(restarted.transport.requests.map { $0.jsonObject?["id"] } == ["first", "second"])
            #expect(try await restarted.context.pendingOperationsCount == 0)
            try await restarted.store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theSequenceContinuesAfterTheHighestStoredOperation(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "1"))
            try await f.table().insert(todo("b", "2"))
            let before = try await f.operations().map(\.id)
            let restarted = try await f.reopen()
            try await restarted.table().insert(todo("c", "3"))
            let after = try await restarted.operations()
            #expect(after.map(\.itemId) == ["a", "b", "c"])
            #expect(Array(after.map(\.id).prefix(2)) == before)
            let newest = try #require(after.last?.id)
            let previous = try #require(before.last)
            #expect(newest > previous)
            try await restarted.store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func errorsAndTokensSurviveARestart(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([serverItem("s", "server", updatedAt: "2004-04-04T04:04:04.444Z")])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: "all")
            try await f.table().insert(todo("a", "local"))
            f.transport.enqueue(status: 412, json: ["id": "a", "text": "server text", "version": "8"])
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }

            let restarted = try await f.reopen()
            let errors = try await restarted.context.operationErrors()
            #expect(errors.count == 1)
            let error = try #require(errors.first)
            #expect(error.statusCode == 412 && error.itemId == "a" && error.serverItem?["text"] == "server text")
            #expect(error.item?["text"] == "local")
            #expect(try await restarted.config("deltaToken|todo|all") == "2004-04-04T04:04:04.444Z")
            // the stored error can be resolved after the restart
            try await error.cancelAndUpdate(try #require(error.serverItem))
            #expect(try await restarted.context.pendingOperationsCount == 0)
            #expect(try await restarted.row("a")?["text"] == "server text")
            // and the next incremental pull continues from the stored token
            restarted.transport.enqueuePage([])
            try await restarted.table().pull(queryId: "all")
            #expect(restarted.transport.requests.last?.queryValue("$filter") == "updatedAt ge datetimeoffset'2004-04-04T04:04:04.444Z'")
            try await restarted.store.close()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anOperationSentBeforeACrashIsSentAgain(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "1"))
            f.transport.enqueueNetworkError()  // the answer never arrived
            await #expect(throws: SyncError.pushAbortedByNetwork) { try await f.context.push() }
            let restarted = try await f.reopen()
            let pending = try await restarted.operations()
            #expect(pending.map(\.kind) == [.insert])
            #expect(pending.first?.state == .attempted)
            restarted.transport.enqueueEcho()
            try await restarted.context.push()
            #expect(restarted.transport.requests.map(\.line) == ["POST /app/tables/todo", "POST /app/tables/todo"])
            #expect(try await restarted.context.pendingOperationsCount == 0)
            try await restarted.store.close()
        }
    }
}
