import Foundation
import SyncClient
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Backends that are not ours but speak the protocol: the system flag `deleted` must never become
/// a user property.
@Suite struct ForeignServerTests {
    /// An item that arrives by a pull after a push stored a server answer shows no `deleted`
    /// property, and no local table has a `deleted` column.
    @Test(arguments: StoreKind.allCases)
    func theDeletedFlagIsNeverAUserProperty(kind: StoreKind) async throws {
        try await withClient(kind) { f in
            try await f.table().insert(todo("a", "pushed"))
            var stored = todo("a", "pushed", version: "v1")
            stored["deleted"] = false
            stored["updatedAt"] = "2013-01-01T00:00:00.000Z"
            f.transport.enqueue(status: 201, json: .object(stored))
            try await f.context.push()
            f.transport.enqueuePage([serverItem("b", "pulled", deleted: false), serverItem("c", "pulled too", deleted: nil)])
            f.transport.enqueuePage([])
            try await f.table().pull()
            let rows = try await f.rows()
            #expect(rows.map { $0["id"] } == ["a", "b", "c"])
            for row in rows { #expect(row["deleted"] == nil, "\(row.keys.sorted())") }
            #expect(try await f.store.read { try $0.columns(of: "todo") }?.keys.contains("deleted") == false)
        }
    }
}
