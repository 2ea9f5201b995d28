import Foundation
import HTTPTypes
import SyncServer
import SyncWire
import Testing

/// An attachment row's insert and a delete of its item, at once: the insert checks its item and
/// writes the row in one transaction with the item's row locked, so either the insert comes first
/// (and the delete takes the row with it) or the delete does (and the insert is a 404). No row
/// outlives its item.
@Suite struct AttachmentInsertRaceTests {
    static let pairs = 200

    @Test(arguments: [StorageFactory.sqliteFile, .postgres], [true, false])
    func noAttachmentRowOutlivesItsItem(_ factory: StorageFactory, softDelete: Bool) async throws {
        let configuration = ServerConfiguration.testing(softDelete: softDelete)
        try await Deployment.run(factory, instances: 2, configuration: configuration) { deployment in
            let client = deployment.client
            let bytes = AttachmentFixture.content(64, seed: 31)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for pair in 0..<Self.pairs {
                    group.addTask {
                        let item = try await client.send(.post, deployment.server(pair), "/tables/photos", object: ["id": .string("p\(pair)")])
                        try #require(item.status == .created)
                    }
                }
                try await group.waitForAll()
            }
            let outcomes = try await withThrowingTaskGroup(of: (HTTPResponse.Status, HTTPResponse.Status).self) { group in
                for pair in 0..<Self.pairs {
                    group.addTask {
                        async let inserted = client.send(
                            .post, deployment.server(pair), "/tables/photos__attachments",
                            object: try AttachmentFixture.row("a\(pair)", item: "p\(pair)", content: bytes))
                        async let deleted = client.send(.delete, deployment.server(pair + 1), "/tables/photos/p\(pair)")
                        return (try await inserted.status, try await deleted.status)
                    }
                }
                var outcomes: [(HTTPResponse.Status, HTTPResponse.Status)] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.allSatisfy { $0.1 == .ok }, "every delete happened")
            #expect(outcomes.allSatisfy { [.created, .notFound].contains($0.0) }, "an insert either came first or found no item")
            let rows = try await deployment.allRows("photos__attachments")
            let live = rows.values.filter { $0["deleted"] != .bool(true) }.compactMap { $0["id"]?.stringValue }.sorted()
            #expect(live.isEmpty, "rows that outlived their item: \(live)")
            #expect(rows.count == (softDelete ? outcomes.count { $0.0 == .created } : 0))
        }
    }
}
