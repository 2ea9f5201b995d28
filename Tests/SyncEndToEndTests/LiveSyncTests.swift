import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Live sync between two devices through a `sync-server` process: a write on one device shows in
/// the other's observed query without the other calling pull.
@Suite(.timeLimit(.minutes(2))) struct LiveSyncTests {
    struct Device {
        let test: TestStore
        let store: SQLiteStore
        let context: SyncContext
        let table: SyncTable

        static func make(_ kind: StoreKind, server: URL, transport: (any SyncTransport)? = nil) async throws -> Device {
            let (test, store) = try await TestStore.make(kind)
            let client = MobileServiceClient(url: server, transport: transport ?? HTTPSyncTransport(), installationID: ItemID.generate())
            let context = SyncContext(client: client, store: store)
            return Device(test: test, store: store, context: context, table: try context.syncTable("todo"))
        }

        func close() async throws {
            try await store.close()
            test.directory.remove()
        }
    }

    static let fast = LiveSyncOptions(
        pushDelay: .milliseconds(10), initialBackoff: .milliseconds(50), maximumBackoff: .milliseconds(400),
        fallbackPullInterval: .milliseconds(100))

    /// Reads `results` until one holds an item with `text`.
    static func waitFor(_ text: String, in results: inout some AsyncIteratorProtocol<QueryResult, any Error>) async throws {
        while let result = try await results.next() {
            if result.items.contains(where: { $0["text"]?.stringValue == text }) { return }
        }
        Issue.record("the observation ended before \(text) appeared")
    }

    /// Reads `events` until one matches.
    static func waitFor(_ events: inout AsyncStream<LiveSyncEvent>.Iterator, _ matches: (LiveSyncEvent) -> Bool) async -> [LiveSyncEvent] {
        var seen: [LiveSyncEvent] = []
        while let event = await events.next() {
            seen.append(event)
            if matches(event) { return seen }
        }
        Issue.record("live sync ended early: \(seen)")
        return seen
    }

    static func isConnected(_ event: LiveSyncEvent) -> Bool {
        if case .connected = event { return true }
        return false
    }

    /// Devices A and B on `server`, B in live sync, for `body`; everything stopped and removed
    /// afterwards.
    static func withDevices(
        _ kind: StoreKind, server: URL, transportB: (any SyncTransport)? = nil,
        _ body: (Device, Device, LiveSync) async throws -> Void
    ) async throws {
        let a = try await Device.make(kind, server: server)
        let b = try await Device.make(kind, server: server, transport: transportB)
        let liveB = try b.context.startLiveSync([LiveSyncTable("todo")], options: Self.fast)
        do { try await body(a, b, liveB) } catch { Issue.record(error) }
        await liveB.stop()
        try await a.close()
        try await b.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aWriteOnOneDeviceAppearsInTheOthersObservedQuery(_ kind: StoreKind) async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        try await Self.withDevices(kind, server: server.url) { a, b, liveB in
            let liveA = try a.context.startLiveSync([LiveSyncTable("todo")], options: Self.fast)
            var eventsB = liveB.events.makeAsyncIterator()
            _ = await Self.waitFor(&eventsB, Self.isConnected)
            var results = b.table.observe(Query().orderBy("text")).makeAsyncIterator()

            // An explicit push on A ...
            _ = try await a.table.insert(["text": "pushed by hand"])
            try await a.context.push()
            try await Self.waitFor("pushed by hand", in: &results)
            // ... and one that A's live sync pushes by itself.
            _ = try await a.table.insert(["text": "pushed live"])
            try await Self.waitFor("pushed live", in: &results)
            #expect(try await b.context.pendingOperationsCount == 0)
            await liveA.stop()
        }
        server.stop()
    }

    @Test(arguments: StoreKind.allCases)
    func liveSyncReconnectsAfterTheServerRestarts(_ kind: StoreKind) async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = "sqlite:" + directory.path("server.db")
        let first = try await ServerProcess.start(database: database)
        let port = try #require(first.url.port)
        let restarted = Mutex<ServerProcess?>(nil)
        try await Self.withDevices(kind, server: first.url) { a, b, liveB in
            var events = liveB.events.makeAsyncIterator()
            _ = await Self.waitFor(&events, Self.isConnected)
            var results = b.table.observe().makeAsyncIterator()
            _ = try await a.table.insert(["text": "before the restart"])
            try await a.context.push()
            try await Self.waitFor("before the restart", in: &results)

            #expect(first.stop().status == 0)
            let lost = await Self.waitFor(&events) { if case .disconnected = $0 { return true } else { return false } }
            #expect(!lost.isEmpty)
            let second = try await ServerProcess.start(database: database, arguments: ["--port", String(port)])
            restarted.withLock { $0 = second }
            _ = await Self.waitFor(&events, Self.isConnected)

            _ = try await a.table.insert(["text": "after the restart"])
            try await a.context.push()
            try await Self.waitFor("after the restart", in: &results)
        }
        restarted.withLock { $0 }?.stop()
    }

    @Test(arguments: StoreKind.allCases)
    func againstAServerWithoutTheRouteLiveSyncPullsAtAnInterval(_ kind: StoreKind) async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        try await Self.withDevices(kind, server: server.url, transportB: ServerWithoutChanges()) { a, b, liveB in
            var events = liveB.events.makeAsyncIterator()
            _ = await Self.waitFor(&events) { if case .pollingFallback = $0 { return true } else { return false } }
            var results = b.table.observe().makeAsyncIterator()
            _ = try await a.table.insert(["text": "found by polling"])
            try await a.context.push()
            try await Self.waitFor("found by polling", in: &results)
        }
        server.stop()
    }

    @Test func stopEndsTheEventsAndBadTablesAreRefused() async throws {
        let (test, store) = try await TestStore.make(.plain)
        let context = SyncContext(client: MobileServiceClient(url: URL(string: "http://127.0.0.1:9")!), store: store)
        #expect(throws: SyncError.invalidTableName) { try context.startLiveSync([]) }
        #expect(throws: SyncError.invalidTableName) { try context.startLiveSync([LiveSyncTable("to-do")]) }
        #expect(throws: SyncError.invalidQueryID) { try context.startLiveSync([LiveSyncTable("todo", queryId: "a|b")]) }
        // Nobody listens on port 9: the failures arrive as events, and stop ends the stream.
        let live = try context.startLiveSync([LiveSyncTable("todo")], options: Self.fast)
        var events = live.events.makeAsyncIterator()
        let first = await events.next()
        guard case .disconnected(let error)? = first else {
            Issue.record("expected a disconnection, got \(String(describing: first))")
            await live.stop()
            try await store.close()
            test.directory.remove()
            return
        }
        #expect(error == .transportFailed)
        await live.stop()
        while await events.next() != nil {}
        try await store.close()
        test.directory.remove()
    }
}

/// The real transport, except that `GET /changes` is answered 404, as a server that predates
/// the route answers it.
struct ServerWithoutChanges: SyncStreamingTransport {
    let base = HTTPSyncTransport()

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await base.send(request)
    }

    func openStream(_ request: SyncRequest) async throws -> SyncStreamResponse {
        guard !request.url.path.hasSuffix("/changes") else {
            return SyncStreamResponse(statusCode: 404, headers: [:], body: AsyncThrowingStream { $0.finish() })
        }
        return try await base.openStream(request)
    }
}
