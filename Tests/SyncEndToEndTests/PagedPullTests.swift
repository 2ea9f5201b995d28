import Foundation
import Logging
import SyncClient
import SyncSQL
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The pull asks for 1,000 items a request; a server that caps its pages lower (Azure's at 50)
/// is still pulled in full, by its `Link` or by `$skip`.
@Suite struct PagedPullTests {
    static let count = 175

    /// A server whose pages hold at most 50 items, seeded with ``count`` items.
    static func cappedServer() async throws -> RunningServer {
        var logger = Logger(label: "paged-pull")
        logger.logLevel = .critical
        let storage = try await SQLiteTableStorage.open(.memory, logger: logger)
        _ = try await storage.ensureColumns("todo", scope: .shared, ["text": .text, "n": .integer])
        for n in 0..<count {
            let item: JSONObject = ["id": .string(String(format: "item-%04d", n)), "text": .string("text \(n)"), "n": .int(Int64(n))]
            guard case .written = try await storage.insert(table: "todo", scope: .shared, item: item) else {
                throw SeedFailed()
            }
        }
        return try await RunningServer.start(ServerConfiguration(port: 0, pageSize: 50, logger: logger), storage: storage)
    }

    struct SeedFailed: Error {}

    @Test(arguments: EngineStore.allCases, [nil, "all"] as [String?])
    func aServerCappingPagesAtFiftyIsPulledInFull(_ kind: EngineStore, queryId: String?) async throws {
        let server = try await Self.cappedServer()
        let (store, close) = try await kind.make()
        do {
            let context = SyncContext(client: MobileServiceClient(url: server.url), store: store)
            let events = await context.events()
            let pulled = try await context.syncTable("todo").pull(queryId: queryId)
            #expect(pulled == Self.count)
            var pages: [Int] = []
            for await event in events {
                if case .pagePulled(_, let items, _) = event { pages.append(items) }
                if case .pullFinished = event { break }
            }
            // Asked for 1,000 a request, the server sent 50 at most. Every row has a stamp of
            // its own: an incremental pull re-reads the row at each new token (not counted
            // again), and last the newest alone, which moves the token no further.
            #expect(pages == (queryId == nil ? [50, 50, 50, 25] : [50, 50, 50, 28, 1]))
            let rows = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items
            #expect(rows.count == Self.count)
            #expect(rows.first?["text"] == "text 0")
            #expect(rows.last?["n"] == .int(Int64(Self.count - 1)))
        } catch {
            Issue.record(error)
        }
        try? await close()
        await server.stop()
    }

    @Test(arguments: EngineStore.allCases)
    func anExplicitPageSizeIsStillAskedFor(_ kind: EngineStore) async throws {
        let server = try await Self.cappedServer()
        let (store, close) = try await kind.make()
        do {
            let context = SyncContext(client: MobileServiceClient(url: server.url), store: store)
            let events = await context.events()
            #expect(try await context.syncTable("todo").pull(queryId: "q", pageSize: 40) == Self.count)
            var pages: [Int] = []
            for await event in events {
                if case .pagePulled(_, let items, _) = event { pages.append(items) }
                if case .pullFinished = event { break }
            }
            #expect(pages == [40, 40, 40, 40, 19, 1])
        } catch {
            Issue.record(error)
        }
        try? await close()
        await server.stop()
    }
}
