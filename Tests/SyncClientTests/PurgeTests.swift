import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Purge and force purge (docs/protocol.md §1.5.5): cases 46, 47, 49, 51.
@Suite struct PurgeTests {
    // Case 46
    @Test(arguments: StoreKind.allCases)
    func purgeDeletesTheMatchingRows(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("A", "DELETE"), todo("B", "KEEP"), todo("C", "DELETE")])
            try await f.table().purge(Query().where(Field("text") == "DELETE"))
            #expect(try await f.rows().map { $0["id"] } == ["B"])
            #expect(f.transport.requests.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func purgeWithoutAQueryEmptiesTheTableOnly(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("A", "x"), todo("B", "y")])
            try await f.store.upsert(table: "other", items: [todo("Z", "z")])
            try await f.table("other").insert(todo("Y", "pending elsewhere"))
            try await f.table().purge()
            #expect(try await f.rows().isEmpty)
            #expect(try await f.rows("other").count == 2)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    // Case 47
    @Test(arguments: StoreKind.allCases)
    func purgeIsRefusedWhileOperationsArePending(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("A", "DELETE")])
            try await f.table().insert(todo("B", "DELETE"))
            await #expect(throws: SyncError.purgeBlockedByPendingOperations) {
                try await f.table().purge(Query().where(Field("text") == "DELETE"))
            }
            await #expect(throws: SyncError.purgeBlockedByPendingOperations) { try await f.table().purge() }
            #expect(try await f.rows().count == 2)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    // Case 49
    @Test(arguments: StoreKind.allCases)
    func forcePurgeDropsRowsOperationsErrorsAndTokens(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            f.transport.enqueuePage([serverItem("s1", "x", updatedAt: "2001-02-04T00:00:00.000Z")])
            f.transport.enqueuePage([])
            try await table.pull(queryId: "items")
            try await table.insert(todo("p1", "one"))
            try await table.insert(todo("p2", "two"))
            try await f.table("other").insert(todo("o1", "other table"))
            f.transport.enqueue(status: 500)
            f.transport.enqueue(status: 500)
            f.transport.enqueue(status: 500)
            await #expect(throws: SyncError.pushCompletedWithErrors) { try await f.context.push() }
            #expect(try await f.storedErrors().count == 3)
            #expect(try await f.rows().count == 3)
            try await table.purge(force: true)
            #expect(try await f.rows().isEmpty)
            #expect(try await f.context.pendingOperationsCount == 1)
            #expect(try await f.operations().map(\.table) == ["other"])
            #expect(try await f.storedErrors().map(\.table) == ["other"])
            #expect(try await f.config("deltaToken|todo|items") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFilteredForcePurgeIsRefusedWhileOperationsArePending(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("A", "DELETE"))
            await #expect(throws: SyncError.invalidPurgeQuery) {
                try await f.table().purge(Query().where(Field("text") == "DELETE"), force: true)
            }
            #expect(try await f.rows().count == 1)
            #expect(try await f.context.pendingOperationsCount == 1)
        }
    }

    // Case 51
    @Test(arguments: StoreKind.allCases)
    func purgeWithAQueryIdResetsItsToken(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            let table = try f.table()
            f.transport.enqueuePage([serverItem("a", "x", updatedAt: "2001-02-04T00:00:00.000Z")])
            f.transport.enqueuePage([])
            try await table.pull(queryId: "items")
            f.transport.enqueuePage([serverItem("b", "y", updatedAt: "2001-02-04T00:00:00.000Z")])
            f.transport.enqueuePage([])
            try await table.pull(queryId: "others")
            #expect(try await f.config("deltaToken|todo|items") == "2001-02-04T00:00:00.000Z")
            try await table.purge(queryId: "items")
            #expect(try await f.config("deltaToken|todo|items") == nil)
            #expect(try await f.config("deltaToken|todo|others") != nil)  // other queries keep theirs
            f.transport.enqueuePage([])
            try await table.pull(queryId: "items")
            let filter = f.transport.requests.last?.queryValue("$filter")
            #expect(filter == "updatedAt ge datetimeoffset'1970-01-01T00:00:00.000Z'")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPlainPurgeKeepsTheTokens(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            f.transport.enqueuePage([serverItem("a", "x", updatedAt: "2001-02-04T00:00:00.000Z")])
            f.transport.enqueuePage([])
            try await f.table().pull(queryId: "items")
            try await f.table().purge()
            #expect(try await f.config("deltaToken|todo|items") == "2001-02-04T00:00:00.000Z")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aPurgeWithAnUnknownColumnFailsAndChangesNothing(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.store.upsert(table: "todo", items: [todo("A", "x")])
            await #expect(throws: SyncError.invalidQuery) { try await f.table().purge(Query().where(Field("missing") == 1)) }
            #expect(try await f.rows().count == 1)
        }
    }
}
