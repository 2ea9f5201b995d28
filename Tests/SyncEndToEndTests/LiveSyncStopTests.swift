import Foundation
import SyncTestSupport
import SyncWire
import Testing

@testable import SyncClient

/// Live sync's `stop()` at the moment it is most likely to meet a request under way, many times
/// in a row against a `sync-server` process. Its own suite, with room for a busy machine: 200
/// starts and stops take several seconds on their own.
@Suite(.timeLimit(.minutes(10))) struct LiveSyncStopTests {
    /// Live sync stopped over and over just after it connected, while its first pull and the
    /// push of a local write are under way: every stop returns, no connection is left open but
    /// the kept-alive ones of whole requests (closed on demand), and the writes still reach the
    /// server afterwards.
    @Test func stoppingJustAfterConnectingEndsCleanly() async throws {
        try #require(ServerProcess.tool.isBuilt, "build the sync-server product first (scripts/test does)")
        let server = try await ServerProcess.start()
        let transport = HTTPSyncTransport()
        let device = try await LiveSyncTests.Device.make(.plain, server: server.url, transport: transport)
        for iteration in 0..<200 {
            _ = try await device.table.insert(["text": .string("written before stop \(iteration)")])
            let live = try device.context.startLiveSync([LiveSyncTable("todo")], options: LiveSyncTests.fast)
            var events = live.events.makeAsyncIterator()
            _ = await LiveSyncTests.waitFor(&events, LiveSyncTests.isConnected)
            await live.stop()
            #if os(Linux)
            await transport.closeIdleConnections()
            #expect(transport.idleConnectionCount == 0)
            // Every request's connection is closed, and the change stream's too: live sync
            // stops once its connection's close has run.
            let open = try LoopbackSockets.count(connectedTo: server.url.port ?? 0)
            #expect(open == 0)
            #endif
        }
        try await device.context.push()
        #expect(try await device.context.pendingOperationsCount == 0)
        let other = try await LiveSyncTests.Device.make(.plain, server: server.url)
        _ = try await other.table.pull(Query())
        #expect(try await other.table.read(Query()).items.count == 200)
        try await other.close()
        try await device.close()
        server.stop()
    }
}
