import SyncSQL
import Synchronization

/// How the server's change streams look for changes (see `ChangesController`).
public struct ChangeStreamSettings: Sendable, Hashable {
    /// How often a stream checks its tables' newest `updatedAt` in the storage, which is how it
    /// learns of writes made through other server instances over the same database. Writes
    /// through this instance wake its streams at once.
    public var pollInterval: Duration
    /// How long a stream may stay silent before it sends a keep-alive comment (so proxies keep
    /// the connection open).
    public var keepAliveInterval: Duration

    /// Settings.
    ///
    /// - Parameters:
    ///   - pollInterval: How often a stream checks the storage (default 250 ms).
    ///   - keepAliveInterval: The longest silence before a keep-alive comment (default 15 s).
    public init(pollInterval: Duration = .milliseconds(250), keepAliveInterval: Duration = .seconds(15)) {
        self.pollInterval = pollInterval
        self.keepAliveInterval = keepAliveInterval
    }
}

/// Where the writes this instance serves wake the change streams it serves, by table (named as
/// the storage matches it). A wake only makes a stream look at its tables in its own scope: a
/// per-user stream woken by another user's write finds nothing new of its user and sends nothing.
final class ChangeHub: Sendable {
    private struct Listener {
        let keys: Set<ColumnKey>
        let signal: AsyncStream<Void>.Continuation
    }

    private struct State {
        var next: UInt64 = 0
        var listeners: [UInt64: Listener] = [:]
    }

    private let state = Mutex(State())

    /// The number of streams listening now.
    var listenerCount: Int { state.withLock { $0.listeners.count } }

    /// Wakes every stream listening to `key`.
    func touch(_ key: ColumnKey) {
        state.withLock { state in
            for listener in state.listeners.values where listener.keys.contains(key) { listener.signal.yield() }
        }
    }

    /// Registers a stream: it is signalled on each write to one of `keys` (signals coalesce while
    /// it is busy). `remove` ends the listening.
    func listen(_ keys: Set<ColumnKey>, signal: AsyncStream<Void>.Continuation) -> UInt64 {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.listeners[id] = Listener(keys: keys, signal: signal)
            return id
        }
    }

    /// Removes a stream's registration.
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.listeners.removeValue(forKey: id) }
    }
}
