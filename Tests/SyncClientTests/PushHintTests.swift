import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// A push tells its store how many operations it starts with and that it ended (the store's push
/// hint), however it ends; the SQLite store holds a larger page cache in between.
@Suite struct PushHintTests {
    @Test(arguments: StoreKind.allCases)
    func aLargePushHoldsALargerCacheUntilItEnds(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            let count = 2_500
            let ids = (0..<count).map { "item-\($0)" }
            try await f.store.write { writer in
                try writer.upsert(table: "todo", items: ids.map { todo($0, "text of \($0)") }, ignoreMissingColumns: false)
                for id in ids { _ = try writer.addOperation(kind: .insert, table: "todo", itemId: id, item: nil) }
            }
            let before = try #require(try await f.store.pageCacheSetting())
            await f.context.setPushBatching(.automatic)
            BatchPushTests.enqueueCapabilities(f, most: 1_000)
            for _ in 0..<50 { BatchPushTests.enqueueBatch(f) }

            try await f.context.push()
            #expect(try await f.context.pendingOperationsCount == 0)
            let raised = -Int64(count * SQLiteStore.pushCacheBytesPerOperation / 1024)
            #expect(raised < before, "the push's working set is larger than the default cache")
            #expect(spy.hints == [.init(operations: count, cacheSize: raised), .init(operations: nil, cacheSize: before)])
            #expect(try await f.store.pageCacheSetting() == before)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anAbortedPushEndsItsHintToo(kind: StoreKind) async throws {
        try await withClient(kind, spied: true) { f in
            let spy = try #require(f.spy)
            for id in ["a", "b", "c"] { try await f.table().insert(todo(id, "mine \(id)")) }
            let before = try #require(try await f.store.pageCacheSetting())
            f.transport.enqueueNetworkError()
            let error = await #expect(throws: SyncError.self) { try await f.context.push() }
            #expect(error == .pushAbortedByNetwork)
            #expect(try await f.context.pendingOperationsCount == 3)
            #expect(spy.hints == [.init(operations: 3, cacheSize: before), .init(operations: nil, cacheSize: before)])
        }
    }
}
