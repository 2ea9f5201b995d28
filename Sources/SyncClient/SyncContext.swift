import Foundation
public import Logging
public import SyncStore
import SyncWire
import Synchronization

/// The offline sync engine: owns the operation queue in a `LocalStore`, pushes it to the server,
/// pulls server changes into the store and purges local rows.
///
/// An actor; safe to share. Push, pull and purge never overlap: they run one at a time in call
/// order. Local writes (``SyncTable/insert(_:)`` and friends) run at any time, also while a push
/// is in flight; the in-flight rule keeps a newer local edit from being overwritten by the
/// answer to an older push (docs/protocol.md §1.3).
///
/// A context is made for one ``MobileServiceClient``, whose backend it pushes to and pulls from:
///
/// ```swift
/// let client = MobileServiceClient(url: serverURL)
/// let context = SyncContext(client: client, store: store, conflictHandler: ClientWins())
/// let todo = try context.syncTable("todo")
/// ```
public actor SyncContext {
    /// The client whose backend this context pushes to and pulls from.
    public nonisolated let client: MobileServiceClient
    /// The local store: user tables, operation queue, operation errors, delta tokens.
    public nonisolated let store: any LocalStore
    /// The hook that sees each pushed operation and the push's errors, if any.
    public nonisolated let conflictHandler: (any SyncConflictHandler)?
    nonisolated let logger: Logger
    /// The test hook told of each `SyncCheckpoint` reached, if any.
    nonisolated let checkpoint: (@Sendable (SyncCheckpoint) -> Void)?
    /// Push, pull and purge take turns here, in call order.
    nonisolated let gate = AsyncSerialGate()

    /// The feed observations listen to: the store's, or the context's own when the store has
    /// none (then ``write(_:)`` records and publishes what the engine's writes change).
    nonisolated let changeFeed: StoreChanges
    private nonisolated let recordsOwnChanges: Bool
    private nonisolated let current = Mutex<RunHandle?>(nil)
    private var observers: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
    /// Whether pushes send batches (``setPushBatching(_:)``).
    var pushBatching = PushBatching.off
    /// The batch size the server advertised (1: none), once asked.
    var advertisedBatchLimit: Int?
    /// The largest batch body the server advertised it takes, if it did.
    var advertisedBatchBytes: Int?
    /// The most single-operation requests a push has in flight at once (``setPushParallelism(_:)``).
    var pushParallelism = 1
    /// How attachment transfers retry a failed request (tests shorten the waits).
    var attachmentRetry = AttachmentRetry()
    /// The most bytes one attachment request carries.
    var attachmentChunkBytes = 1 << 20
    /// The tables whose attachments are downloaded eagerly, lowercased (``setAttachmentDownloadPolicy(_:forTable:)``).
    var eagerDownloadTables: Set<String> = []

    /// Creates a sync context over a local store, for a client's backend.
    /// - Parameters:
    ///   - client: the client for the backend (its URL, transport, installation id and
    ///     authentication); pushes and pulls go there.
    ///   - store: the local store (plain or encrypted `SQLiteStore`, or any other
    ///     `LocalStore`).
    ///   - conflictHandler: sees each pushed operation and may resolve conflicts; `nil` sends each
    ///     operation as it is.
    ///   - logger: where the engine logs (at `debug` and `info`, never item values); by default
    ///     nothing is logged.
    public init(
        client: MobileServiceClient, store: any LocalStore, conflictHandler: (any SyncConflictHandler)? = nil,
        logger: Logger = Logger(label: "ciphersync.sync", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.init(client: client, store: store, conflictHandler: conflictHandler, logger: logger, checkpoint: nil)
    }

    /// Creates a sync context that reports each `SyncCheckpoint` a push or pull reaches to a test
    /// hook, so that crash tests can end the process there.
    /// - Parameters:
    ///   - client: the client for the backend.
    ///   - store: the local store.
    ///   - conflictHandler: sees each pushed operation and may resolve conflicts.
    ///   - logger: where the engine logs.
    ///   - checkpoint: called synchronously, on the context, at each checkpoint; `nil` reports
    ///     nothing. It must return at once and must not call the context.
    @_spi(Testing)
    public init(
        client: MobileServiceClient, store: any LocalStore, conflictHandler: (any SyncConflictHandler)? = nil,
        logger: Logger = Logger(label: "ciphersync.sync", factory: { _ in SwiftLogNoOpLogHandler() }),
        checkpoint: (@Sendable (SyncCheckpoint) -> Void)?
    ) {
        self.client = client
        self.store = store
        self.conflictHandler = conflictHandler
        self.logger = logger
        self.checkpoint = checkpoint
        self.changeFeed = store.changes ?? StoreChanges()
        self.recordsOwnChanges = store.changes == nil
    }

    /// The connection to the client's backend.
    nonisolated var connection: ServiceConnection { client.connection }

    // MARK: tables and queue

    /// The offline table `name` of this context.
    /// - Parameter name: the table name.
    /// - Returns: the table; nothing is read or written until it is used.
    /// - Throws: ``SyncError/invalidTableName`` for a name that is not a valid table name.
    public nonisolated func syncTable(_ name: String) throws -> SyncTable {
        guard TableName.isServed(name) else { throw SyncError.notATableName() }
        return SyncTable(name: name, context: self)
    }

    /// The offline table `name`, reading and writing `Model` values.
    /// - Parameters:
    ///   - name: the table name.
    ///   - type: the model type (a `Codable` value with a string `id`).
    /// - Returns: the typed table.
    /// - Throws: ``SyncError/invalidTableName``.
    public nonisolated func syncTable<Model: Codable & Sendable>(_ name: String, as type: Model.Type) throws -> TypedSyncTable<Model> {
        TypedSyncTable(try syncTable(name))
    }

    /// The number of operations waiting to be pushed, across all tables.
    /// - Throws: ``SyncError/localStoreFailed``.
    public var pendingOperationsCount: Int {
        get async throws { try await read { try $0.operationCount(table: nil) } }
    }

    /// The operations waiting to be pushed, in push order; all tables, or one.
    /// - Throws: ``SyncError/localStoreFailed``.
    public func pendingOperations(table: String? = nil) async throws -> [TableOperation] {
        try await read { try $0.operations(table: table) }.map(TableOperation.init)
    }

    /// The operation errors stored by earlier pushes and not resolved yet, oldest first.
    /// - Throws: ``SyncError/localStoreFailed``.
    public func operationErrors() async throws -> [TableOperationError] {
        try await read { try $0.operationErrors() }.map { TableOperationError($0, context: self) }
    }

    // MARK: cancellation and progress

    /// Cancels the push, pull or purge that is running now, if any (including its request on
    /// the wire). It ends with ``SyncError/pushCancelled`` or ``SyncError/pullCancelled``; the
    /// current operation stays queued. Cancelling the calling task has the same effect.
    public nonisolated func cancel() {
        current.withLock { $0 }?.cancel()
    }

    /// A stream of progress events (operations pushed, pages pulled) from now on. Each call
    /// returns a new stream; it ends when the consumer stops iterating.
    public func events() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        observers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(key) }
        }
        return stream
    }

    private func removeObserver(_ key: UUID) {
        observers[key] = nil
    }

    func emit(_ event: SyncEvent) {
        for continuation in observers.values { continuation.yield(event) }
    }

    // MARK: running one job at a time

    /// Runs `body` when no other push, pull or purge runs, with a fresh cancellation handle.
    /// A task cancelled before its turn comes throws `cancelled` without running `body`.
    func exclusive<T: Sendable>(cancelled: SyncError, _ body: (RunHandle) async throws -> T) async throws -> T {
        do {
            return try await gate.withTurn {
                let run = RunHandle()
                current.withLock { $0 = run }
                defer { current.withLock { $0 = nil } }
                return try await body(run)
            }
        } catch is CancellationError {
            throw cancelled
        }
    }

    // MARK: store access

    /// Reads the store, mapping its errors to ``SyncError``. `body` sees the engine's records
    /// through the store's own fast path when it has one, else as rows of system tables.
    func read<T: Sendable>(_ body: @Sendable (any SyncRecordsReader) throws -> T) async throws -> T {
        do { return try await store.read { try body($0.records) } } catch { throw Self.mapStoreError(error) }
    }

    /// Writes the store in one transaction, mapping its errors to ``SyncError``.
    ///
    /// The engine records what its writes change when the store cannot tell: a store with no
    /// feed, or one that keeps the engine's records as rows of system tables (its feed names those
    /// tables, not the queue, the errors and the config). It publishes the topics the store's own
    /// feed does not.
    func write<T: Sendable>(_ body: @Sendable (any SyncRecordsWriter) throws -> T) async throws -> T {
        do {
            let recordsAll = recordsOwnChanges
            let (result, topics) = try await store.write { writer in
                let records = writer.records
                guard recordsAll || !(writer is any SyncRecordsWriter) else { return (try body(records), Set<StoreChangeTopic>()) }
                let recorder = ChangeRecordingWriter(records)
                return (try body(recorder), recorder.topics)
            }
            let published = recordsAll ? topics : topics.filter { if case .table = $0 { false } else { true } }
            if !published.isEmpty { changeFeed.publish(published) }
            return result
        } catch {
            throw Self.mapStoreError(error)
        }
    }

    static func mapStoreError(_ error: any Error) -> SyncError {
        if let error = error as? SyncError { return error }
        if let error = error as? StoreError {
            switch error {
            case StoreError.invalidTableName: return SyncError.notATableName(error)
            case StoreError.invalidItem: return SyncError(.invalidItem, reason: "The store refused the item.", underlying: error)
            case StoreError.invalidQuery: return SyncError(.invalidQuery, reason: "The store cannot evaluate the query.", underlying: error)
            case StoreError.diskFull, StoreError.ioError, StoreError.corruptOrKeyMismatch:
                // What happened and what to do, in the store's words.
                return SyncError(.localStoreFailed, reason: error.description, underlying: error)
            default: break
            }
        }
        return SyncError(.localStoreFailed, reason: "The local store failed.", underlying: error)
    }
}

