import SyncSQL
import Synchronization

/// A committed change of a storage's rows, as the storage announces it to the change streams of
/// the server instances over it (see ``ChangeFeed``).
public enum TableChange: Sendable, Hashable {
    /// Rows of `table` were written (inserted, updated, deleted softly or undeleted) in `scope`,
    /// or in scopes not said (`nil`). Every such write stamped a new `updatedAt`.
    case written(table: String, scope: RowScope?)
    /// A row of `table` was removed (a hard delete) in `scope`, or in a scope not said (`nil`).
    case removed(table: String, scope: RowScope?)
    /// Any table may have changed in any scope: the storage could not hear every announcement
    /// for a while (its `LISTEN` connection was re-established).
    case anything
}

/// Where a storage announces the changes it committed — its own writes at once, and the writes of
/// other server instances over the same database when the engine hears them (PostgreSQL's
/// `LISTEN`/`NOTIFY`) — to the change streams of its server (`ChangesController`).
///
/// A class whose subscribers sit behind a `Mutex`; safe to share. A subscriber is called on the
/// announcing task and must return at once (it only records the change and wakes a task).
public final class ChangeFeed: Sendable {
    private struct State {
        var next: UInt64 = 0
        var subscribers: [UInt64: @Sendable (TableChange) -> Void] = [:]
    }

    private let state = Mutex(State())

    /// A feed without subscribers.
    public init() {}

    /// Announces `change` to every subscriber.
    ///
    /// - Parameter change: What changed; announced after it was committed.
    public func publish(_ change: TableChange) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber(change) }
    }

    /// Calls `subscriber` with every change announced from now on, until ``unsubscribe(_:)``.
    ///
    /// - Parameter subscriber: Records a change; returns at once.
    /// - Returns: The subscription, for ``unsubscribe(_:)``.
    public func subscribe(_ subscriber: @escaping @Sendable (TableChange) -> Void) -> UInt64 {
        state.withLock { state in
            defer { state.next += 1 }
            state.subscribers[state.next] = subscriber
            return state.next
        }
    }

    /// Ends a subscription.
    ///
    /// - Parameter subscription: What ``subscribe(_:)`` returned.
    public func unsubscribe(_ subscription: UInt64) {
        _ = state.withLock { $0.subscribers.removeValue(forKey: subscription) }
    }
}

/// The number of statements a storage sent to its engine since it opened: the seam through which
/// tests and `sync-bench` see what a workload (idle change streams, say) costs the database.
///
/// A class around an atomic counter; safe to share.
package final class StatementCounter: Sendable {
    private let counted = Atomic<Int>(0)

    /// A counter at 0.
    package init() {}

    /// The statements counted so far.
    package var count: Int { counted.load(ordering: .relaxed) }

    /// Counts one statement.
    func add() { counted.add(1, ordering: .relaxed) }
}
