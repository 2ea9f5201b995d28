import Foundation
import NIOCore
import NIOPosix
import SyncSQL
import SyncWire
import Synchronization

/// How the server's change streams behave (see `ChangesController`).
public struct ChangeStreamSettings: Sendable, Hashable {
    /// Ignored: streams no longer look at the storage on a timer. Each table has one watcher per
    /// server instance, woken by the storage's ``ChangeFeed`` (this instance's writes at once,
    /// other instances' through PostgreSQL's `LISTEN`/`NOTIFY`).
    @available(*, deprecated, message: "Change streams no longer poll the storage; the value is ignored.")
    public var pollInterval: Duration {
        get { ignoredPollInterval }
        set { ignoredPollInterval = newValue }
    }
    /// How often a silent stream sends a keep-alive comment (so proxies keep the connection
    /// open): once per interval, the first within one interval of its opening; after an event,
    /// the next keep-alive comes within one and a half intervals. A keep-alive reads nothing from
    /// the storage, and one clock per server instance, on one of its event loops, wakes the
    /// streams for theirs (a sixteenth of them at each of its 16 ticks per interval, at most two
    /// at a time, so their keep-alives spread over it).
    public var keepAliveInterval: Duration
    private var ignoredPollInterval: Duration = .milliseconds(250)

    /// Settings.
    ///
    /// - Parameter keepAliveInterval: How often a silent stream sends a keep-alive comment (default 15 s).
    public init(keepAliveInterval: Duration = .seconds(15)) {
        self.keepAliveInterval = keepAliveInterval
    }

    /// Settings, with a poll interval that is ignored.
    ///
    /// - Parameters:
    ///   - pollInterval: Ignored (streams no longer poll).
    ///   - keepAliveInterval: How often a silent stream sends a keep-alive comment.
    @available(*, deprecated, message: "Change streams no longer poll the storage; use init(keepAliveInterval:).")
    public init(pollInterval: Duration, keepAliveInterval: Duration = .seconds(15)) {
        self.keepAliveInterval = keepAliveInterval
        ignoredPollInterval = pollInterval
    }

    /// The keep-alive clock's ticks per interval: each tick wakes one slice of the streams, so
    /// streams opened together (a fleet reconnecting after a restart) spread their keep-alives
    /// over the interval instead of sending them in one burst.
    static let keepAliveTicks = 16

    /// The time between two ticks of the keep-alive clock.
    var keepAliveTick: Duration { keepAliveInterval / Self.keepAliveTicks }

    /// Whether a stream's tick (one per interval) sends a keep-alive after `silence`: once the
    /// stream has been silent for half an interval, so that a silent stream speaks at every tick
    /// and never twice within half an interval.
    func keepAliveIsDue(after silence: Duration) -> Bool {
        silence >= keepAliveInterval / 2
    }
}

/// The change streams of one server instance and the one watcher of each (table, scope) they
/// follow: the watcher keeps the scope's state (its newest stamp: its rows' newest `updatedAt`,
/// or the stamp of a hard delete the storage recorded), and only a change the storage announces
/// (``ChangeFeed``) makes it read the storage — past the newest `updatedAt` it knows, in its
/// scope only, through the table's `updatedAt` index. A stream reads the states from here and
/// never queries the storage itself, so idle streams cost the storage nothing.
///
/// A scope's state is read in full (its rows' newest `updatedAt` and its newest hard delete's
/// stamp, two indexed reads; nothing is counted) when its first stream arrives, after a row of
/// it was removed (a hard delete) and after the storage could not hear announcements for a
/// while; every other change is read incrementally.
///
/// The hub also keeps the streams' keep-alive clock: one timer of an event loop for all of them,
/// running while streams are open, that wakes a slice of the streams at each tick (each stream
/// once per interval, a few at a time spread over the tick) to send its keep-alive if it has
/// been silent.
///
/// A class whose state sits behind a `Mutex`; safe to share.
final class ChangeHub: Sendable {
    /// What a stream sees of a (table, scope).
    enum Look: Equatable {
        /// Its state is being read.
        case loading
        /// Its state as last read.
        case ready(ChangePositions.State)
        /// The storage failed to answer: the streams of the scope end (clients reconnect).
        case failed
    }

