import CipherSync
import Foundation

/// The checks of the sync engine's records (queue, errors, delta tokens), which the engine keeps
/// through the store contract: offline writes through a ``SyncContext``, no server needed.
extension StoreConformance {
    static let engineChecks: [Check] = [
        Check(name: "offline writes queue operations in the store", body: offlineQueue),
        Check(name: "queue ids are never given twice", body: queueIds),
        Check(name: "the queue survives a new context over the store", body: queueSurvives),
        Check(name: "a purge removes a table's rows and its queue", body: purge),
    ]

    /// A context over `store` for a backend it never reaches (the checks make no requests).
    static func context(_ store: any LocalStore) -> SyncContext {
        SyncContext(client: MobileServiceClient(url: URL(fileURLWithPath: "/")), store: store)
    }

    static func offlineQueue(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let context = context(store)
        let todo = try context.syncTable("todo")
        let a = try await todo.insert(["id": "a", "text": "one"])
        _ = try await todo.insert(["id": "b", "text": "two"])
        var changed = a
        changed["text"] = "one, changed"
        try await todo.update(changed)
        try await todo.delete(id: "b")
        let operations = try await context.pendingOperations()
        r.expectEqual(operations.map(\.itemId), ["a"], "the queued items (an update folds into its insert, a delete cancels an insert)")
        r.expectEqual(operations.map(\.kind), [.insert], "the queued kinds")
        r.expectEqual(try await context.pendingOperationsCount, 1, "the pending count")
        r.expectEqual(try await todo.lookup(id: "A")?["text"], "one, changed", "the row of an offline update, by its id in other letters")
        r.expect(try await todo.lookup(id: "b") == nil, "the row of an offline delete")
        r.expect(try await context.operationErrors().isEmpty, "operation errors before any push")
        r.expectEqual(try await context.pendingOperations(table: "elsewhere").count, 0, "operations of another table")
    }

    static func queueIds(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let context = context(store)
        let todo = try context.syncTable("todo")
        _ = try await todo.insert(["id": "a"])
        _ = try await todo.insert(["id": "b"])
        let before = try await context.pendingOperations().map(\.id)
        try await todo.delete(id: "b")  // cancels the newest operation
        _ = try await todo.insert(["id": "c"])
        let after = try await context.pendingOperations().map(\.id)
        r.expectEqual(after.count, 2, "operations queued")
        r.expect(after == after.sorted() && Set(after).count == after.count, "queue ids out of order: \(after)")
        r.expect(after.last.map { $0 > (before.max() ?? 0) } ?? false, "a new operation took a queue id given before: \(before) then \(after)")
    }

    static func queueSurvives(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let first = try context(store).syncTable("todo")
        _ = try await first.insert(["id": "a", "text": "x"])
        let second = context(store)
        r.expectEqual(try await second.pendingOperations().map(\.itemId), ["a"], "the queue a new context sees")
        try await second.syncTable("todo").update(["id": "a", "text": "y"])
        r.expectEqual(try await second.pendingOperations().map(\.kind), [.insert], "the queue after an update through the new context")
    }

    static func purge(_ store: any LocalStore, _ r: FailureRecorder) async throws {
        let context = context(store)
        let todo = try context.syncTable("todo")
        let other = try context.syncTable("other")
        _ = try await todo.insert(["id": "a"])
        _ = try await other.insert(["id": "b"])
        try await todo.purge(force: true)
        r.expect(try await todo.read().items.isEmpty, "rows of a purged table")
        r.expectEqual(try await context.pendingOperations().map(\.table), ["other"], "the queue after a purge of todo")
        r.expectEqual(try await other.read().items.count, 1, "rows of another table after a purge")
    }
}
