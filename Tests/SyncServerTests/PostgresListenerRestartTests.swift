import AsyncHTTPClient
import Foundation
import HTTPTypes
import PostgresNIO
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

@testable import SyncServer

/// The listening connection of an instance (`LISTEN`) over a PostgreSQL server that stops and
/// starts again (a private cluster): a `LISTEN` sent on a connection whose session ended after it
/// connected fails at once and the listener tries again, instead of waiting for an answer
/// forever; once the database is back, a stream on that instance receives a write made through
/// the other instance, through `NOTIFY`, within a bound.
@Suite(.timeLimit(.minutes(5))) struct PostgresListenerRestartTests {
    /// The storage timeout of both instances.
    static let timeout: Duration = .seconds(3)
    /// The longest wait for anything of the listener or the database (the listener's back-off
    /// reaches 5 s; a busy shared machine adds to it).
    static let bound: Duration = .seconds(30)
    /// The longest wait for an instance's pool to serve again after the restart (its back-off
    /// grows while the database is down).
    static let recovery: Duration = .seconds(60)

    @Test func aListenOnAConnectionClosedMeanwhileIsRetriedAndStreamsHearTheOtherInstanceAfterARestart() async throws {
        let cluster = try await onOwnThread { try PostgresCluster.privateCluster() }
        var settings = try PostgresSettings(url: cluster.url(), poolSize: 4)
        settings.connectionWait = Self.timeout
        var configuration = ServerConfiguration.testing()
        configuration.storageTimeout = Self.timeout
        configuration.changeStream = ChangeStreamSettings(keepAliveInterval: .seconds(30))
        let client = HTTPTestClient()
        let streaming = IdleChangeStreamTests.streamingClient(connections: 4)
        var servers: [RunningServer] = []
        var watching: ListenerHold?
        do {
            // A first connection may take longer than the timeout on a busy machine: the
            // instances start again until they are up.
            let (first, hold) = try await opening(within: Self.recovery) {
                let hold = ListenerHold()
                let storage = try await PostgresTableStorage.open(settings, logger: .quiet, observer: hold)
                return (try await RunningServer.start(configuration, storage: storage), hold)
            }
            (servers, watching) = ([first], hold)
            servers.append(
                try await opening(within: Self.recovery) {
                    try await RunningServer.start(configuration, storage: try await PostgresTableStorage.open(settings, logger: .quiet))
                })
            let (listening, writing) = (servers[0].url, servers[1].url)
            #expect(try await Self.event(hold, at: 0) == .listening)
            _ = try await Self.write(client, writing, "seed")
            var before = try await ChangeStreamTests.Stream.open(streaming, listening)
            _ = try #require(try await before.nextEvent())

            // The database stops; the listener loses its connection.
            hold.holdNextConnection()
            try await answer(within: .seconds(60), "pg_ctl stop") { try await onOwnThread { try cluster.stop() } }
            #expect(try await Self.event(hold, at: 1) == .lost)
            // Back, the listener connects again and is held before its LISTEN while the database
            // stops under that connection.
            try await answer(within: .seconds(60), "pg_ctl start") { try await onOwnThread { try cluster.restart() } }
            let connection = try await answer(within: Self.bound, "the listener's new connection") { await hold.heldConnection() }
            try await answer(within: .seconds(60), "pg_ctl stop") { try await onOwnThread { try cluster.stop() } }
            try await answer(within: Self.bound, "the end of the held connection") { try? await connection.closeFuture.get() }
            #expect(connection.isClosed)
            let released = hold.release()
            // The LISTEN on the closed connection fails: the listener reports its loss, and tries again.
            #expect(try await Self.event(hold, at: released) == .lost)

            try await answer(within: .seconds(60), "pg_ctl start") { try await onOwnThread { try cluster.restart() } }
            _ = try await Self.first(.listening, of: hold, from: released)
            // A stream opened now, once the instance reads again, hears a write of the other instance.
            var after = try await Self.openStream(streaming, listening, client)
            let written = try await Self.write(client, writing, "after-restart")
            let event = try #require(try await after.nextEvent())
            #expect(event.data == ["table": "todo", "updatedAt": written])
            // The stream opened before the outage hears it too, or ended (a read failed while the
            // database was down: its client reconnects); it does not stay silent.
            if let heard = try await before.nextEvent() {
                #expect(heard.data["updatedAt"] == written)
            }
        } catch {
            Issue.record(error)
        }
        watching?.release()
        try? await streaming.shutdown()
        try? await client.shutdown()
        for server in servers { try? await answer(within: .seconds(60), "the server's shutdown") { await server.stop() } }
        try? await answer(within: .seconds(60), "pg_ctl stop") { try await onOwnThread { try cluster.stop() } }
    }

    /// The listener's event number `index` (from 0), waited for within ``bound``.
    static func event(_ hold: ListenerHold, at index: Int) async throws -> ListenerEvent {
        try await answer(within: bound, "the listener's event \(index)") { await hold.event(at: index) }
    }

    /// The number of the first `event` from number `index` on, waited for within ``bound``.
    static func first(_ event: ListenerEvent, of hold: ListenerHold, from index: Int) async throws -> Int {
        try await answer(within: bound, "the listener's \(event) from event \(index)") { await hold.first(event, from: index) }
    }

    /// Writes an item `id` to `todo` through `url`, again while the storage answers 503 (its pool
    /// reconnecting), within ``recovery``; its `updatedAt`.
    static func write(_ client: HTTPTestClient, _ url: URL, _ id: String) async throws -> JSONValue {
        let deadline = ContinuousClock.now + recovery
        while true {
            let reply = try await answer(within: bound, "POST \(id)") {
                try await client.send(.post, url, "/tables/todo", object: ["id": .string(id)])
            }
            if reply.status == .created { return reply.object["updatedAt"] ?? .null }
            #expect(reply.status == .serviceUnavailable, "POST \(id): \(reply.status)")
            guard reply.status == .serviceUnavailable, ContinuousClock.now < deadline else {
                throw NoAnswer(what: "a 201 for POST \(id)", limit: recovery)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// A change stream of `todo` on `url` that received its first event, opened once the
    /// instance's `/health` says 200, within ``recovery``.
    static func openStream(_ streaming: HTTPClient, _ url: URL, _ client: HTTPTestClient) async throws -> ChangeStreamTests.Stream {
        let deadline = ContinuousClock.now + recovery
        while try await answer(within: bound, "/health", { try await client.send(.get, url, "/health") }).status != .ok {
            guard ContinuousClock.now < deadline else { throw NoAnswer(what: "/health 200", limit: recovery) }
            try await Task.sleep(for: .milliseconds(100))
        }
        var stream = try await ChangeStreamTests.Stream.open(streaming, url)
        _ = try #require(try await stream.nextEvent())
        return stream
    }
}

/// Records the events of a storage's listening connection, numbered from 0, and holds its next
/// new connection before its `LISTEN` until released.
final class ListenerHold: WriteObserver {
    private struct State {
        var events: [ListenerEvent] = []
        var isHolding = false
        var held: PostgresConnection?
        var heldWaiter: CheckedContinuation<Void, Never>?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func write(_ step: WriteStep, table: String, id: String) async {}

    func listening(_ event: ListenerEvent) async {
        changing { $0.events.append(event) }
    }

    func listenerConnected(_ connection: PostgresConnection) async {
        guard state.withLock({ $0.isHolding }) else { return }
        changing { $0.held = connection }
        await withCheckedContinuation { continuation in
            let goOn = state.withLock { state -> Bool in
                guard state.isHolding else { return true }
                state.heldWaiter = continuation
                return false
            }
            if goOn { continuation.resume() }
        }
    }

    /// Makes the next new connection wait before its `LISTEN` until ``release()``.
    func holdNextConnection() {
        state.withLock { $0.isHolding = true }
    }

    /// Lets a held connection go on; the number of events recorded until then.
    @discardableResult func release() -> Int {
        let (waiter, count) = state.withLock { state in
            state.isHolding = false
            defer { state.heldWaiter = nil }
            return (state.heldWaiter, state.events.count)
        }
        waiter?.resume()
        return count
    }

    /// The connection being held, once there is one.
    func heldConnection() async -> PostgresConnection {
        await wait { $0.held }
    }

    /// Event number `index`, once it happened.
    func event(at index: Int) async -> ListenerEvent {
        await wait { $0.events.count > index ? $0.events[index] : nil }
    }

    /// The number of the first `event` from number `index` on, once it happened.
    func first(_ event: ListenerEvent, from index: Int) async -> Int {
        await wait { state in state.events.indices.first { $0 >= index && state.events[$0] == event } }
    }

    private func changing(_ change: (inout State) -> Void) {
        let waiters = state.withLock { state in
            change(&state)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func wait<T: Sendable>(_ found: (State) -> T?) async -> T {
        while true {
            var result: T?
            await withCheckedContinuation { continuation in
                let isFound = state.withLock { state -> Bool in
                    result = found(state)
                    if result == nil { state.waiters.append(continuation) }
                    return result != nil
                }
                if isFound { continuation.resume() }
            }
            if let result { return result }
        }
    }
}
