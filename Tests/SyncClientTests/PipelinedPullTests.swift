import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// The pull asks for page N+1 while page N is written: order of writes and token saves,
/// cancellation, a store failure during the overlap; and what the returned count means.
@Suite(.timeLimit(.minutes(2))) struct PipelinedPullTests {
    /// A store whose write transactions first wait for `beforeWrite`, and may then fail.
    final class HeldStore: LocalStore {
        struct InjectedFailure: Error {}

        let inner: SQLiteStore
        let beforeWrite: @Sendable () async -> Void
        let failWrites: Bool

        init(_ inner: SQLiteStore, failWrites: Bool = false, beforeWrite: @escaping @Sendable () async -> Void) {
            self.inner = inner
            self.failWrites = failWrites
            self.beforeWrite = beforeWrite
        }

        func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
            try await inner.read(body)
        }

        func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
            await beforeWrite()
            if failWrites { throw InjectedFailure() }
            return try await inner.write(body)
        }
    }

    /// A context over `store` and a scripted transport.
    static func context(_ store: some LocalStore, _ transport: FakeSyncTransport) -> SyncContext {
        SyncContext(client: MobileServiceClient(url: ClientFixture.serverURL, transport: transport, installationID: "i"), store: store)
    }

    static func page(_ items: [JSONObject]) -> Data {
        (try? JSONCoding.encode(JSONValue.array(items.map(JSONValue.object)))) ?? Data()
    }

    /// A count shared between tasks.
    final class Counter: Sendable {
        private let state = Mutex(0)
        func next() -> Int {
            state.withLock {
                $0 += 1
                return $0
            }
        }
    }

    /// Whether something happened, set from any task.
    final class Flag: Sendable {
        private let state = Mutex(false)
        var isSet: Bool { state.withLock { $0 } }
        func set() { state.withLock { $0 = true } }
    }

    /// An answer that comes only when its task is cancelled (then it fails), recording that.
    static func answerOnlyCancelled(_ transport: FakeSyncTransport, cancelled: Flag) {
        transport.enqueue { _ in
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            cancelled.set()
            throw CancellationError()
        }
    }

    @Test(arguments: StoreKind.allCases)
    func theNextPageIsOnTheWireWhileAPageIsWritten(kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let transport = FakeSyncTransport()
        transport.enqueuePage([serverItem("a", "1", updatedAt: "2001-01-01T00:00:00.001Z")])
        transport.enqueuePage([serverItem("b", "2", updatedAt: "2001-01-01T00:00:00.002Z")])
        transport.enqueuePage([])
        // Each write waits until the request after its page has been sent: a pull that asked
        // for the next page only after writing would never get past the first page.
        let writes = Counter()
        let held = HeldStore(store) {
            let n = writes.next()
            await transport.waitForRequests(n + 1)
        }
        let context = Self.context(held, transport)
        let pulled = try await context.syncTable("todo").pull(queryId: "q")
        #expect(pulled == 2)
        #expect(transport.requests.count == 3)
        let rows = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items
        #expect(rows.compactMap { $0["id"]?.stringValue } == ["a", "b"])
        #expect(try await store.read { try $0.configValue(forKey: "deltaToken|todo|q") } == "2001-01-01T00:00:00.002Z")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aCancelDuringTheOverlapKeepsTheWrittenPageAndItsTokenOnly(kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let transport = FakeSyncTransport()
        transport.enqueuePage([serverItem("a", "1", updatedAt: "2001-01-01T00:00:00.001Z")])
        let gate = AsyncGate()
        let second = Self.page([serverItem("b", "2", updatedAt: "2001-01-01T00:00:00.002Z")])
        transport.enqueue { _ in
            await gate.wait()
            return SyncResponse(statusCode: 200, body: second)
        }
        let held = HeldStore(store) { await transport.waitForRequests(2) }
        let context = Self.context(held, transport)
        let table = try context.syncTable("todo")
        let pull = Task { try await table.pull(queryId: "q") }
        await transport.waitForRequests(2)
        context.cancel()
        gate.open()
        await #expect(throws: SyncError.pullCancelled) { try await pull.value }
        #expect(transport.requests.count == 2)
        // The first page was being written when the cancel came: it and its token are kept;
        // the page that answered after the cancel is not applied.
        let rows = try await store.read(QueryDescription(table: "todo")).items
        #expect(rows.compactMap { $0["id"]?.stringValue } == ["a"])
        #expect(try await store.read { try $0.configValue(forKey: "deltaToken|todo|q") } == "2001-01-01T00:00:00.001Z")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreFailureCancelsTheRequestInFlight(kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let transport = FakeSyncTransport()
        transport.enqueuePage([serverItem("a", "1")])
        let cancelled = Flag()
        Self.answerOnlyCancelled(transport, cancelled: cancelled)
        let held = HeldStore(store, failWrites: true) { await transport.waitForRequests(2) }
        let context = Self.context(held, transport)
        await #expect(throws: SyncError.localStoreFailed) { try await context.syncTable("todo").pull() }
        #expect(cancelled.isSet, "the next page's request was cancelled")
        #expect(try await store.read(QueryDescription(table: "todo")).items.isEmpty)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func cancellingTheTaskDuringTheOverlapCancelsTheRequestInFlight(kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let transport = FakeSyncTransport()
        transport.enqueuePage([serverItem("a", "1", updatedAt: "2001-01-01T00:00:00.001Z")])
        let cancelled = Flag()
        Self.answerOnlyCancelled(transport, cancelled: cancelled)
        let context = Self.context(store, transport)
        let table = try context.syncTable("todo")
        let pull = Task { try await table.pull(queryId: "q") }
        await transport.waitForRequests(2)
        pull.cancel()
        await #expect(throws: SyncError.pullCancelled) { try await pull.value }
        #expect(cancelled.isSet)
        #expect(transport.requests.count == 2)
        try await store.close()
    }

    // MARK: the count

    @Test(arguments: StoreKind.allCases)
    func rowsReadAgainAtTheTokensTimestampCountOnce(kind: StoreKind) async throws {
        try await withClient(kind) { f async throws in
            let t1 = "2001-01-01T00:00:01.000Z", t2 = "2001-01-01T00:00:02.000Z", t3 = "2001-01-01T00:00:03.000Z"
            f.transport.enqueuePage([serverItem("a", "1", updatedAt: t1), serverItem("b", "2", updatedAt: t2)])
            // from t2: b again, then c; from t3: c again (the token stays: paging goes on by skip)
            f.transport.enqueuePage([serverItem("b", "2", updatedAt: t2), serverItem("c", "3", updatedAt: t3)])
            f.transport.enqueuePage([serverItem("c", "3", updatedAt: t3)])
            f.transport.enqueuePage([])
            #expect(try await f.table().pull(queryId: "q") == 3)
            #expect(try await f.rows().count == 3)
            let skips = f.transport.requests.map { PullTests.query($0)["$skip"] }
            #expect(skips == ["0", "0", "0", "1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anItemChangedDuringThePullCountsForEachVersionWritten(kind: StoreKind) async throws {
        try await withClient(kind) { f async throws in
            let t1 = "2001-01-01T00:00:01.000Z", t2 = "2001-01-01T00:00:02.000Z", t4 = "2001-01-01T00:00:04.000Z"
            f.transport.enqueuePage([serverItem("a", "old", updatedAt: t1), serverItem("b", "2", updatedAt: t2)])
            f.transport.enqueuePage([serverItem("b", "2", updatedAt: t2), serverItem("a", "new", updatedAt: t4)])
            f.transport.enqueuePage([serverItem("a", "new", updatedAt: t4)])
            f.transport.enqueuePage([])
            #expect(try await f.table().pull(queryId: "q") == 3, "a, b, then a's new version")
            #expect(try await f.row("a")?["text"] == "new")
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aFullPullCountsEveryItemWritten(kind: StoreKind) async throws {
        try await withClient(kind) { f async throws in
            f.transport.enqueuePage(PullTests.items(0..<3))
            f.transport.enqueuePage(PullTests.items(3..<5))
            f.transport.enqueuePage([])
            #expect(try await f.table().pull() == 5)
        }
    }
}
