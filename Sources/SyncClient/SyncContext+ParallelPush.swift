import SyncStore
import SyncWire

extension SyncContext {
    /// The most operations a push may have in flight at once (``setPushParallelism(_:)``).
    public static let maximumPushParallelism = 16

    /// Sets how many operations of *different* items later pushes may have in flight at once,
    /// each in its own request (the protocol's one request per operation, sent side by side).
    ///
    /// `1`, the default, sends the queue strictly one operation at a time. With more, a push sends
    /// up to `operations` consecutive queued operations together, each of another item, waits
    /// for all of their answers, records them in queue order, and goes on with the next ones; an
    /// item's operations therefore still reach the server in the order they were queued. What a
    /// push records, its collapse and in-flight rules and its crash safety are unchanged. The
    /// server may apply operations sent together in any order, so use it where operations of
    /// different items do not depend on each other's order. A ``SyncConflictHandler`` is called
    /// for several operations at once. A batch (``setPushBatching(_:)``) is still sent alone:
    /// parallelism applies to the operations that go one request each.
    ///
    /// - Parameter operations: from 1 to ``maximumPushParallelism``.
    /// - Throws: ``SyncError/invalidSetting`` for any other value; the setting is then unchanged.
    public func setPushParallelism(_ operations: Int) throws(SyncError) {
        guard (1...Self.maximumPushParallelism).contains(operations) else {
            throw SyncError(
                .invalidSetting, reason: "Push parallelism must be from 1 to \(Self.maximumPushParallelism) operations, not \(operations).")
        }
        pushParallelism = operations
    }

    /// Takes from `claimed` (the next operation last) up to `most - 1` operations that follow
    /// `first` in the queue, each of an item that none before it in the group has.
    static func parallelGroup(after first: ClaimedOperation, from claimed: inout [ClaimedOperation], most: Int) -> [ClaimedOperation] {
        var group = [first]
        var items: Set<ItemKey> = [ItemKey(first.record)]
        while group.count < most, let following = claimed.last, items.insert(ItemKey(following.record)).inserted {
            group.append(following)
            claimed.removeLast()
        }
        return group
    }

    /// Sends each operation of `group` in a request of its own, all at once.
    /// - Returns: their outcomes, in the group's order.
    func pushEach(_ group: [ClaimedOperation], run: RunHandle) async -> [Outcome] {
        let connection = self.connection
        return await withTaskGroup(of: (Int, Outcome).self) { tasks in
            for (index, operation) in group.enumerated() {
                tasks.addTask { (index, await self.pushOne(operation, connection: connection, run: run)) }
            }
            var outcomes = [Outcome?](repeating: nil, count: group.count)
            for await (index, outcome) in tasks { outcomes[index] = outcome }
            return outcomes.map { $0 ?? .abort(SyncError(.pushCancelled, reason: "The push was cancelled.")) }
        }
    }
}

/// An item of a table, as the store identifies it (table names and ids compare without ASCII case).
private struct ItemKey: Hashable {
    let table: String
    let id: String

    init(_ record: TableOperationRecord) {
        table = ASCIICase.fold(record.table)
        id = ItemID.key(record.itemId)
    }
}
