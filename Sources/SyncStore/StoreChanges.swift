public import SyncSQL
import Synchronization

/// A part of a local store whose content a committed transaction changed: one user table, the
/// operation queue, the operation errors, or the config values (delta tokens).
public enum StoreChangeTopic: Sendable, Hashable {
    /// The rows of a user table, named as SQLite matches it (`todoitem` is `TodoItem`).
    case table(ColumnKey)
    /// The pending-operation queue.
    case operations
    /// The stored operation errors.
    case operationErrors
    /// The config values (delta tokens and settings).
    case config

    /// The topic of the user table `name`.
    /// - Parameter name: the table name, in any ASCII case.
    /// - Returns: the table's topic.
    public static func table(named name: String) -> StoreChangeTopic {
        .table(ColumnKey(name))
    }
}

/// The change feed of a local store: after every committed write transaction, the store
/// publishes the topics it changed, and every observer interested in one of them is signalled.
///
/// Signals coalesce: an observer that is busy when several transactions commit is signalled
/// once, and then reads the state after the last of them. Nothing is kept but one pending
/// signal per observer; nothing touches disk. A rolled-back transaction publishes nothing.
///
/// A ``LocalStore`` that can tell what its transactions changed offers one through
/// ``LocalStore/changes``; ``SQLiteStore`` does, for the plain and the encrypted store alike.
public final class StoreChanges: Sendable {
    private struct Observer {
        let topics: Set<StoreChangeTopic>
        let signal: AsyncStream<Void>.Continuation
    }

    private struct State {
        var nextKey: UInt64 = 0
        var observers: [UInt64: Observer] = [:]
    }

    private let state = Mutex(State())

    /// An empty feed with no observers.
    public init() {}

    /// The number of observers registered now (an ended observation leaves none behind).
    package var observerCount: Int {
        state.withLock { $0.observers.count }
    }

    /// Signals every observer interested in one of `topics`. Call it after the transaction that
    /// made the changes has committed, never before.
    /// - Parameter topics: what the transaction changed; an empty set signals nobody.
    public func publish(_ topics: Set<StoreChangeTopic>) {
        guard !topics.isEmpty else { return }
        state.withLock { state in
            for observer in state.observers.values where !observer.topics.isDisjoint(with: topics) {
                observer.signal.yield()
            }
        }
    }

    /// Registers an observer of `topics`.
    /// - Parameter topics: the topics that wake it.
    /// - Returns: the observer's signals (each one after a commit that changed one of `topics`;
    ///   at most one waits while the observer is busy), and the registration, which removes the
    ///   observer when it is cancelled or released.
    public func register(_ topics: Set<StoreChangeTopic>) -> (signals: AsyncStream<Void>, registration: StoreChangeRegistration) {
        let (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = state.withLock { state in
            let key = state.nextKey
            state.nextKey += 1
            state.observers[key] = Observer(topics: topics, signal: continuation)
            return key
        }
        let registration = StoreChangeRegistration(feed: self, key: key)
        continuation.onTermination = { [weak registration] _ in registration?.cancel() }
        return (signals, registration)
    }

    fileprivate func remove(_ key: UInt64) {
        let removed = state.withLock { $0.observers.removeValue(forKey: key) }
        removed?.signal.finish()
    }
}

/// One observer's place in a ``StoreChanges`` feed: cancelling or releasing it removes the
/// observer and ends its signals.
public final class StoreChangeRegistration: Sendable {
    private let feed: StoreChanges
    private let key: UInt64

    fileprivate init(feed: StoreChanges, key: UInt64) {
        self.feed = feed
        self.key = key
    }

    /// Removes the observer from its feed (again is harmless).
    public func cancel() {
        feed.remove(key)
    }

    deinit {
        feed.remove(key)
    }
}
