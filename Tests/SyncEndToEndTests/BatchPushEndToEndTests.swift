import Foundation
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Batched pushes, and pushes with several operations in flight, over real HTTP against the real
/// server on 127.0.0.1, on both kinds of store: the same outcomes as one request per operation,
/// and the fallback against a server without the extension.
@Suite struct BatchPushEndToEndTests {
    /// How the device sends: the server's batch limit (0: no extension), and the device's
    /// batching and parallelism.
    struct Sending: Sendable, CustomTestStringConvertible {
        let maxBatchOperations: Int
        let batching: PushBatching
        let parallelism: Int
        var testDescription: String { "batch limit \(maxBatchOperations), \(batching), \(parallelism) in flight" }
    }

    static func server(maxBatchOperations: Int) async throws -> RunningServer {
        var logger = Logger(label: "e2e-batch")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.maxBatchOperations = maxBatchOperations
        return try await RunningServer.start(configuration)
    }

    /// Runs `body` with a store of `kind` whose context pushes to `server` as `sending` says.
    static func withDevice(
        _ kind: StoreKind, _ server: RunningServer, _ sending: Sending, _ body: (SyncContext, SyncTable) async throws -> Void
    ) async throws {
        let (test, store) = try await TestStore.make(kind)
        let context = SyncContext(client: MobileServiceClient(url: server.url), store: store)
        await context.setPushBatching(sending.batching)
        try await context.setPushParallelism(sending.parallelism)
        do {
            try await body(context, try context.syncTable("todo"))
        } catch {
            try? await store.close()
            test.directory.remove()
            throw error
        }
        try await store.close()
        test.directory.remove()
    }

    @Test(
        arguments: StoreKind.allCases,
        [
            Sending(maxBatchOperations: 7, batching: .automatic, parallelism: 1),
            Sending(maxBatchOperations: 0, batching: .automatic, parallelism: 1),
            Sending(maxBatchOperations: 0, batching: .off, parallelism: 4),
        ])
    func aPushAppliesEverythingAndRecordsTheConflict(_ kind: StoreKind, sending: Sending) async throws {
        let server = try await Self.server(maxBatchOperations: sending.maxBatchOperations)
        do {
            let remote = try MobileServiceClient(url: server.url).table("todo")
            _ = try await remote.insert(["id": "taken", "text": "theirs"])
            try await Self.withDevice(kind, server, sending) { context, table in
                for i in 0..<20 { _ = try await table.insert(["id": .string("i\(i)"), "text": .string("item \(i)")]) }
                _ = try await table.insert(["id": "taken", "text": "mine"])
                for i in 20..<30 { _ = try await table.insert(["id": .string("i\(i)"), "text": .string("item \(i)")]) }
                let error = await #expect(throws: SyncError.self) { try await context.push() }
                #expect(error == .pushCompletedWithErrors)
                let failed = try #require(error?.operationErrors.first)
                #expect(error?.operationErrors.count == 1)
                #expect(failed.itemId == "taken" && failed.statusCode == 409 && failed.serverItem?["text"] == "theirs")
                #expect(try await context.pendingOperations().map(\.itemId) == ["taken"])
                let local = try await table.lookup(id: "i29")
                #expect(local?["version"]?.stringValue?.isEmpty == false)
                // Then the updates of every pushed item, sent the same way, over the server's versions.
                for i in 0..<30 { try await table.update(["id": .string("i\(i)"), "text": .string("edited \(i)")]) }
                try await failed.cancelAndDiscard()
                try await context.push()
                #expect(try await context.pendingOperationsCount == 0)
            }
            let items = try await remote.read(Query().orderBy("id").top(100)).items
            #expect(items.count == 31)
            #expect(items.filter { $0["text"]?.stringValue?.hasPrefix("edited ") == true }.count == 30)
            #expect(items.first { $0["id"] == "taken" }?["text"] == "theirs")
            #expect(Set(items.compactMap { $0["updatedAt"]?.stringValue }).count == 31, "each write has its own stamp")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// A batch whose body is larger than the server takes (413) was not applied: its operations go
    /// again in smaller batches, and only an operation too large on its own fails, with its own 413.
    @Test(arguments: StoreKind.allCases)
    func aBatchTooLargeForTheServerGoesAgainInSmallerOnes(_ kind: StoreKind) async throws {
        var logger = Logger(label: "e2e-batch")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(port: 0, logger: logger)
        configuration.maxBatchOperations = 50
        configuration.maxBodySize = 4096
        let server = try await RunningServer.start(configuration)
        do {
            let sending = Sending(maxBatchOperations: 50, batching: .automatic, parallelism: 1)
            try await Self.withDevice(kind, server, sending) { context, table in
                let text = JSONValue.string(String(repeating: "x", count: 300))
                for i in 0..<40 { _ = try await table.insert(["id": .string("i\(i)"), "text": text]) }
                _ = try await table.insert(["id": "big", "text": .string(String(repeating: "y", count: 5000))])
                for i in 40..<50 { _ = try await table.insert(["id": .string("i\(i)"), "text": text]) }
                let error = await #expect(throws: SyncError.self) { try await context.push() }
                #expect(error == .pushCompletedWithErrors)
                #expect(error?.operationErrors.map(\.itemId) == ["big"])
                #expect(error?.operationErrors.first?.statusCode == 413)
                #expect(try await context.pendingOperations().map(\.itemId) == ["big"])
                #expect(try await table.lookup(id: "i49")?["version"]?.stringValue?.isEmpty == false)
            }
            let items = try await MobileServiceClient(url: server.url).table("todo").read(Query().orderBy("id").top(100)).items
            #expect(items.count == 50)
            #expect(!items.contains { $0["id"] == "big" })
            #expect(items.allSatisfy { $0["text"] == .string(String(repeating: "x", count: 300)) })
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