/// A point of a push or pull where a crash leaves a state of its own, reported to the test hook
/// of `SyncContext.init(client:store:conflictHandler:logger:checkpoint:)`. The raw values are
/// stable names (the `todo` tool's fault-injection switch uses them).
@_spi(Testing)
public enum SyncCheckpoint: String, Sendable, CaseIterable {
    /// A push claimed an operation and marked it attempted; its request is not sent yet.
    case pushClaimed = "push-claimed"
    /// A push sent an operation's request and has its answer (or its failure); nothing about the
    /// outcome is recorded yet (nor about the operations sent before it since the push last
    /// wrote the store: answers are recorded a batch at a time).
    case pushSent = "push-sent"
    /// A pull received a page of items; it is not applied yet.
    case pullPage = "pull-page"
}

/// A progress event of a ``SyncContext`` (see ``SyncContext/events()``).
public enum SyncEvent: Sendable, Hashable {
    /// A push started with this many queued operations.
    case pushStarted(operations: Int)
    /// One operation was pushed: `succeeded` tells whether the server accepted it.
    case operationPushed(table: String, itemId: String, kind: TableOperation.Kind, succeeded: Bool)
    /// A push ended (completed, with errors, or aborted).
    case pushFinished(succeeded: Int, failed: Int)
    /// A pull of a table started.
    case pullStarted(table: String, queryId: String?)
    /// A page of a pull was applied to the store: `items` in the page, `total` items applied so
    /// far (counted as ``SyncTable/pull(_:queryId:pageSize:)`` counts them).
    case pagePulled(table: String, items: Int, total: Int)
    /// A pull ended after applying `items` items (counted as ``SyncTable/pull(_:queryId:pageSize:)``
    /// counts them).
    case pullFinished(table: String, items: Int)
    /// Local rows of a table were purged.
    case purged(table: String)
}
