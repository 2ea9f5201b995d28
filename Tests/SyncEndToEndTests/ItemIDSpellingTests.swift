import Foundation
import Logging
import SyncClient
import SyncServer
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Our server folds the ASCII case of ids, as SQL Server does: a pulled spelling other than the
/// local row's is the row's item (the pull asks the server, which names one item), never a clash.
@Suite struct ItemIDSpellingTests {
    @Test(arguments: StoreKind.allCases)
    func anotherSpellingFromOurServerIsTheSameItem(_ kind: StoreKind) async throws {
        var logger = Logger(label: "e2e")
        logger.logLevel = .critical
        let server = try await RunningServer.start(ServerConfiguration(port: 0, logger: logger))
        let (writerTest, writerStore) = try await TestStore.make(kind)
        let (readerTest, readerStore) = try await TestStore.make(kind)
        do {
            let writer = SyncContext(client: MobileServiceClient(url: server.url), store: writerStore)
            _ = try await writer.syncTable("todo").insert(["id": "ONE", "text": "from the server"])
            try await writer.push()

            try await readerStore.upsert(table: "todo", items: [["id": "one", "text": "local copy"]])
            let reader = SyncContext(client: MobileServiceClient(url: server.url), store: readerStore)
            #expect(try await reader.syncTable("todo").pull(queryId: "all") == 1)
            let rows = try await readerStore.read(QueryDescription(table: "todo")).items
            #expect(rows.map { $0["id"] } == ["one"], "one row, the spelling first written kept")
            #expect(rows.first?["text"] == "from the server")
            #expect(try await reader.itemIDCaseClashes().isEmpty)
        } catch {
            Issue.record(error)
        }
        try await writerStore.close()
        try await readerStore.close()
        writerTest.directory.remove()
        readerTest.directory.remove()
        await server.stop()
    }
}
