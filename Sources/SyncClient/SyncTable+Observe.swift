import SyncStore
public import SyncWire

extension SyncTable {
    /// Observes a query of the local table: the current result at once, then a new result after
    /// every committed transaction that changed the table — a local insert, update or delete, a
    /// pulled page, a purge, a conflict resolution — and only then. A transaction on another
    /// table does not wake it.
    ///
    /// Each result is read after the commit that woke it, in a read transaction of its own, so
    /// it is a state the table really had (a pulled page is all there or not at all). Changes
    /// that land while the consumer is busy coalesce into one result; a result equal to the one
    /// before is skipped. Cancelling the consuming task (or leaving the loop) ends the
    /// observation and removes its observer.
    ///
    /// ```swift
    /// for try await result in todo.observe(Query().where(Field("complete") == false)) {
    ///     show(result.items)
    /// }
    /// ```
    ///
    /// - Parameter query: what to read, as for ``read(_:)``.
    /// - Returns: the results; iteration throws ``SyncError/invalidQuery`` or
    ///   ``SyncError/localStoreFailed`` when a read fails, which ends it.
    public func observe(_ query: Query = Query()) -> some AsyncSequence<QueryResult, any Error> {
        let description = query.description(table: name)
        let context = self.context
        return StoreObservation(
            changes: context.changeFeed, topics: [.table(named: name)],
            removingDuplicates: {
                try await context.read { try $0.read(description) }
            })
    }
}

extension TypedTable where Base == SyncTable {
    /// Observes a query of the local table as models; see ``SyncTable/observe(_:)``.
    /// - Parameter query: what to read.
    /// - Returns: the models of each result; iteration throws ``SyncError/invalidItem`` for an
    ///   item that does not decode, and the table's errors.
    public func observe(_ query: Query = Query()) -> some AsyncSequence<[Model], any Error> {
        table.observe(query).map { result in try result.items.map { try ModelCoding.model($0) } }
    }
}

extension SyncContext {
    /// Observes the number of operations waiting to be pushed (a badge): the count now, then
    /// the count after every committed transaction that changed the queue, when it differs.
    /// - Returns: the counts; iteration throws ``SyncError/localStoreFailed`` when a read fails.
    public nonisolated func observePendingOperationsCount() -> some AsyncSequence<Int, any Error> {
        StoreObservation(
            changes: changeFeed, topics: [.operations],
            removingDuplicates: { [self] in
                try await read { try $0.operationCount(table: nil) }
            })
    }

    /// Observes the stored operation errors (a "needs attention" list): the errors now, then
    /// the errors after every committed transaction that changed them, when they differ.
    /// - Returns: the errors, oldest first; iteration throws ``SyncError/localStoreFailed``
    ///   when a read fails.
    public nonisolated func observeOperationErrors() -> some AsyncSequence<[TableOperationError], any Error> {
        StoreObservation(
            changes: changeFeed, topics: [.operationErrors],
            removingDuplicates: { [self] in
                try await read { try $0.operationErrors() }
            }
        )
        .map { [self] records in records.map { TableOperationError($0, context: self) } }
    }
}
