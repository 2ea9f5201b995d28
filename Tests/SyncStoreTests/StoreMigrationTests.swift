import Foundation
import SyncSQL
import SyncSQLite
@_spi(Testing) import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// Stores made before ids matched whatever their ASCII case (and before the `deleted` flag was
/// kept out of local tables) are migrated when they are opened, plain and encrypted.
@Suite struct StoreMigrationTests {
    /// Makes `todo` the old way: an `id` column that compares exactly, a `deleted` column, and
    /// rows whose ids differ only by case; queues an operation for `Pending`.
    static func makeOldTable(_ store: SQLiteStore) async throws {
        try await store.withConnection { connection in
            try connection.transaction {
                try connection.execute(
                    """
                    CREATE TABLE "todo" ("id" TEXT PRIMARY KEY NOT NULL, "text" TEXT, "updatedAt" TEXT, "deleted" BOOLEAN)
                    """)
                let rows: [(String, String, String?)] = [
                    ("older", "older, stays alone", "2001-01-01T00:00:00.000Z"),
                    ("dup", "dup: older", "2001-01-01T00:00:00.000Z"),
                    ("DUP", "DUP: newer, kept", "2002-02-02T00:00:00.000Z"),
                    ("pending", "pending: newer, dropped", "2003-03-03T00:00:00.000Z"),
                    ("Pending", "Pending: has the operation, kept", "2001-01-01T00:00:00.000Z"),
                    ("Nodate", "Nodate: no timestamp, dropped", nil),
                    ("NODATE", "NODATE: a timestamp, kept", "2001-01-01T00:00:00.000Z"),
                ]
                for (id, text, updatedAt) in rows {
                    try connection.execute(
                        "INSERT INTO \"todo\" (\"id\", \"text\", \"updatedAt\", \"deleted\") VALUES (?, ?, ?, 0)",
                        [.text(id), .text(text), updatedAt.map(SQLValue.text) ?? .null])
                }
                try connection.execute(
                    """
                    INSERT INTO "__operations" ("kind", "state", "tableName", "itemId", "item", "version", "createdAt")
                    VALUES (1, 0, 'todo', 'Pending', NULL, 1, '2001-01-01T00:00:00.000Z')
                    """)
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aStoreMadeTheOldWayIsMigratedWhenOpened(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await Self.makeOldTable(store)
        try await store.close()

        let reopened = try await test.open()
        let rows = try await reopened.read(QueryDescription(table: "todo", orderBy: [OrderBy("text")])).items
        #expect(
            rows.map { $0["text"] } == [
                "DUP: newer, kept", "NODATE: a timestamp, kept", "Pending: has the operation, kept", "older, stays alone",
            ])
        #expect(rows.map { $0["id"] } == ["DUP", "NODATE", "Pending", "older"], "each kept row keeps its spelling")
        #expect(rows.allSatisfy { $0["deleted"] == nil }, "the deleted column is gone")
        #expect(try await reopened.read { try $0.columns(of: "todo") }.map { Set($0.keys) } == ["id", "text", "updatedAt"])
        #expect(try await reopened.lookup(table: "todo", id: "dup")?["text"] == "DUP: newer, kept")
        #expect(try await reopened.lookup(table: "todo", id: "PENDING")?["id"] == "Pending")
        #expect(try await reopened.read { try $0.operation(table: "todo", itemId: "PENDING") }?.itemId == "Pending")

        // One item per id from now on; the queue is untouched.
        try await reopened.upsert(table: "todo", items: [["id": "older", "text": "changed"], ["id": "OLDER", "text": "changed again"]])
        #expect(try await reopened.read(QueryDescription(table: "todo")).items.count == 4)
        #expect(
            try await reopened.lookup(table: "todo", id: "Older") == [
                "id": "older", "text": "changed again", "updatedAt": "2001-01-01T00:00:00.000Z",
            ])
        #expect(try await reopened.read { try $0.operationCount(table: nil) } == 1)
        #expect(try await reopened.checkIntegrity().isEmpty)
        try await reopened.close()

        // Opening again changes nothing.
        let again = try await test.open()
        #expect(try await again.read(QueryDescription(table: "todo")).items.count == 4)
        try await again.close()
    }
}