    private enum Refresh: Comparable {
        case incremental
        case full
    }

    private struct Watch: Hashable {
        let table: ColumnKey
        let scope: RowScope
    }

    private struct Entry {
        var table: String
        var look = Look.loading
        var pending: Refresh? = .full
        var streams: Set<UInt64> = []
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [ColumnKey: [RowScope: Entry]] = [:]
        /// Each stream's signal and what it watches.
        var streams: [UInt64: (signal: AsyncStream<Void>.Continuation, watches: [Watch])] = [:]
        /// The tables whose watcher task runs now.
        var working: Set<ColumnKey> = []
        /// The streams woken at each tick of the keep-alive clock: stream `id` in slice
        /// `id % keepAliveTicks`.
        var slices = Array(repeating: Set<UInt64>(), count: ChangeStreamSettings.keepAliveTicks)
        /// The ticks of the keep-alive clock so far, and whether it runs (while streams are open).
        var ticks: UInt64 = 0
        var clockRuns = false
    }

    private let storage: any TableStorage
    private let settings: ChangeStreamSettings
    /// The event loop the keep-alive clock runs on.
    private let clockLoop: any EventLoop
    private let state = Mutex(State())
    /// The hub's subscription to the storage's feed.
    private let subscription = Mutex<UInt64?>(nil)

    /// A hub over `storage`, woken by its ``ChangeFeed`` (a storage without one is woken by
    /// ``touch(_:)``), its streams' keep-alives timed by `settings` on `clockLoop` (by default
    /// a loop of NIO's shared group, the server's).
    init(storage: any TableStorage, settings: ChangeStreamSettings, clockLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.storage = storage
        self.settings = settings
        self.clockLoop = clockLoop
        let subscribed = storage.changeFeed?.subscribe { [weak self] change in self?.receive(change) }
        subscription.withLock { $0 = subscribed }
    }

    deinit {
        if let subscribed = subscription.withLock({ $0 }) { storage.changeFeed?.unsubscribe(subscribed) }
    }

    /// Whether the storage announces its changes itself (else the write routes call ``touch(_:)``).
    var hasFeed: Bool { storage.changeFeed != nil }

    /// The number of change streams open now.
    var openStreams: Int { state.withLock { $0.streams.count } }

    /// Registers a stream that follows `tables`: `signal` is yielded whenever the state of one of
    /// them may have changed (signals coalesce while the stream is busy), and once per keep-alive
    /// interval; read the states with ``look(_:scope:)``. ``remove(_:)`` ends it.
    func listen(_ tables: [(String, RowScope)], signal: AsyncStream<Void>.Continuation) -> UInt64 {
        let (id, start, startClock) = state.withLock { state -> (UInt64, [ColumnKey], Bool) in
            let id = state.next
            state.next += 1
            var watches: [Watch] = []
            var start: [ColumnKey] = []
            for (table, scope) in tables {
                let watch = Watch(table: ColumnKey(table), scope: scope)
                watches.append(watch)
                var entry = state.entries[watch.table]?[scope] ?? Entry(table: table)
                if entry.look == .failed { (entry.look, entry.pending) = (.loading, .full) }
                entry.streams.insert(id)
                state.entries[watch.table, default: [:]][scope] = entry
                if entry.pending != nil, state.working.insert(watch.table).inserted { start.append(watch.table) }
            }
            state.streams[id] = (signal, watches)
            state.slices[Self.slice(of: id)].insert(id)
            let startClock = !state.clockRuns
            state.clockRuns = true
            return (id, start, startClock)
        }
        for table in start { startWatcher(table) }
        if startClock { startKeepAliveClock() }
        return id
    }

    /// The slice of the keep-alive clock of a stream, or the one a tick wakes.
    private static func slice(of number: UInt64) -> Int {
        Int(number % UInt64(ChangeStreamSettings.keepAliveTicks))
    }

