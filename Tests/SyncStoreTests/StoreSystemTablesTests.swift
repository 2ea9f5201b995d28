import Foundation
import SyncStore
import SyncTestSupport
import SyncWire
import Testing

@Suite struct StoreSystemTablesTests {
    @Test(arguments: StoreKind.allCases)
    func operationsKeepQueueOrderAcrossTables(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let added = try await store.write { w in
            [
                try w.addOperation(kind: .insert, table: "a", itemId: "1", item: nil),
                try w.addOperation(kind: .update, table: "b", itemId: "2", item: nil),
                try w.addOperation(kind: .delete, table: "a", itemId: "3", item: ["id": "3", "version": "v1"]),
            ]
        }
        #expect(added.map(\.id) == added.map(\.id).sorted())
        let all = try await store.read { try $0.operations(table: nil) }
        #expect(all.map(\.itemId) == ["1", "2", "3"])
        #expect(all[2].item == ["id": "3", "version": "v1"])
        #expect(try await store.read { try $0.operations(table: "a") }.map(\.itemId) == ["1", "3"])
        #expect(try await store.read { try $0.operationCount(table: nil) } == 3)
        #expect(try await store.read { try $0.operationCount(table: "b") } == 1)
        #expect(try await store.read { try $0.operation(after: added[0].id) }?.itemId == "2")
        #expect(try await store.read { try $0.operation(table: "a", itemId: "3") }?.kind == .delete)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func updatingAndDeletingAnOperationAlsoRemovesItsErrors(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        var op = try await store.write { try $0.addOperation(kind: .update, table: "t", itemId: "x", item: nil) }
        op.kind = .delete
        op.version += 1
        op.item = ["id": "x"]
        let changed = op
        try await store.write { w in
            try w.updateOperation(changed)
            try w.addOperationError(
                OperationErrorRecord(
                    operationId: changed.id, operationVersion: changed.version, kind: .delete, table: "t", itemId: "x",
                    statusCode: 412, message: "conflict", item: ["id": "x"], serverItem: ["id": "x", "text": "server"],
                    rawResponse: "{}"))
        }
        let stored = try #require(try await store.read { try $0.operation(id: changed.id) })
        #expect(stored.kind == .delete && stored.version == 2 && stored.item == ["id": "x"])
        let errors = try await store.read { try $0.operationErrors() }
        #expect(errors.count == 1 && errors[0].serverItem?["text"] == "server" && errors[0].statusCode == 412)
        try await store.write { try $0.deleteOperation(id: changed.id) }
        #expect(try await store.read { try $0.operationErrors() }.isEmpty)
        #expect(try await store.read { try $0.operationCount(table: nil) } == 0)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func configValuesCanBeSetReplacedAndRemovedByPrefix(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        try await store.write { w in
            try w.setConfigValue("1970", forKey: "deltaToken|todo|all")
            try w.setConfigValue("2001", forKey: "deltaToken|todo|all")
            try w.setConfigValue("2002", forKey: "deltaToken|todo|mine")
            try w.setConfigValue("keep", forKey: "deltaToken|other|all")
        }
        #expect(try await store.read { try $0.configValue(forKey: "deltaToken|todo|all") } == "2001")
        try await store.write { try $0.deleteConfigValues(withPrefix: "deltaToken|todo|") }
        #expect(try await store.read { try $0.configValue(forKey: "deltaToken|todo|mine") } == nil)
        #expect(try await store.read { try $0.configValue(forKey: "deltaToken|other|all") } == "keep")
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func aRowAndItsQueueEntryCommitTogetherOrNotAtAll(_ kind: StoreKind) async throws {
        struct Abort: Error {}
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        await #expect(throws: Abort.self) {
            try await store.write { w in
                try w.upsert(table: "todo", items: [["id": "a", "text": "t"]], ignoreMissingColumns: false)
                _ = try w.addOperation(kind: .insert, table: "todo", itemId: "a", item: nil)
                throw Abort()
            }
        }
        #expect(try await store.lookup(table: "todo", id: "a") == nil)
        #expect(try await store.read { try $0.operationCount(table: nil) } == 0)
        try await store.close()
    }

    @Test(arguments: StoreKind.allCases)
    func everythingSurvivesAReopenAndTheSequenceContinues(_ kind: StoreKind) async throws {
        let (test, store) = try await TestStore.make(kind)
        defer { test.directory.remove() }
        let first = try await store.write { w in
            try w.upsert(table: "todo", items: [["id": "a", "text": "t"]], ignoreMissingColumns: false)
            try w.setConfigValue("token", forKey: "deltaToken|todo|q")
            return try w.addOperation(kind: .insert, table: "todo", itemId: "a", item: nil)
        }
        try await store.close()

        let reopened = try await test.open()
        #expect(try await reopened.lookup(table: "todo", id: "a") == ["id": "a", "text": "t"])
        #expect(try await reopened.read { try $0.configValue(forKey: "deltaToken|todo|q") } == "token")
        let second = try await reopened.write { try $0.addOperation(kind: .insert, table: "todo", itemId: "b", item: nil) }
        #expect(second.id > first.id)
        #expect(try await reopened.read { try $0.operations(table: nil) }.map(\.itemId) == ["a", "b"])
        try await reopened.close()
    }
}
