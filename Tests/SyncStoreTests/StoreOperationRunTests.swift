import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

/// The queue's calls for whole runs of operations (a push claims and records with them): each
/// gives what the one-at-a-time calls give, in queue order, in one or a few statements.
@Suite struct StoreOperationRunTests {
    /// More operations than one statement names (500), so that the calls work in slices.
    static let many = 1_203

    @Test(arguments: StoreKind.allCases)
    func aRunOfTheQueueReadsAsTheOperationsOneByOne(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let added = try await store.write { w in
            try (0..<Self.many).map { try w.addOperation(kind: $0 % 3 == 2 ? .delete : .insert, table: "t\($0 % 2)", itemId: "i\($0)", item: nil) }
        }
        let run = try await store.read { try $0.operations(after: added[9].id, limit: 700) }
        #expect(run.map(\.id) == added[10..<710].map(\.id))
        #expect(run.map(\.table) == added[10..<710].map(\.table) && run.map(\.kind) == added[10..<710].map(\.kind))
        #expect(try await store.read { try $0.operations(after: added[Self.many - 3].id, limit: 10) }.map(\.itemId) == ["i1201", "i1202"])
        #expect(try await store.read { try $0.operations(after: 0, limit: 0) }.isEmpty)
        // by ids: those that exist, in queue order, whatever the order asked for
        let asked = added.map(\.id).reversed() + [added[Self.many - 1].id + 50]
        #expect(try await store.read { try $0.operations(ids: Array(asked)) }.map(\.id) == added.map(\.id))
        #expect(try await store.read { try $0.operations(ids: []) }.isEmpty)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func markingAndRemovingARunTouchesItsOperationsAndTheirErrorsOnly(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let added = try await store.write { w in
            try (0..<Self.many).map { try w.addOperation(kind: .update, table: "t", itemId: "i\($0)", item: nil) }
        }
        let ids = added.map(\.id)
        try await store.write { w in
            for id in [ids[0], ids[600], ids[601]] {
                try w.addOperationError(
                    OperationErrorRecord(
                        operationId: id, operationVersion: 1, kind: .update, table: "t", itemId: "x", statusCode: 400,
                        message: "refused", item: ["id": "x"], serverItem: nil, rawResponse: nil))
            }
        }
        try await store.write { try $0.setState(.attempted, ofOperations: Array(ids[0..<1_100]) + [ids[0] - 1]) }
        let states = try await store.read { try $0.operations(table: nil) }.map(\.state)
        #expect(states == Array(repeating: .attempted, count: 1_100) + Array(repeating: .pending, count: Self.many - 1_100))
        try await store.write { try $0.deleteOperations(ids: Array(ids[0..<601])) }
        let left = try await store.read { try $0.operations(table: nil) }
        #expect(left.map(\.id) == Array(ids[601...]))
        #expect(try await store.read { try $0.operationErrors() }.map(\.operationId) == [ids[601]])
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func itemsAreLookedUpByManyIdsWhateverTheirCase(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let items: [JSONObject] = (0..<Self.many).map { ["id": .string("Item-\($0)"), "n": .int(Int64($0))] }
        try await store.upsert(table: "t", items: items)
        let asked = (0..<Self.many).filter { $0 % 2 == 0 }.map { "item-\($0)" } + ["missing"]
        let found = try await store.read { try $0.lookup(table: "t", ids: asked) }
        let byId = Dictionary(uniqueKeysWithValues: found.map { ($0["id"]?.stringValue ?? "", $0) })
        #expect(found.count == (Self.many + 1) / 2)
        #expect(stride(from: 0, to: Self.many, by: 2).allSatisfy { byId["Item-\($0)"]?["n"] == .int(Int64($0)) })
        let one = try await store.lookup(table: "t", id: "item-8")
        #expect(one != nil && byId["Item-8"] == one)
        #expect(try await store.read { try $0.lookup(table: "nothing", ids: ["a"]) }.isEmpty)
        await #expect(throws: StoreError.self) { try await store.read { try $0.lookup(table: "bad\"name", ids: ["a"]) } }
        try await store.close()
    }
}
