public import SyncStore
public import SyncWire
import Synchronization

/// Sees every operation a push sends, and may resolve conflicts as they happen
/// (docs/protocol.md §1.4.3). Both requirements have defaults: send as is, and do nothing at the end.
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
        var mayHaveReachedServer: Bool
        /// The answer the first send takes instead of sending (the operation's batch result).
        var answer: BatchAnswer?
    }

    /// The queued operation (kind, table, item id, queue position).
    public let operation: TableOperation
    private let state: Mutex<State>
    private let connection: ServiceConnection
    private let run: RunHandle

    /// - Parameters:
    ///   - mayHaveReachedServer: whether an earlier attempt may have been applied (it was sent
    ///     and its outcome never recorded, or it got no answer, a 408 or a 5xx).
    ///   - answer: the server's answer to this operation already received in a batch: the first
    ///     ``execute()`` reads it instead of sending.
    init(
        operation: TableOperation, item: JSONObject, mayHaveReachedServer: Bool, connection: ServiceConnection, run: RunHandle,
        answer: BatchAnswer? = nil
    ) {
        self.operation = operation
        self.state = Mutex(State(item: item, mayHaveReachedServer: mayHaveReachedServer, answer: answer))
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

    /// Whether an attempt of this operation may already have been applied by the server: it was
    /// sent before and no outcome was recorded (a crash, no answer, a 408 or a 5xx).
    public var mayHaveReachedServer: Bool { state.withLock { $0.mayHaveReachedServer } }

    /// Cancels the whole push after this operation; the operation stays queued.
    public func cancelPush() {
        state.withLock { $0.isPushCancelled = true }
    }

    var isPushCancelled: Bool { state.withLock { $0.isPushCancelled } }
    var lastResponse: SyncResponse? { state.withLock { $0.lastResponse } }

    /// Sends the operation to the server once: POST for an insert, PATCH for an update, DELETE
    /// for a delete, with `If-Match` when the item has a version.
    ///
    /// A refusal about the item (409 or 412; 404 or 410 for an update) is read with the server's
    /// copy: the answer's body when it is the server's item (it has a `version`), otherwise the
    /// item read by id (`GET`, deleted ones included; through a `$filter` on the id when the read
    /// by id answers 404, as a server that ignores `__includeDeleted` there does). When the operation ``mayHaveReachedServer``
    /// and that copy holds what was sent, the earlier attempt was applied: the copy is returned as
    /// the success it was. A delete whose item the server has deleted or does not have succeeds.
    ///
    /// - Returns: the server's item for an insert or update (its `ETag` as `version`); `nil` for
    ///   a delete.
    /// - Throws: ``SyncError/conflict`` (409) or ``SyncError/preconditionFailed`` (412) with the
    ///   server's item in ``SyncError/serverItem``; ``SyncError/deletedOnServer`` (an update
    ///   answered with `deleted: true`, or a refusal whose copy is deleted) and
    ///   ``SyncError/missingOnServer`` (the server does not have the item), each with the status
    ///   as received; ``SyncError/authenticationRequired``, ``SyncError/requestFailed``,
    ///   ``SyncError/malformedServerResponse``, ``SyncError/transportFailed`` or
    ///   ``SyncError/cancelled``.
    public func execute() async throws -> JSONObject? {
        let (item, answer) = state.withLock { state in
            defer { state.answer = nil }
            return (state.item, state.answer)
        }
        let response: SyncResponse
        var body: JSONObject?? = nil
        if let answer {
            response = answer.response
            body = .some(answer.item)
        } else {
            let request = try makeRequest(item: item)
            do {
                response = try await connection.send(request, run: run)
            } catch let error as SyncError where error == .transportFailed {
                state.withLock { $0.mayHaveReachedServer = true }
                throw error
            }
        }
        state.withLock { state in
            state.lastResponse = response
            if PushAnswer.leavesOutcomeOpen(response.statusCode) { state.mayHaveReachedServer = true }
        }
        if response.isSuccess { return try accepted(response, body: body) }
        let status = response.statusCode
        if operation.kind == .delete, status == 404 || status == 410 { return nil }
        let aboutTheItem = status == 409 || status == 412 || (operation.kind == .update && (status == 404 || status == 410))
        guard aboutTheItem else { throw ServiceConnection.error(for: response) }
        let copy = try await serverCopy(after: response, body: body)
        if operation.kind == .delete {
            if copy.state == .deleted || copy.state == .missing { return nil }
        } else if mayHaveReachedServer, copy.state == .present, let server = copy.item,
            PushAnswer.holds(Self.wireBody(item, id: operation.itemId), in: server)
        {
            return server
        }
        throw PushAnswer.refusal(statusCode: status, copy: copy)
    }

    /// The item of a 2xx answer; an update answered with the item deleted did not apply.
    /// - Parameter body: the answer's item when it was read already (a batch result: `.some(nil)`
    ///   for a result without an object body), `nil` to read it from the response.
    private func accepted(_ response: SyncResponse, body: JSONObject??) throws -> JSONObject? {
        if operation.kind == .delete { return nil }
        if case .some(let item) = body {
            if let item { return try accepted(item, statusCode: response.statusCode) }
            // No object: no body at all, or one that is not an item (read as a single answer is).
            if response.body.isEmpty { return nil }
        }
        if response.body.isEmpty { return nil }
        guard let serverItem = ServiceConnection.item(from: response) else {
            throw SyncError.notAJSONObject(statusCode: response.statusCode)
        }
        return try accepted(serverItem, statusCode: response.statusCode)
    }

    private func accepted(_ serverItem: JSONObject, statusCode: Int) throws -> JSONObject {
        if operation.kind == .update, PushAnswer.isDeleted(serverItem) {
            throw PushAnswer.refusal(statusCode: statusCode, copy: PushAnswer.ServerCopy(item: serverItem))
        }
        return serverItem
    }

    /// The server's copy of the item behind a refusal: the answer's body when it is the server's
    /// item, else read by id with the deleted ones, and through a filter when the read by id
    /// answers 404 (``ServiceConnection/serverCopy(table:id:run:)``; a transport failure of that
    /// read aborts the push; the operation stays queued).
    private func serverCopy(after response: SyncResponse, body: JSONObject??) async throws -> PushAnswer.ServerCopy {
        let answered = body ?? ServiceConnection.item(from: response)
        if let item = answered, item[SystemProperty.version]?.stringValue != nil {
            return PushAnswer.ServerCopy(item: item)
        }
        return try await connection.serverCopy(table: operation.table, id: operation.itemId, run: run)
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

    /// The body of a request: the item without its system properties (their names compared
    /// without ASCII case), with `id` (or without any id when `id` is `nil`).
    static func wireBody(_ item: JSONObject, id: String?) -> JSONObject {
        var body = item
        for name in item.keys where isSystemProperty(name) { body[name] = nil }
        body[SystemProperty.id] = id.map(JSONValue.string)
        return body
    }

    /// Whether a member of an item stays out of a request body that names the item's id itself
    /// (``wireBody(_:id:)``): a system property, or `id`.
    static func isOmittedFromBody(_ name: String) -> Bool {
        name == SystemProperty.id || isSystemProperty(name)
    }

    /// Whether `name` is a system property's (compared without ASCII case).
    private static func isSystemProperty(_ name: String) -> Bool {
        SystemProperty.all.contains { ASCIICase.equal($0, name) }
    }
}
