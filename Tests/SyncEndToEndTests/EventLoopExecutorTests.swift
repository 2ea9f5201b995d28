#if os(Linux)
import Foundation
import Logging
import NIOCore
import NIOPosix
@testable import SyncClient
import SyncEventLoop
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// The executor a push prefers on Linux: the event loop of the transport's kept-alive connection
/// to the server, on which a task preferring it sends, is answered and goes on.
@Suite(.timeLimit(.minutes(2))) struct EventLoopExecutorTests {
    @Test func requestsOfATaskPreferringTheExecutorRunOnTheLoopOfTheirConnection() async throws {
        let server = try await ScriptedHTTPServer.start(.complete)
        let client = NIOHTTPClient(idleTimeout: .minutes(10))
        let transport = HTTPSyncTransport(client: client)
        let request = WholeRequestTransportTests.request(server)
        _ = try await transport.send(request)
        let executor = try #require(transport.executor(for: request.url) as? EventLoopExecutor)
        let key = HTTPConnectionPool.Key(secure: false, host: "127.0.0.1", port: server.port)
        let loop = try #require(client.pool.loop(key))
        #expect(executor.loop === loop)
        #expect(!executor.loop.inEventLoop)

        let expected = Data((ScriptedHTTPServer.firstPiece + ScriptedHTTPServer.secondPiece).utf8)
        let answers = try await withTaskExecutorPreference(executor) {
            var answers: [Bool] = []
            for _ in 0..<20 {
                let response = try await transport.send(request)
                answers.append(response.body == expected && executor.loop.inEventLoop)
            }
            return answers
        }
        #expect(answers == Array(repeating: true, count: 20))
        // The same connection served them all.
        #expect(server.acceptedCount == 1)
        #expect(transport.idleConnectionCount == 1)
        await transport.closeIdleConnections()
        try await server.stop()
    }

    /// A conflict handler that notes, at each call, whether it runs on an event loop.
    final class LoopWitness: SyncConflictHandler {
        let onLoop = Mutex<[String: Bool]>([:])

        func execute(_ operation: PushOperation) async throws -> JSONObject? {
            onLoop.withLock { $0["execute \(operation.itemId)"] = MultiThreadedEventLoopGroup.currentEventLoop != nil }
            return try await operation.execute()
        }

        func pushDidComplete(with errors: [TableOperationError]) async {
            onLoop.withLock { $0["pushDidComplete"] = MultiThreadedEventLoopGroup.currentEventLoop != nil }
        }
    }

    @Test func aConflictHandlerRunsOffTheEventLoopOfThePush() async throws {
        var logger = Logger(label: "e2e-loop")
        logger.logLevel = .critical
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
        let (test, store) = try await TestStore.make(.plain)
        do {
            let client = MobileServiceClient(url: server.url)
            _ = try await client.table("todo").insert(["id": "taken", "text": "theirs"])
            let witness = LoopWitness()
            let context = SyncContext(client: client, store: store, conflictHandler: witness)
            let table = try context.syncTable("todo")
            _ = try await table.insert(["id": "new", "text": "mine"])
            _ = try await table.insert(["id": "taken", "text": "mine"])
            let error = await #expect(throws: SyncError.self) { try await context.push() }
            #expect(error == .pushCompletedWithErrors)
            #expect(error?.operationErrors.map(\.itemId) == ["taken"])
            // Every call of the handler ran on Swift's pool, not on the loop the push prefers.
            let calls = witness.onLoop.withLock { $0 }
            #expect(calls == ["execute new": false, "execute taken": false, "pushDidComplete": false])
            #expect(try await client.table("todo").lookup(id: "new")?["text"] == "mine")
        } catch {
            try? await store.close()
            test.directory.remove()
            await server.stop()
            throw error
        }
        try await store.close()
        test.directory.remove()
        await server.stop()
    }

    /// The event loop of each write a store was asked for (nil: a write not on a loop).
    final class WriteLoops: Sendable {
        let loops = Mutex<[ObjectIdentifier?]>([])
    }

    /// A store that notes, at each write, the event loop the write was asked for on.
    struct LoopNotingStore: LocalStore {
        let base: SQLiteStore
        let writes = WriteLoops()

        var changes: StoreChanges? { base.changes }

        func read<T: Sendable>(_ body: @Sendable (any StoreReader) throws -> T) async throws -> T {
            try await base.read(body)
        }

        func write<T: Sendable>(_ body: @Sendable (any StoreWriter) throws -> T) async throws -> T {
            let loop = MultiThreadedEventLoopGroup.currentEventLoop.map { ObjectIdentifier($0) }
            writes.loops.withLock { $0.append(loop) }
            return try await base.write(body)
        }
    }

    /// A push runs on the loop of its connection, and a store without an executor of its own
    /// (this one) writes there, blocking the loop: it is one of the client's own loops, never one
    /// of NIO's shared loops, on which the app's other SwiftNIO work (here, the server itself) runs.
    @Test func aPushWritesTheStoreOnTheClientsOwnLoopsNotOnNIOsSharedOnes() async throws {
        var logger = Logger(label: "e2e-loop")
        logger.logLevel = .critical
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
        let (test, base) = try await TestStore.make(.plain)
        let store = LoopNotingStore(base: base)
        do {
            let client = MobileServiceClient(url: server.url)
            let context = SyncContext(client: client, store: store)
            let table = try context.syncTable("todo")
            for n in 0..<5 { _ = try await table.insert(["id": .string("i\(n)"), "text": "mine"]) }
            store.writes.loops.withLock { $0.removeAll() }
            try await context.push()
            let loops = store.writes.loops.withLock { $0 }
            let shared = Set(MultiThreadedEventLoopGroup.singleton.makeIterator().map { ObjectIdentifier($0) })
            #expect(loops.contains { $0 != nil }, "the push ran its writes on a loop: \(loops)")
            #expect(!loops.contains { $0.map(shared.contains) ?? false }, "a write ran on one of NIO's shared loops")
            #expect(try await client.table("todo").lookup(id: "i4")?["text"] == "mine")
        } catch {
            try? await base.close()
            test.directory.remove()
            await server.stop()
            throw error
        }
        try await base.close()
        test.directory.remove()
        await server.stop()
    }

    @Test func aURLTheClientDoesNotSendToHasNoExecutor() throws {
        let transport = HTTPSyncTransport(client: NIOHTTPClient())
        #expect(transport.executor(for: try #require(URL(string: "ftp://127.0.0.1/"))) == nil)
    }
}
#endif