    /// The keep-alive clock: ticks ``ChangeStreamSettings/keepAliveTicks`` times per interval
    /// until a tick finds no stream open (the next stream starts it again). A tick wakes its
    /// slice a few streams at a time, spread over the tick (``wakes(of:over:)``).
    ///
    /// It runs on one event loop of the server's, timed by the loop's own timer (NIO's scheduled
    /// tasks): a wake-up wakes that loop only, where a task sleeping on the cooperative pool would
    /// take a timer thread and a thread of the pool, which the requests' handlers and the SQLite
    /// storage run on, for every two keep-alives.
    private func startKeepAliveClock() {
        scheduleTick(at: clockLoop.now + TimeAmount(settings.keepAliveTick))
    }

    /// Schedules the keep-alive clock's next tick, at `start`, on the clock's loop.
    private func scheduleTick(at start: NIODeadline) {
        let (loop, tick) = (clockLoop, settings.keepAliveTick)
        loop.scheduleTask(deadline: start) { [weak self] in
            guard let self, let woken = keepAliveTick() else { return }
            for wake in Self.wakes(of: woken.count, over: tick) {
                let streams = woken[wake.streams]
                loop.scheduleTask(deadline: start + TimeAmount(wake.after)) { for stream in streams { stream.signal.yield() } }
            }
            // After a stall, the clock goes on from now rather than catching up in a burst.
            scheduleTick(at: max(start + TimeAmount(tick), loop.now))
        }
    }

    /// One tick of the keep-alive clock: the next slice of the streams, to be woken (each stream
    /// is in one of ``ChangeStreamSettings/keepAliveTicks`` slices, so it is woken once per
    /// interval).
    /// - Returns: The slice's streams; `nil` when no stream is open (the clock stops).
    func keepAliveTick() -> [(id: UInt64, signal: AsyncStream<Void>.Continuation)]? {
        state.withLock { state in
            guard !state.streams.isEmpty else {
                state.clockRuns = false
                return nil
            }
            state.ticks &+= 1
            return state.slices[Self.slice(of: state.ticks)].compactMap { id in state.streams[id].map { (id, $0.signal) } }
        }
    }

    /// The most streams the keep-alive clock wakes at once.
    static let keepAlivesPerWake = 2

    /// How a tick of the keep-alive clock wakes its `count` streams: in groups of at most
    /// ``keepAlivesPerWake``, evenly spread over the tick (the first at its start). A request
    /// that arrives meanwhile then waits behind a few keep-alives at most, not behind a slice of
    /// them (62 streams of 1,000, 625 of 10,000).
    /// - Returns: When each group is woken, after the tick's start, and its streams (indices of
    ///   the slice).
    static func wakes(of count: Int, over tick: Duration) -> [(after: Duration, streams: Range<Int>)] {
        let groups = (count + keepAlivesPerWake - 1) / keepAlivesPerWake
        return (0..<groups).map { group in
            let after: Duration = tick * group / groups
            let streams: Range<Int> = (group * count / groups)..<((group + 1) * count / groups)
            return (after, streams)
        }
    }

    /// Ends a stream's registration.
    func remove(_ id: UInt64) {
        state.withLock { state in
            guard let stream = state.streams.removeValue(forKey: id) else { return }
            state.slices[Self.slice(of: id)].remove(id)
            for watch in stream.watches {
                state.entries[watch.table]?[watch.scope]?.streams.remove(id)
                if state.entries[watch.table]?[watch.scope]?.streams.isEmpty == true { state.entries[watch.table]?[watch.scope] = nil }
                if state.entries[watch.table]?.isEmpty == true { state.entries[watch.table] = nil }
            }
        }
    }

    /// What the streams of `table` in `scope` see now (no storage query).
    func look(_ table: String, scope: RowScope) -> Look {
        state.withLock { $0.entries[ColumnKey(table)]?[scope]?.look ?? .loading }
    }

    /// Wakes the watchers of `table` after a write through this instance, for a storage without
    /// a ``ChangeFeed``.
    func touch(_ table: ColumnKey) {
        schedule(table) { _ in .incremental }
    }

