import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import SyncServer
import SyncWire
import Testing

/// Idle change streams cost the storage nothing: no stream reads it on a timer, and a keep-alive
/// reads nothing; only a write makes the table's one watcher read its scopes.
@Suite(.timeLimit(.minutes(3))) struct IdleChangeStreamTests {
    static func streamingClient(connections: Int) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    @Test func idleStreamsMakeNoStorageQueriesWhileTheirKeepAlivesTick() async throws {
        var configuration = ServerConfiguration.testing(
            authentication: .verifier(TestIdentityVerifier()), perUserTables: .named(["notes"]))
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .milliseconds(20))
        try await Self.withServer(configuration, connections: 64) { server, storage, streaming, client in
            _ = try await client.send(.post, server.url, "/tables/todo", object: ["id": "a", "text": "x"], headers: [(WireHeader.auth, "u0")])
            _ = try await client.send(.post, server.url, "/tables/notes", object: ["id": "n", "text": "x"], headers: [(WireHeader.auth, "u1")])
            var streams: [ChangeStreamTests.Stream] = []
            for index in 0..<40 {
                var stream = try await ChangeStreamTests.Stream.open(
                    streaming, server.url, tables: "todo,notes", headers: [(WireHeader.auth, "u\(index % 4)")])
                #expect(stream.status == 200)
                for _ in 0..<2 { _ = try #require(try await stream.nextEvent()) }
                streams.append(stream)
            }
            let before = storage.statements.count
            // Every stream's keep-alive ticks three times: each tick wakes the stream, which
            // looks at its tables' states again.
            for index in streams.indices {
                var ticks = 0
                while ticks < 3, let block = try await streams[index].nextBlock() {
                    #expect(block == ": keep-alive", "an idle stream sent \(block)")
                    ticks += 1
                }
                #expect(ticks == 3)
            }
            #expect(storage.statements.count == before, "idle streams made \(storage.statements.count - before) storage queries")

            // A write still reaches the streams of its scope, and only those.
            let written = try await client.send(
                .post, server.url, "/tables/notes", object: ["id": "m", "text": "y"], headers: [(WireHeader.auth, "u1")])
            let event = try #require(try await streams[1].nextEvent())
            #expect(event.data == ["table": "notes", "updatedAt": written.object["updatedAt"] ?? .null])
            #expect(event.id.hasSuffix(",notes|" + (written.object["updatedAt"]?.stringValue ?? "-")))
        }
    }

    @Test func aHardDeleteIsAnnouncedWithItsOwnStampAlsoToAStreamThatReconnects() async throws {
        var configuration = ServerConfiguration.testing(softDelete: false)
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .seconds(30))
        try await Self.withServer(configuration, connections: 4) { server, storage, streaming, client in
            let first = try await client.send(.post, server.url, "/tables/todo", object: ["id": "a"])
            let second = try await client.send(.post, server.url, "/tables/todo", object: ["id": "b"])
            let before = try #require(second.object["updatedAt"]?.stringValue)
            var stream = try await ChangeStreamTests.Stream.open(streaming, server.url)
            let initial = try #require(try await stream.nextEvent())
            #expect(initial.id == "todo|\(before)")
            // The first row is removed: the newest row's stamp stays, the delete's is newer.
            #expect((200..<300).contains(try await client.send(.delete, server.url, "/tables/todo/a").status.code))
            let removed = try #require(try await stream.nextEvent())
            let stamp = try #require(removed.data["updatedAt"]?.stringValue)
            #expect(stamp > before && stamp != first.object["updatedAt"]?.stringValue)
            #expect(removed.id == "todo|\(stamp)")
            #expect(try await storage.removalStamp(of: "todo", scope: .shared) == stamp)

            // A client that left before the delete learns of it when it comes back.
            var again = try await ChangeStreamTests.Stream.open(streaming, server.url, headers: [("Last-Event-ID", initial.id)])
            #expect(try await again.nextEvent()?.id == removed.id)
            // The next write stamps past the delete.
            let third = try await client.send(.post, server.url, "/tables/todo", object: ["id": "c"])
            #expect((third.object["updatedAt"]?.stringValue ?? "") > stamp)
            #expect(try await stream.nextEvent()?.data["updatedAt"] == third.object["updatedAt"])
        }
    }

    @Test func aStreamWhoseDeviceGoesIsLetGoAtOnceNotAtItsNextKeepAlive() async throws {
        var configuration = ServerConfiguration.testing()
        configuration.metrics = ServerMetrics()
        // No keep-alive is written during the test: only the connections' closing can end them.
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .seconds(3_600))
        try await Self.withServer(configuration, connections: 4) { server, _, _, client in
            _ = try await client.send(.post, server.url, "/tables/todo", object: ["id": "a"])
            let port = try #require(server.url.port)
            func open(resetOnClose: Bool) async throws -> RawConnection {
                let connection = try RawConnection(port: port, resetOnClose: resetOnClose)
                try await connection.send(
                    Array("GET /changes?tables=todo HTTP/1.1\r\nHost: 127.0.0.1\r\nZUMO-API-VERSION: 2.0.0\r\n\r\n".utf8))
                let opening = try await connection.read(until: "event: change")
                #expect(opening.hasPrefix("HTTP/1.1 200 ") && opening.contains("event: change"), "\(opening.prefix(200))")
                return connection
            }
            func streamsOpen() async throws -> Double? { try await MetricsTests.scrape(client, server).1["ciphersync_change_streams_open"] }
            func waitUntilOpen(is count: Double) async throws -> Double? {
                let deadline = ContinuousClock.now + .seconds(20)
                var streams = try await streamsOpen()
                while streams != count, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                    streams = try await streamsOpen()
                }
                return streams
            }

            var reset: [RawConnection] = []
            for _ in 0..<20 { reset.append(try await open(resetOnClose: true)) }
            let staying = try await open(resetOnClose: false)
            #expect(try await streamsOpen() == 21)

            // Devices whose connections are reset (a network that goes): NIO sees the reset and
            // closes the channel, which ends its stream. (A client's orderly close is a half-close
            // to HTTP, after which a response may still be sent: that stream ends at its next
            // keep-alive, whose write the closed socket refuses.)
            reset.removeAll()
            #expect(try await waitUntilOpen(is: 1) == 1)

            // The stream that stayed still gets the next write's event.
            let written = try await client.send(.post, server.url, "/tables/todo", object: ["id": "b"])
            let stamp = try #require(written.object["updatedAt"]?.stringValue)
            #expect(try await staying.read(until: stamp).contains(stamp))
        }
    }

    /// Starts a server over a new SQLite storage in memory, runs `body` with a streaming client of
    /// `connections` connections and a request client, then stops everything.
    static func withServer(
        _ configuration: ServerConfiguration, connections: Int,
        _ body: (RunningServer, SQLiteTableStorage, HTTPClient, HTTPTestClient) async throws -> Void
    ) async throws {
        let storage = try await SQLiteTableStorage.open(.memory, logger: .quiet)
        let server = try await RunningServer.start(configuration, storage: storage)
        let streaming = streamingClient(connections: connections)
        let client = HTTPTestClient()
        var failure: (any Error)?
        do { try await body(server, storage, streaming, client) } catch { failure = error }
        try? await streaming.shutdown()
        try? await client.shutdown()
        await server.stop()
        if let failure { throw failure }
    }
}
