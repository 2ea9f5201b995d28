import SyncTestSupport
import Testing

@testable import SyncStore

/// The push hint (`willPush(operations:)` / `didPush()`): the store's page cache grows for a large
/// push's working set while it runs, and is put back when the last push ends.
@Suite struct StorePushHintTests {
    @Test(arguments: StoreKind.allCases)
    func aLargePushRaisesThePageCacheUntilTheLastPushEnds(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let before = try #require(try await store.pageCacheSetting())
        let perOperation = Int64(SQLiteStore.pushCacheBytesPerOperation / 1024)

        await store.willPush(operations: 20_000)
        #expect(try await store.pageCacheSetting() == -20_000 * perOperation)
        await store.willPush(operations: 100)
        #expect(try await store.pageCacheSetting() == -20_000 * perOperation, "a smaller push beside it takes nothing away")
        await store.didPush()
        #expect(try await store.pageCacheSetting() == -20_000 * perOperation, "one push is still under way")
        await store.didPush()
        #expect(try await store.pageCacheSetting() == before)

        await store.willPush(operations: 100_000_000)
        #expect(try await store.pageCacheSetting() == -Int64(SQLiteStore.pushCacheBytesLimit / 1024))
        await store.didPush()
        #expect(try await store.pageCacheSetting() == before)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aSmallPushLeavesTheCacheAsItWas(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let before = try #require(try await store.pageCacheSetting())
        await store.willPush(operations: 10)
        #expect(try await store.pageCacheSetting() == before)
        await store.didPush()
        #expect(try await store.pageCacheSetting() == before)
        // An unmatched end changes nothing, and the next push still raises and restores.
        await store.didPush()
        await store.willPush(operations: 50_000)
        #expect(try await store.pageCacheSetting() == -50_000 * Int64(SQLiteStore.pushCacheBytesPerOperation / 1024))
        await store.didPush()
        #expect(try await store.pageCacheSetting() == before)
        try await store.close()
    }

    @Test func aClosedStoreTakesTheHintWithoutFailing() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        defer { test.directory.remove() }
        try await store.close()
        await store.willPush(operations: 50_000)
        await store.didPush()
        #expect(await store.isClosed)
    }
}