    /// Records a change the storage announced and wakes the watchers it concerns.
    private func receive(_ change: TableChange) {
        switch change {
        case .written(let table, let scope):
            schedule(ColumnKey(table)) { scope == nil || scope == $0 ? .incremental : nil }
        case .removed(let table, let scope):
            schedule(ColumnKey(table)) { scope == nil || scope == $0 ? .full : nil }
        case .anything:
            schedule(nil) { _ in .full }
        }
    }

    /// Marks the entries of `table` (of every table for `nil`) that `refresh` names for reading
    /// and starts the watchers that do not run.
    private func schedule(_ table: ColumnKey?, _ refresh: (RowScope) -> Refresh?) {
        let start = state.withLock { state -> [ColumnKey] in
            var start: [ColumnKey] = []
            for key in table.map({ [$0] }) ?? Array(state.entries.keys) {
                guard var scopes = state.entries[key] else { continue }
                var marked = false
                for (scope, entry) in scopes {
                    guard let wanted = refresh(scope) else { continue }
                    scopes[scope]?.pending = max(entry.pending ?? wanted, wanted)
                    marked = true
                }
                state.entries[key] = scopes
                if marked, state.working.insert(key).inserted { start.append(key) }
            }
            return start
        }
        for table in start { startWatcher(table) }
    }

    /// What a watcher reads next of its table.
    private enum Read {
        /// One scope, past the state it knows (a write announced there).
        case incremental(RowScope, ChangePositions.State)
        /// Scopes in full, in one call of the storage (``TableStorage/newestStamps(of:scopes:)``).
        case full([RowScope])

        var scopes: [RowScope] {
            switch self {
            case .incremental(let scope, _): return [scope]
            case .full(let scopes): return scopes
            }
        }
    }

    /// The watcher of `table`: reads what is marked for reading until nothing is left, then ends
    /// (the next change starts it again). Every scope marked at once is read in one call of the
    /// storage, so a reconnect of the listening connection, which marks every scope, costs one
    /// read of the table, not one per scope.
    private func startWatcher(_ table: ColumnKey) {
        Task { [self] in
            while let (name, read) = nextRead(table) {
                var looks: [RowScope: Look] = [:]
                do {
                    switch read {
                    case .incremental(let scope, let known):
                        looks[scope] = .ready(try await ChangeReads.state(of: name, scope: scope, after: known, storage))
                    case .full(let scopes):
                        let stamps = try await storage.newestStamps(of: name, scopes: scopes)
                        for scope in scopes { looks[scope] = .ready(ChangePositions.State(updatedAt: stamps[scope])) }
                    }
                } catch {
                    for scope in read.scopes { looks[scope] = .failed }
                }
                publish(looks, of: table)
            }
        }
    }

    /// Records what the watcher read and wakes the streams of those scopes.
    private func publish(_ looks: [RowScope: Look], of table: ColumnKey) {
        state.withLock { state in
            for (scope, look) in looks {
                guard var entry = state.entries[table]?[scope] else { continue }
                // A failed scope is read again only when a new stream arrives.
                if case .failed = look { entry.pending = nil }
                entry.look = look
                state.entries[table]?[scope] = entry
                for id in entry.streams { state.streams[id]?.signal.yield() }
            }
        }
    }

    /// The next read of `table`, the marks it covers cleared: a scope marked alone for an
    /// incremental read is read past its state; otherwise every marked scope is read in full,
    /// together. `nil` (the watcher stops) when none is marked.
    private func nextRead(_ table: ColumnKey) -> (String, Read)? {
        state.withLock { state in
            var marked: [(scope: RowScope, known: ChangePositions.State?)] = []
            var name = ""
            for (scope, entry) in state.entries[table] ?? [:] {
                guard let refresh = entry.pending else { continue }
                state.entries[table]?[scope]?.pending = nil
                name = entry.table
                if refresh == .incremental, case .ready(let known) = entry.look {
                    marked.append((scope, known))
                } else {
                    marked.append((scope, nil))
                }
            }
            guard let first = marked.first else {
                state.working.remove(table)
                return nil
            }
            if marked.count == 1, let known = first.known { return (name, .incremental(first.scope, known)) }
            return (name, .full(marked.map(\.scope)))
        }
    }
}
