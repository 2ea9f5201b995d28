import AsyncHTTPClient
import Foundation
import HTTPTypes
import PostgresNIO
import SyncServer
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// Two server instances over one PostgreSQL database: a write through one reaches the change
/// streams of the other through `LISTEN`/`NOTIFY` (never a timer), also when the other's listening
/// connection was lost while the write was made.
@Suite(.timeLimit(.minutes(3))) struct ChangeNotifyAcrossInstancesTests {
    /// Records what a storage's listening connection does, and holds its reconnection while a
    /// test wants the connection down.
    final class ListenerWatch: WriteObserver {
        private let events: AsyncStream<ListenerEvent>.Continuation
        let heard: AsyncStream<ListenerEvent>
        private let held = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let holding = Mutex(false)

        init() { (heard, events) = AsyncStream.makeStream() }

        func write(_ step: WriteStep, table: String, id: String) async {}

        func listening(_ event: ListenerEvent) async {
            events.yield(event)
            guard event == .lost, holding.withLock({ $0 }) else { return }
            await withCheckedContinuation { continuation in held.withLock { $0 = continuation } }
        }

        /// Makes the next loss wait until ``release()``.
        func holdReconnection() { holding.withLock { $0 = true } }

        /// Lets a held reconnection go on.
        func release() {
            holding.withLock { $0 = false }
            held.withLock { $0.take() }?.resume()
        }
    }

    /// The changes a storage's feed announced.
    final class FeedLog: Sendable {
        let changes = Mutex<[TableChange]>([])
        /// Each change, as it is announced.
        let heard: AsyncStream<TableChange>
        init(_ feed: ChangeFeed?) {
            let (heard, announced) = AsyncStream<TableChange>.makeStream()
            self.heard = heard
            _ = feed?.subscribe { [weak self] change in
                self?.changes.withLock { $0.append(change) }
                announced.yield(change)
            }
        }
    }

    /// Two instances with `configuration` over a new database, the second's listening connection
    /// watched, and a streaming client of `streams` connections; everything stopped afterwards.
    static func withTwoInstances(
        _ configuration: ServerConfiguration = .testing(), streams: Int = 4,
        _ body: (RunningServer, RunningServer, PostgresTableStorage, ListenerWatch, HTTPTestClient, HTTPClient, String) async throws -> Void
    ) async throws {
        let settings = try await PostgresTestDatabases.create()
        var configuration = configuration
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .seconds(30))
        let watch = ListenerWatch()
        var servers: [RunningServer] = []
        let client = HTTPTestClient()
        let streaming = IdleChangeStreamTests.streamingClient(connections: streams)
        var failure: (any Error)?
        do {
            servers.append(try await RunningServer.start(configuration, storage: try await PostgresTableStorage.open(settings, logger: .quiet)))
            let second = try await PostgresTableStorage.open(settings, logger: .quiet, observer: watch)
            servers.append(try await RunningServer.start(configuration, storage: second))
            var iterator = watch.heard.makeAsyncIterator()
            #expect(await iterator.next() == .listening)
            try await body(servers[0], servers[1], second, watch, client, streaming, settings.database)
        } catch {
            failure = error
        }
        watch.release()
        try? await streaming.shutdown()
        try? await client.shutdown()
        for server in servers { await server.stop() }
        try? await PostgresTestDatabases.drop(settings)
        if let failure { throw failure }
    }

    /// Holds the watched listener's next reconnection and ends the listening connections to
    /// `database`; whether the watched one then reported its loss.
    static func cutListeners(of database: String, holding watch: ListenerWatch) async throws -> Bool {
        var heard = watch.heard.makeAsyncIterator()
        watch.holdReconnection()
        try await PostgresTestDatabases.administer(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = '\(database)' AND query LIKE 'LISTEN%'
            """)
        return await heard.next() == .lost
    }

    @Test func aWriteThroughOneInstanceReachesAStreamOnTheOtherThroughNotify() async throws {
        try await Self.withTwoInstances { first, second, secondStorage, _, client, streaming, _ in
            let seedLog = FeedLog(secondStorage.changeFeed)
            _ = try await client.send(.post, first.url, "/tables/todo", object: ["id": "seed"])
            // The seed's notification has reached the second instance before its stream opens.
            var seed = seedLog.heard.makeAsyncIterator()
            #expect(await seed.next() == .written(table: "todo", scope: .shared))
            var stream = try await ChangeStreamTests.Stream.open(streaming, second.url)
            _ = try #require(try await stream.nextEvent())
            let log = FeedLog(secondStorage.changeFeed)
            let idle = secondStorage.statements.count

            let written = try await client.send(.post, first.url, "/tables/todo", object: ["id": "x"])
            let event = try #require(try await stream.nextEvent())
            #expect(event.data == ["table": "todo", "updatedAt": written.object["updatedAt"] ?? .null])
            // The second instance heard of it on its listening connection, and read once.
            #expect(log.changes.withLock { $0 } == [.written(table: "todo", scope: .shared)])
            #expect(secondStorage.statements.count - idle == 1)
        }
    }

    @Test func aWriteMadeWhileTheListenerIsDownIsDeliveredAfterItListensAgain() async throws {
        try await Self.withTwoInstances { first, second, _, watch, client, streaming, database in
            var stream = try await ChangeStreamTests.Stream.open(streaming, second.url)
            _ = try #require(try await stream.nextEvent())
            #expect(try await Self.cutListeners(of: database, holding: watch))
            var heard = watch.heard.makeAsyncIterator()
            // Both listeners are down now; the second stays down until released.
            let written = try await client.send(.post, first.url, "/tables/todo", object: ["id": "while-down"])
            #expect(written.status == .created)
            watch.release()
            #expect(await heard.next() == .listening)
            let event = try #require(try await stream.nextEvent())
            #expect(event.data == ["table": "todo", "updatedAt": written.object["updatedAt"] ?? .null])
        }
    }
}
