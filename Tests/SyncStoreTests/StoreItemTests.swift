import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@Suite struct StoreItemTests {
    @Test(arguments: StoreKind.allCases)
    func upsertThenLookupKeepsEveryJSONType(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        let item: JSONObject = [
            "id": "a1", "text": "buy milk ✓", "complete": false, "count": 3, "price": 2.5,
            "tags": ["x", 1], "meta": ["k": "v"], "version": "AAAB",
        ]
        try await store.upsert(table: "todo", items: [item])
        let stored = try #require(try await store.lookup(table: "todo", id: "a1"))
        #expect(stored == item)
        #expect(try await store.lookup(table: "todo", id: "missing") == nil)
        #expect(try await store.lookup(table: "never", id: "a1") == nil)
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func upsertUpdatesOnlyTheGivenPropertiesAndAddsColumns(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "one", "complete": false]])
        try await store.upsert(table: "todo", items: [["id": "a", "complete": true, "priority": 2]])
        let stored = try #require(try await store.lookup(table: "todo", id: "a"))
        #expect(stored == ["id": "a", "text": "one", "complete": true, "priority": 2])
        let columns = try await store.read { try $0.columns(of: "todo") }
        #expect(columns == ["id": .text, "text": .text, "complete": .boolean, "priority": .integer])
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func ignoreMissingColumnsDropsUnknownProperties(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.write { try $0.defineTable("todo", columns: ["text": .text]) }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t", "extra": 1]], ignoreMissingColumns: true)
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": "t"])
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func nullsAreStoredAndReadBack(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t"]])
        try await store.upsert(table: "todo", items: [["id": "a", "text": nil]])
        #expect(try await store.lookup(table: "todo", id: "a") == ["id": "a", "text": nil])
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func deleteByIdsIgnoresMissingIds(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: (1...5).map { ["id": .string("i\($0)"), "n": .int(Int64($0))] })
        try await store.delete(table: "todo", ids: ["i2", "i4", "nope"])
        let ids = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items.map { $0["id"] }
        #expect(ids == ["i1", "i3", "i5"])
        try await store.delete(table: "unknownTable", ids: ["x"])
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func badInputIsATypedErrorAndChangesNothing(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "keep", "text": "t"]])
        let badItems: [[JSONObject]] = [
            [["id": "ok", "text": "x"], ["text": "no id"]],
            [["id": 42, "text": "integer id"]],
            [["id": "a/b", "text": "bad id"]],
        ]
        for items in badItems {
            await #expect(throws: StoreError.self) { try await store.upsert(table: "todo", items: items) }
        }
        for table in ["", "__operations", "bad name", "x;DROP TABLE todo", String(repeating: "t", count: 200)] {
            await #expect(throws: StoreError.self) { try await store.upsert(table: table, items: [["id": "a"]]) }
        }
        let all = try await store.read(QueryDescription(table: "todo")).items
        #expect(all == [["id": "keep", "text": "t"]])
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text])
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aFailedWriteLeavesNoNewColumnBehind(_ kind: StoreKind) async throws {
        struct Abort: Error {}
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        try await store.upsert(table: "todo", items: [["id": "a", "text": "t"]])
        await #expect(throws: Abort.self) {
            try await store.write { writer in
                try writer.upsert(table: "todo", items: [["id": "b", "newColumn": 1]], ignoreMissingColumns: false)
                throw Abort()
            }
        }
        #expect(try await store.read { try $0.columns(of: "todo") } == ["id": .text, "text": .text])
        try await store.upsert(table: "todo", items: [["id": "c", "newColumn": true]])
        #expect(try await store.read { try $0.columns(of: "todo") }?["newColumn"] == .boolean)
        await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func closedStoreRefusesEveryCall(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind); defer { test.directory.remove() }
        await store.close()
        await #expect(throws: StoreError.self) { try await store.lookup(table: "todo", id: "a") }
        await #expect(throws: StoreError.self) { try await store.upsert(table: "todo", items: [["id": "a"]]) }
    }
}
