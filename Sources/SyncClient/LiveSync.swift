import Foundation
import SyncWire

/// A table kept live by ``SyncContext/startLiveSync(_:options:)``: pulled (incrementally, with
/// its query id) whenever the server says it changed.
public struct LiveSyncTable: Sendable {
    /// The table name.
    public var name: String
    /// The filter of the items wanted (as for ``SyncTable/pull(_:queryId:pageSize:)``).
    public var query: Query
    /// The query id of the incremental pull.
    public var queryId: String

    /// A live table.
    /// - Parameters:
    ///   - name: the table name.
    ///   - query: the filter of the items wanted; all items by default.
    ///   - queryId: the incremental pull's query id; `live-<name>` by default.
    public init(_ name: String, query: Query = Query(), queryId: String? = nil) {
        self.name = name
        self.query = query
        self.queryId = queryId ?? "live-\(name)"
    }
}

/// How live sync pushes, pulls and reconnects.
public struct LiveSyncOptions: Sendable {
    /// How long after a local write live sync waits before it pushes, so that a burst of writes
    /// goes in one push (default 50 ms).
    public var pushDelay: Duration
    /// The first wait before reconnecting (or pushing again) after a network failure; it
    /// doubles with every failure in a row up to ``maximumBackoff`` (default 250 ms).
    public var initialBackoff: Duration
    /// The longest wait between two attempts (default 30 s).
    public var maximumBackoff: Duration
    /// Against a server without change notifications: how often every table is pulled
    /// (default 30 s).
    public var fallbackPullInterval: Duration
    /// Items per pull request (default 50).
    public var pageSize: Int

    /// Options.
    /// - Parameters:
    ///   - pushDelay: the wait between a local write and its push.
    ///   - initialBackoff: the first wait after a network failure.
    ///   - maximumBackoff: the longest wait after failures.
    ///   - fallbackPullInterval: the pull interval when the server has no change notifications.
    ///   - pageSize: items per pull request.
    public init(
        pushDelay: Duration = .milliseconds(50), initialBackoff: Duration = .milliseconds(250),
        maximumBackoff: Duration = .seconds(30), fallbackPullInterval: Duration = .seconds(30), pageSize: Int = 50
    ) {
        self.pushDelay = pushDelay
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.fallbackPullInterval = fallbackPullInterval
        self.pageSize = pageSize
    }
}

/// What live sync did or met (see ``LiveSync/events``). Errors arrive here, never thrown away.
public enum LiveSyncEvent: Sendable {
    /// Listening to the server's change notifications.
    case connected
    /// The change notifications stopped (network failure, server restart, refused request);
    /// live sync reconnects after the backoff.
    case disconnected(SyncError)
    /// The server has no change notifications (`GET /changes` is not found): every table is
    /// pulled at ``LiveSyncOptions/fallbackPullInterval`` instead.
    case pollingFallback
    /// Local changes were pushed.
    case pushed
    /// A table was pulled: `items` distinct items applied.
    case pulled(table: String, items: Int)
    /// Attachment content was transferred: `uploaded` uploads and `downloaded` downloads completed
    /// (``SyncContext/transferAttachments()``).
    case transferred(uploaded: Int, downloaded: Int)
    /// A push, pull or attachment transfer failed (conflicts, network, authentication, the store). A push that could
    /// not reach the server is tried again after the backoff.
    case failed(SyncError)
}

/// Live sync started by ``SyncContext/startLiveSync(_:options:)``: it runs until ``stop()``.
public final class LiveSync: Sendable {
    /// What live sync does and meets, in order; buffered until read, so nothing is lost. Ends
    /// after ``stop()``.
    public let events: AsyncStream<LiveSyncEvent>
    private let task: Task<Void, Never>

    init(events: AsyncStream<LiveSyncEvent>, task: Task<Void, Never>) {
        self.events = events
        self.task = task
    }

    /// Stops pushing, pulling and listening (a push or pull under way is cancelled: its
    /// operation stays queued, its applied pages stay applied) and returns when all has ended.
    public func stop() async {
        task.cancel()
        await task.value
    }
}

/// Waits that double after each failure in a row, up to a maximum.
struct Backoff {
    let initial: Duration
    let maximum: Duration
    private var next: Duration

    init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
        self.next = initial
    }

    /// Sleeps the current wait and doubles the next; false when the task was cancelled.
    mutating func wait() async -> Bool {
        let wait = next
        next = min(next * 2, maximum)
        return (try? await Task.sleep(for: wait)) != nil
    }

    mutating func reset() {
        next = initial
    }
}
