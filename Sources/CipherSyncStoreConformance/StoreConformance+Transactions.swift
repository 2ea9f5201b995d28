import CipherSync
import Foundation

/// The checks of `LocalStore`'s transactions and change feed.
extension StoreConformance {
    static let transactionChecks: [Check] = [
        Check(name: "a write that throws changes nothing", body: rollback),
        Check(name: "an item without an id is refused, and nothing of its write is kept", body: refusedItem),
        Check(name: "a write reads its own writes", body: ownWrites),
        Check(name: "writes one after another all commit", body: concurrentWrites),
        Check(name: "the change feed names the table a write changed", body: changeFeed),
    ]

    struct Thrown: Error {}

    static func rollback(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "things", items: [["id": "kept", "n": 1]])
        do {
            try await store.write { writer in
                try writer.upsert(table: "things", items: [["id": "new", "n": 2], ["id": "kept", "n": 3]], ignoreMissingColumns: false)
                try writer.delete(table: "things", ids: ["kept"])
                throw Thrown()
            }
            r.fail("the write's error was not thrown")
        } catch is Thrown {}
        let items = try await store.items("things")
        r.expectEqual(items.keys.sorted(), ["kept"], "the ids after a rolled-back write")
        r.expectEqual(items["kept"]?["n"], 1, "a row a rolled-back write updated")
    }

    static func refusedItem(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        do {
            try await store.upsert(table: "things", items: [["id": "a"], ["text": "no id"]])
            r.fail("an item without an id was stored")
        } catch let error as StoreError {
            r.expect(error == .invalidItem, "the error for an item without an id: expected StoreError.invalidItem, got \(error)")
        }
        r.expect(try await store.items("things").isEmpty, "the item with an id of a refused write was kept")
    }

    static func ownWrites(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let seen = try await store.write { writer in
            try writer.upsert(table: "things", items: [["id": "a", "n": 1]], ignoreMissingColumns: false)
            let afterUpsert = try writer.read(QueryDescription(table: "things")).items.count
            try writer.delete(table: "things", ids: ["a"])
            return (afterUpsert, try writer.read(QueryDescription(table: "things")).items.count)
        }
        r.expectEqual(seen.0, 1, "rows a write reads after its upsert")
        r.expectEqual(seen.1, 0, "rows a write reads after its delete")
    }

    static func concurrentWrites(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        try await store.upsert(table: "counter", items: [["id": "c", "n": 0]])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await store.write { writer in
                        let n = try writer.read(QueryDescription(table: "counter")).items.first?["n"]?.intValue ?? 0
                        try writer.upsert(table: "counter", items: [["id": "c", "n": .int(n + 1)]], ignoreMissingColumns: false)
                    }
                }
            }
            try await group.waitForAll()
        }
        r.expectEqual(try await store.lookup(table: "counter", id: "c")?["n"], 20, "a counter after 20 concurrent read-and-increment writes")
    }

    static func changeFeed(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        guard let changes = store.changes else { return }  // The engine records its own changes.
        let (signals, registration) = changes.register([.table(named: "things")])
        defer { registration.cancel() }
        try await store.upsert(table: "other", items: [["id": "x"]])
        try await store.upsert(table: "Things", items: [["id": "a"]])
        // Published once the write returned: the signal is waiting, or never comes.
        let signalled = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in signals { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        r.expect(signalled, "no signal for the table a committed write changed, within 10 s")
    }
}
