extension SyncContext {
    /// The most operations a push may have in flight at once (``setPushParallelism(_:)``).
    public static let maximumPushParallelism = 16

    /// Sets how many operations of *different* items later pushes may have in flight at once,
    /// each in its own request (the protocol's one request per operation, sent side by side).
    ///
    /// `1`, the default, sends the queue strictly one operation at a time. With more, a push keeps
    /// up to `operations` requests in flight: it sends the queue's operations in order, the next
    /// one as soon as one in flight is answered, except that an operation waits while an earlier
    /// operation of its item is in flight; an item's operations therefore reach the server in the
    /// order they were queued. The answers are recorded in queue order. What a push records, its
    /// collapse and in-flight rules and its crash safety are unchanged; an answer that stops the
    /// push (no network, a 401, a cancellation) stops further sends at once, and the answers to
    /// the requests already in flight are still recorded. The server may apply operations in
    /// flight together in any order, so use it where operations of different items do not depend
    /// on each other's order. A ``SyncConflictHandler`` is called for several operations at once.
    /// A batch (``setPushBatching(_:)``) is still sent alone: parallelism applies to the
    /// operations that go one request each.
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
}
