import Foundation
import SyncSQL
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// One upsert of many items (a pulled page): new and existing rows, items naming different
/// columns, the same item twice.
@Suite struct StoreBatchWriteTests {
    @Test(arguments: StoreKind.allCases)
    func aBatchMixingNewAndExistingRowsKeepsWhatEachItemLacks(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.upsert(
            table: "todo",
            items: [
                ["id": "old1", "text": "one", "complete": false, "note": "kept"],
                ["id": "old2", "text": "two", "complete": true],
            ])
        try await store.upsert(
            table: "todo",
            items: [
                ["id": "new1", "text": "n1"],
                ["id": "old1", "complete": true],
                ["id": "new2", "Complete": false, "priority": 3],
                ["id": "old2"],
                ["id": "new3"],
                ["id": "old2", "TEXT": "two again"],
                ["id": "new1", "note": nil],
            ])
        let rows = try await store.read(QueryDescription(table: "todo", orderBy: [OrderBy("id")])).items
        #expect(
            rows == [
                ["id": "new1", "text": "n1", "complete": nil, "note": nil, "priority": nil],
                ["id": "new2", "text": nil, "complete": false, "note": nil, "priority": 3],
                ["id": "new3", "text": nil, "complete": nil, "note": nil, "priority": nil],
                ["id": "old1", "text": "one", "complete": true, "note": "kept", "priority": nil],
                ["id": "old2", "text": "two again", "complete": true, "note": nil, "priority": nil],
            ])
        #expect(
            try await store.read { try $0.columns(of: "todo") } == [
                "id": .text, "text": .text, "complete": .boolean, "note": .text, "priority": .integer,
            ])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aLargeBatchWritesEveryRowOnce(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let first: [JSONObject] = (0..<1_500).map { ["id": .string("i\($0)"), "n": .int(Int64($0)), "text": .string("t\($0)")] }
        try await store.upsert(table: "items", items: first)
        // Every other row again, with a new value for one column only.
        let second: [JSONObject] = stride(from: 0, to: 3_000, by: 2).map { (n: Int) -> JSONObject in
            ["id": .string("i\(n)"), "n": .int(-Int64(n))]
        }
        try await store.upsert(table: "items", items: second)
        let rows = try await store.read(QueryDescription(table: "items")).items
        #expect(rows.count == 2_250)
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0["id"]?.stringValue ?? "", $0) })
        #expect(byID["i2"] == ["id": "i2", "n": -2, "text": "t2"])
        #expect(byID["i3"] == ["id": "i3", "n": 3, "text": "t3"])
        #expect(byID["i2998"] == ["id": "i2998", "n": -2998, "text": nil])
        try await store.close()
    }
}
