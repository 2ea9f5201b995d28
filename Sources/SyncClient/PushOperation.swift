public import SyncWire
import Synchronization
public import SyncStore

/// Sees every operation a push sends, and may resolve conflicts as they happen
/// (protocol.md §1.4.3). Both requirements have defaults: send as is, and do nothing at the end.
///
/// ```swift
/// struct ClientWins: SyncConflictHandler {
///     func execute(_ operation: PushOperation) async throws -> JSONObject? {
///         do {
///             return try await operation.execute()
///         } catch let error as SyncError where error.isConflict {
///             guard let server = error.serverItem else { throw error }
///             operation.item["version"] = server["version"]   // "use client": retry over the server's version
///             return try await operation.execute()
///         }
///     }
/// }
/// ```
///
/// "Use server": return `error.serverItem`; the push stores it locally and drops the operation.
/// "Cancel": call ``PushOperation/cancelPush()`` and throw; the push ends with
/// ``SyncError/pushCancelled`` and the operation stays queued. Any other thrown error is recorded
/// as a ``TableOperationError`` and the push goes on with the next operation.
///
/// Do not start a push, pull or purge from the handler: they wait for the running push.
public protocol SyncConflictHandler: Sendable {
    /// Pushes one operation, usually by calling ``PushOperation/execute()`` once or more.
    /// - Returns: the item to store locally for an insert or update (normally the server's
    ///   answer), or `nil` to keep the local row; for a delete, a non-`nil` item is stored again.
    /// - Throws: the error to record for the operation (or to abort the push, for network,
    ///   authentication and cancellation errors).
    func execute(_ operation: PushOperation) async throws -> JSONObject?

    /// Called at the end of a push that left operation errors (not after an abort), before the
    /// push returns. It may resolve them (``TableOperationError/cancelAndUpdate(_:)`` and
    /// friends); the push then reports only the errors that remain.
    func pushDidComplete(with errors: [TableOperationError]) async
}

extension SyncConflictHandler {
    /// Sends the operation as it is.
    public func execute(_ operation: PushOperation) async throws -> JSONObject? {
        try await operation.execute()
    }

    /// Does nothing.
    public func pushDidComplete(with errors: [TableOperationError]) async {}
}

/// One operation being pushed, handed to a ``SyncConflictHandler``.
///
/// A reference type so that the handler's changes to ``item`` are seen by the push; safe to
/// share (its mutable state is behind a lock).
public final class PushOperation: Sendable {
    private struct State {
        var item: JSONObject
        var isPushCancelled = false
        var lastResponse: SyncResponse?
    }

    /// The queued operation (kind, table, item id, queue position).
    public let operation: TableOperation
    private let state: Mutex<State>
    private let connection: ServiceConnection
    private let run: RunHandle

    init(operation: TableOperation, item: JSONObject, connection: ServiceConnection, run: RunHandle) {
        self.operation = operation
        self.state = Mutex(State(item: item))
        self.connection = connection
        self.run = run
    }

    /// Insert, update or delete.
    public var kind: TableOperation.Kind { operation.kind }
    /// The table of the item.
    public var table: String { operation.table }
    /// The id of the item.
    public var itemId: String { operation.itemId }

    /// The item that ``execute()`` sends: the current local row (insert, update) or the item kept
    /// with the delete. Its `version` becomes `If-Match`; the other system properties are not
    /// sent. Change it to retry with other values (for example the server's version).
    public var item: JSONObject {
        get { state.withLock { $0.item } }
        set { state.withLock { $0.item = newValue } }
    }

    /// Cancels the whole push after this operation; the operation stays queued.
    public func cancelPush() {
        state.withLock { $0.isPushCancelled = true }
    }

    var isPushCancelled: Bool { state.withLock { $0.isPushCancelled } }
    var lastResponse: SyncResponse? { state.withLock { $0.lastResponse } }

    /// Sends the operation to the server once: POST for an insert, PATCH for an update, DELETE
    /// for a delete, with `If-Match` when the item has a version.
    /// - Returns: the server's item for an insert or update (its `ETag` as `version`); `nil` for
    ///   a delete (a DELETE answered 404 or 410 counts as success).
    /// - Throws: ``SyncError/conflict`` (409) or ``SyncError/preconditionFailed`` (412) with the
    ///   server's item in ``SyncError/serverItem``, ``SyncError/authenticationRequired``,
    ///   ``SyncError/requestFailed``, ``SyncError/malformedServerResponse``,
    ///   ``SyncError/transportFailed`` or ``SyncError/cancelled``.
    public func execute() async throws -> JSONObject? {
        let item = self.item
        let request = try makeRequest(item: item)
        let response = try await connection.send(request, run: run)
        state.withLock { $0.lastResponse = response }
        if operation.kind == .delete {
            if response.isSuccess || response.statusCode == 404 || response.statusCode == 410 { return nil }
            throw ServiceConnection.error(for: response)
        }
        guard response.isSuccess else { throw ServiceConnection.error(for: response) }
        if response.body.isEmpty { return nil }
        guard let serverItem = ServiceConnection.item(from: response) else {
            throw SyncError(.malformedServerResponse, reason: "The server's answer is not a JSON object.", statusCode: response.statusCode)
        }
        return serverItem
    }

    private func makeRequest(item: JSONObject) throws -> SyncRequest {
        let features: Set<Feature> = [.untypedTable, .offline]
        let version = item[SystemProperty.version]?.stringValue
        switch operation.kind {
        case .insert:
            let url = try connection.tableURL(operation.table)
            return try connection.request(.post, url: url, body: Self.wireBody(item, id: operation.itemId), features: features)
        case .update:
            let url = try connection.tableURL(operation.table, id: operation.itemId)
            return try connection.request(
                .patch, url: url, body: Self.wireBody(item, id: operation.itemId), ifMatch: version, features: features)
        case .delete:
            let url = try connection.tableURL(operation.table, id: operation.itemId)
            return try connection.request(.delete, url: url, ifMatch: version, features: features)
        }
    }

    /// The body of a request: the item without its system properties (compared
    /// case-insensitively), with `id` (or without any id when `id` is `nil`).
    static func wireBody(_ item: JSONObject, id: String?) -> JSONObject {
        let system = Set(SystemProperty.all.map { $0.lowercased() })
        var body = item.filter { !system.contains($0.key.lowercased()) }
        body[SystemProperty.id] = id.map(JSONValue.string)
        return body
    }
}
