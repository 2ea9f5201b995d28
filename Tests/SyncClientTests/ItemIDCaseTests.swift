import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Item ids name one item whatever the ASCII case of their letters (as SQL Server compares them
/// behind the original backends): in the queue, in the pull's "pending operation wins" rule and in
/// the local table. The spelling first written is kept.
@Suite struct ItemIDCaseTests {
    @Test(arguments: StoreKind.allCases)
    func theQueueFindsAnItemWhateverTheCase(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            try await table.insert(todo("ITEMID", "created"))
            try await table.update(todo("itemid", "edited"))
            let pending = try await f.operations()
            #expect(pending.map(\.kind) == [.insert], "the update folds into the pending insert")
            #expect(pending.map(\.itemId) == ["ITEMID"])
            #expect(try await f.rows().map { $0["id"] } == ["ITEMID"])
            #expect(try await f.row("ItemId")?["text"] == "edited")
            await #expect(throws: SyncError.operationNotAllowed) { try await table.insert(todo("ItemID", "again")) }

            f.transport.enqueueEcho()
            try await f.context.push()
            #expect(f.transport.requests.map(\.line) == ["POST /app/tables/todo"])
            #expect(f.transport.requests.first?.jsonObject?["text"] == "edited")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPullSkipsAnItemWithAPendingEditInAnotherCase(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("ONE", "before", version: "1")])
            let gate = AsyncGate()
            let page = try JSONCoding.encode(JSONValue.array([.object(serverItem("one", "server edit")), .object(serverItem("two", "other"))]))
            f.transport.enqueue { _ in
                await gate.wait()
                return SyncResponse(statusCode: 200, body: page)
            }
            f.transport.enqueuePage([])
            let pull = Task { try await f.table().pull() }
            await f.transport.waitForRequests(1)
            try await f.table().update(todo("ONE", "local edit", version: "1"))  // while the page is on the wire
            gate.open()
            _ = try await pull.value
            #expect(try await f.rows().map { $0["id"] } == ["ONE", "two"])
            #expect(try await f.row("ONE")?["text"] == "local edit", "the pending edit wins until pushed")
            #expect(try await f.operations().map(\.itemId) == ["ONE"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theLocalTableHoldsOneRowPerItem(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("Mixed", "first")])
            try await f.store.upsert(table: "todo", items: [todo("MIXED", "second")])
            #expect(try await f.rows() == [["id": "Mixed", "text": "second"]])
            #expect(try await f.row("mixed")?["text"] == "second")
            await #expect(throws: SyncError.itemAlreadyExists) { try await f.table().insert(todo("mIXED", "third")) }
            try await f.store.delete(table: "todo", ids: ["mixed"])
            #expect(try await f.rows().isEmpty)
        }
    }
}
