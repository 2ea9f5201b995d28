import Foundation
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The real client over real HTTP against the real server on 127.0.0.1, on the SQLite store (plain
/// and encrypted) and on the in-memory store of the public store contract.
@Suite struct EndToEndTests {
    /// A server on a free port and two devices (stores of one kind) connected to it.
    struct World {
        let server: RunningServer
        let a: Device, b: Device

        struct Device {
            let store: any LocalStore
            let close: @Sendable () async throws -> Void
            let context: SyncContext
            let table: SyncTable
        }

        static func make(_ kind: EngineStore) async throws -> World {
            var logger = Logger(label: "e2e")
            logger.logLevel = .critical
            let server = try await RunningServer.start(ServerConfiguration(port: 0, pageSize: 3, logger: logger))
            func device() async throws -> Device {
                let (store, close) = try await kind.make()
                let context = SyncContext(client: MobileServiceClient(url: server.url), store: store)
                return Device(store: store, close: close, context: context, table: try context.syncTable("todo"))
            }
            return World(server: server, a: try await device(), b: try await device())
        }

        func close() async throws {
            for device in [a, b] { try await device.close() }
            await server.stop()
        }
    }

    func texts(_ device: World.Device) async throws -> [String] {
        try await device.table.read(Query().orderBy("text")).items.compactMap { $0["text"]?.stringValue }
    }

    @Test(arguments: EngineStore.allCases)
    func offlineInsertsPushAndPullIncrementallyOnAnotherDevice(_ kind: EngineStore) async throws {
        let world = try await World.make(kind)
        do {
            for text in ["a", "b", "c", "d", "e"] { _ = try await world.a.table.insert(["text": .string(text), "done": false]) }
            #expect(try await world.a.context.pendingOperationsCount == 5)
            try await world.a.context.push()
            #expect(try await world.a.context.pendingOperationsCount == 0)

            // Pages of 3 from the server: the incremental pull follows them to the end.
            #expect(try await world.b.table.pull(Query(), queryId: "all") >= 5)
            #expect(try await texts(world.b) == ["a", "b", "c", "d", "e"])
            let token = try await world.b.store.read { try $0.configValue(forKey: "deltaToken|todo|all") }
            #expect(token != nil)

            // Only newer changes come back on the next pull, from the stored token.
            var first = try #require(try await world.a.table.read(Query().orderBy("text")).items.first)
            first["text"] = "a2"
            try await world.a.table.update(first)
            try await world.a.context.push()
            _ = try await world.b.table.pull(Query(), queryId: "all")
            #expect(try await texts(world.b) == ["a2", "b", "c", "d", "e"])
            let newer = try await world.b.store.read { try $0.configValue(forKey: "deltaToken|todo|all") }
            #expect((newer ?? "") > (token ?? "~"))
        } catch {
            Issue.record(error)
        }
        try await world.close()
    }

    @Test(arguments: EngineStore.allCases)
    func softDeletePropagates(_ kind: EngineStore) async throws {
        let world = try await World.make(kind)
        do {
            let item = try await world.a.table.insert(["text": "doomed"])
            _ = try await world.a.table.insert(["text": "kept"])
            try await world.a.context.push()
            _ = try await world.b.table.pull(Query(), queryId: "all")
            #expect(try await texts(world.b) == ["doomed", "kept"])
            try await world.a.table.delete(item)
            try await world.a.context.push()
            _ = try await world.b.table.pull(Query(), queryId: "all")
            #expect(try await texts(world.b) == ["kept"])
        } catch {
            Issue.record(error)
        }
        try await world.close()
    }

    enum Way: String, CaseIterable { case client, server, cancel }

    @Test(arguments: EngineStore.allCases, Way.allCases)
    func aConflictIsResolvedEachWay(_ kind: EngineStore, _ way: Way) async throws {
        let world = try await World.make(kind)
        do {
            let item = try await world.a.table.insert(["text": "original"])
            let id = try #require(item["id"]?.stringValue)
            try await world.a.context.push()
            _ = try await world.b.table.pull(Query(), queryId: "all")

            var onA = try #require(try await world.a.table.lookup(id: id))
            onA["text"] = "from A"
            try await world.a.table.update(onA)
            try await world.a.context.push()
            var onB = try #require(try await world.b.table.lookup(id: id))
            onB["text"] = "from B"
            try await world.b.table.update(onB)

            var pushError: SyncError?
            do { try await world.b.context.push() } catch let error as SyncError { pushError = error }
            #expect(pushError == .pushCompletedWithErrors)
            let conflict = try #require(pushError?.operationErrors.first)
            #expect(conflict.statusCode == 412 && conflict.isConflict)
            #expect(conflict.serverItem?["text"] == "from A" && conflict.item?["text"] == "from B")

            switch way {
            case .client:
                var mine = try #require(conflict.item)
                mine["version"] = conflict.serverItem?["version"]
                try await conflict.keepAndUpdate(mine)
                try await world.b.context.push()
            case .server:
                try await conflict.cancelAndUpdate(try #require(conflict.serverItem))
            case .cancel:
                try await conflict.cancelAndDiscard()
                _ = try await world.b.table.pull(Query(), queryId: "all")
            }
            let expected = way == .client ? "from B" : "from A"
            _ = try await world.a.table.pull(Query(), queryId: "all")
            #expect(try await world.a.table.lookup(id: id)?["text"]?.stringValue == expected)
            #expect(try await world.b.table.lookup(id: id)?["text"]?.stringValue == expected)
            #expect(try await world.b.context.pendingOperationsCount == 0)
            #expect(try await world.b.context.operationErrors().isEmpty)
        } catch {
            Issue.record(error)
        }
        try await world.close()
    }

    @Test func anUnreachableServerAbortsThePushAndKeepsTheQueue() async throws {
        let (test, store) = try await TestStore.make(.encrypted)
        let nobody = try RefusingPort()
        let context = SyncContext(client: MobileServiceClient(url: nobody.url()), store: store)
        let table = try context.syncTable("todo")
        _ = try await table.insert(["text": "queued"])
        do {
            try await context.push()
            Issue.record("push succeeded with no server")
        } catch let error as SyncError {
            #expect(error == .pushAbortedByNetwork)
        }
        #expect(try await context.pendingOperationsCount == 1)
        #expect(try await context.operationErrors().isEmpty)
        extendLifetime(nobody)
        try await store.close()
        test.directory.remove()
    }
}
