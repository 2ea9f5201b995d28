#if os(Linux)
import NIOCore
import Synchronization

/// The idle kept-alive connections of a ``NIOHTTPClient``, by scheme, host and port.
///
/// A connection is here only between two whole requests: taken, it belongs to its request until
/// the response was read to its end; a connection that met anything else (an error, a timeout,
/// a cancellation, a response cut short or not read to its end, a `Connection: close`) is closed
/// instead. At most `maximumIdle` connections are kept per key, each for at most `idleTimeout`;
/// one the server closes while idle leaves the pool. When the pool goes away (with the last copy
/// of its transport), its idle connections are closed.
final class HTTPConnectionPool: Sendable {
    /// Where the connections of a key lead: requests of one key may share connections.
    struct Key: Hashable, Sendable {
        var secure: Bool
        var host: String
        var port: Int
    }

    private struct Entry: Sendable {
        let connection: IdleConnection
        let expiry: Scheduled<Void>
        let serial: UInt64
    }

    let maximumIdle: Int
    let idleTimeout: TimeAmount
    private let idle = Mutex<[Key: [Entry]]>([:])
    private let serials = Atomic<UInt64>(0)

    /// Creates an empty pool.
    /// - Parameters:
    ///   - maximumIdle: how many idle connections are kept per key.
    ///   - idleTimeout: how long an idle connection is kept.
    init(maximumIdle: Int, idleTimeout: TimeAmount) {
        self.maximumIdle = maximumIdle
        self.idleTimeout = idleTimeout
    }

    deinit {
        for entries in idle.withLock({ $0.values }) {
            for entry in entries {
                entry.expiry.cancel()
                entry.connection.channel.close(promise: nil)
            }
        }
    }

    /// How many idle connections the pool holds.
    var count: Int {
        idle.withLock { $0.values.reduce(0) { $0 + $1.count } }
    }

    /// Takes the idle connection of `key` last put back that is still open, if any; one on the
    /// calling thread's event loop first, so that a caller running on a loop sends there.
    func take(_ key: Key) -> IdleConnection? {
        idle.withLock { idle in
            while let index = Self.next(in: idle[key] ?? []), let entry = idle[key]?.remove(at: index) {
                entry.expiry.cancel()
                // One the server closed and whose end is on its way: its handler finds it gone.
                if entry.connection.channel.isActive { return entry.connection }
            }
            return nil
        }
    }

    /// The event loop of an idle connection of `key` (the one ``take(_:)`` takes from a thread
    /// of no loop), if any.
    func loop(_ key: Key) -> (any EventLoop)? {
        idle.withLock { $0[key]?.last?.connection.channel.eventLoop }
    }

    /// The index of the entry to take next: the last one on the calling thread's loop, or the
    /// last one.
    private static func next(in entries: [Entry]) -> Int? {
        entries.lastIndex { $0.connection.channel.eventLoop.inEventLoop } ?? entries.indices.last
    }

    /// Keeps `connection` idle for the next request of `key`.
    /// - Returns: false when the pool holds as many as it keeps: the caller closes the
    ///   connection.
    func release(_ connection: IdleConnection, key: Key) -> Bool {
        let serial = serials.add(1, ordering: .relaxed).newValue
        let expiry = connection.channel.eventLoop.scheduleTask(in: idleTimeout) { [weak self] () -> Void in
            self?.expire(key, serial)
        }
        let kept = idle.withLock { idle in
            guard idle[key, default: []].count < maximumIdle else { return false }
            idle[key, default: []].append(Entry(connection: connection, expiry: expiry, serial: serial))
            return true
        }
        if !kept { expiry.cancel() }
        return kept
    }

    /// Forgets `channel`, closed while idle.
    func remove(_ channel: any Channel, key: Key) {
        let entry = idle.withLock { idle in
            idle[key]?.firstIndex { $0.connection.channel === channel }.flatMap { idle[key]?.remove(at: $0) }
        }
        entry?.expiry.cancel()
    }

    /// Takes every idle connection, to close them.
    func takeAll() -> [any Channel] {
        let entries = idle.withLock { idle in
            defer { idle = [:] }
            return idle.values.flatMap { $0 }
        }
        for entry in entries { entry.expiry.cancel() }
        return entries.map(\.connection.channel)
    }

    /// Closes the idle connection put back as `serial`, if it is still idle.
    private func expire(_ key: Key, _ serial: UInt64) {
        let entry = idle.withLock { idle in
            idle[key]?.firstIndex { $0.serial == serial }.flatMap { idle[key]?.remove(at: $0) }
        }
        entry?.connection.channel.close(promise: nil)
    }
}

/// A connection between two requests: its channel and its handler, which only its event loop
/// touches.
struct IdleConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<HTTPConnectionHandler>

    /// Sends `exchange`'s request over this connection.
    /// - Parameters:
    ///   - exchange: the exchange, started.
    ///   - target: its request.
    ///   - pool: where the connection goes back once the response was read to its end.
    func begin(_ exchange: HTTPExchange, target: RequestTarget, pool: HTTPConnectionPool?) {
        guard exchange.attach(channel) else {
            // Cancelled before anything was sent: the connection is as it was.
            if pool?.release(self, key: target.key) != true { channel.close(promise: nil) }
            exchange.connectFailed(CancellationError())
            return
        }
        // Written at once when the caller runs on the connection's loop (a push preferring it):
        // a job queued behind the caller's next ones would keep the server waiting for them.
        guard !channel.eventLoop.inEventLoop else {
            handler.value.begin(exchange, target: target, pool: pool)
            return
        }
        let handler = handler
        channel.eventLoop.execute { handler.value.begin(exchange, target: target, pool: pool) }
    }
}
#endif
