import Foundation
import Logging
import SyncClient
import SyncSQL
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Synchronization
import Testing

/// An incremental pull against the real server while rows are written between its requests:
/// G2 pages on by `$skip` past the rows at the token, and a row at the token written again leaves
/// its place, so the skip passes over another row. The pull reads such a row all the same.
@Suite struct MovedBoundaryPullTests {
    /// Sends through HTTP, and once, before the first request that skips rows, runs `interpose`.
    final class InterposingTransport: SyncTransport {
        let inner = HTTPSyncTransport()
        let interposed = Mutex(false)
        let interpose: @Sendable () async throws -> Void

        init(interpose: @escaping @Sendable () async throws -> Void) {
            self.interpose = interpose
        }

        func send(_ request: SyncRequest) async throws -> SyncResponse {
            let skips = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?.contains {
                $0.name == "$skip" && $0.value != "0"
            }
            if skips == true {
                let first = interposed.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { try await interpose() }
            }
            return try await inner.send(request)
        }
    }

    @Test(arguments: EngineStore.allCases)
    func aRowWrittenJustBeforeTheTokensRowMovedIsPulled(_ kind: EngineStore) async throws {
        var logger = Logger(label: "moved-boundary")
        logger.logLevel = .critical
        let storage = try await SQLiteTableStorage.open(.memory, logger: logger)
        _ = try await storage.ensureColumns("todo", scope: .shared, ["text": .text])
        for id in ["a", "b"] {
            let item: JSONObject = ["id": .string(id), "text": "first"]
            guard case .written = try await storage.insert(table: "todo", scope: .shared, item: item) else { throw WriteFailed() }
        }
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger), storage: storage)
        let (store, close) = try await kind.make()
        do {
            // The pull reads [a, b], then [b] at b's stamp, then skips one row: just before that
            // request a and then b are written again, so the skip passes over a.
            let transport = InterposingTransport {
                for id in ["a", "b"] {
                    let result = try await storage.update(
                        table: "todo", id: id, scope: .shared, values: ["text": "second"], condition: WriteCondition())
                    guard case .written = result else { throw WriteFailed() }
                }
            }
            let context = SyncContext(client: MobileServiceClient(url: server.url, transport: transport), store: store)
            _ = try await context.syncTable("todo").pull(queryId: "all")
            #expect(transport.interposed.withLock { $0 }, "the writes ran between the pull's requests")
            let rows = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items
            #expect(rows.map { $0["text"] } == ["second", "second"])
        } catch {
            Issue.record(error)
        }
        try? await close()
        await server.stop()
    }

    struct WriteFailed: Error {}
}
