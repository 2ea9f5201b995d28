import Foundation
import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Pushes every pending operation to the server, one request per operation, in queue order
    /// across all tables (protocol.md §1.4).
    ///
    /// A successful insert or update stores the server's answer locally (its version, timestamps)
    /// and removes the operation. A failed operation is recorded as a ``TableOperationError``
    /// (409/412 with the server's item), stays queued, and the push goes on with the next one.
    /// Network failures, a 401, a local store failure and cancellation stop the push at once;
    /// the current operation stays queued and no error is recorded for it.
    ///
    /// - Throws: ``SyncError/pushCompletedWithErrors`` with ``SyncError/operationErrors`` when
    ///   operations failed (after the conflict handler's ``SyncConflictHandler/pushDidComplete(with:)``
    ///   had its chance to resolve them); ``SyncError/pushAbortedByNetwork``,
    ///   ``SyncError/pushAbortedByAuthentication``, ``SyncError/pushAbortedByLocalStore`` or
    ///   ``SyncError/pushCancelled`` when it stopped early (with the errors recorded so far), or
    ///   when its task was cancelled while it waited for a running push, pull or purge (then
    ///   nothing was read or sent).
    public func push() async throws {
        try await exclusive(cancelled: SyncError(.pushCancelled, reason: "The push was cancelled.")) { run in
            try await runPush(run)
        }
    }

    /// The push itself, for callers that already run exclusively (pull's implicit push).
    func runPush(_ run: RunHandle) async throws {
        let total = try await read { try $0.operationCount(table: nil) }
        emit(.pushStarted(operations: total))
        logger.debug("Push started", metadata: ["operations": "\(total)"])
        var last: Int64 = 0
        var succeeded = 0
        var failed = 0
        var abort: SyncError?
        while abort == nil {
            if run.isCancelled {
                abort = SyncError(.pushCancelled, reason: "The push was cancelled.")
                break
            }
            let claimed: ClaimedOperation?
            let after = last
            do {
                claimed = try await write { try PushSteps.claim(after: after, in: $0) }
            } catch {
                abort = Self.storeAbort(error)
                break
            }
            guard let claimed else { break }
            last = claimed.record.id
            checkpoint?(.pushClaimed)
            let outcome = await pushOne(claimed, connection: connection, run: run)
            checkpoint?(.pushSent)
            do {
                switch outcome {
                case .success(let item):
                    try await write { try PushSteps.recordSuccess(claimed.record, result: item, in: $0) }
                    succeeded += 1
                    emit(.operationPushed(table: claimed.record.table, itemId: claimed.record.itemId, kind: claimed.record.kind, succeeded: true))
                    if run.isCancelled { abort = SyncError(.pushCancelled, reason: "The push was cancelled.") }
                case .failure(let failure):
                    try await write { try PushSteps.recordFailure(claimed.record, failure, in: $0) }
                    failed += 1
                    emit(.operationPushed(table: claimed.record.table, itemId: claimed.record.itemId, kind: claimed.record.kind, succeeded: false))
                case .abort(let error):
                    abort = error
                }
            } catch {
                abort = Self.storeAbort(error)
            }
        }
        emit(.pushFinished(succeeded: succeeded, failed: failed))
        logger.debug("Push finished", metadata: ["succeeded": "\(succeeded)", "failed": "\(failed)"])
        try await finishPush(abort: abort)
    }

    /// Reports the stored operation errors: attached to the abort error, or after the handler's
    /// end-of-push hook as ``SyncError/pushCompletedWithErrors``.
    private func finishPush(abort: SyncError?) async throws {
        let records: [OperationErrorRecord]
        do {
            records = try await read { try $0.operationErrors() }
        } catch {
            throw abort ?? Self.storeAbort(error)
        }
        var errors = records.map { TableOperationError($0, context: self) }
        if let abort { throw abort.with(operationErrors: errors) }
        guard !errors.isEmpty else { return }
        if let conflictHandler {
            await conflictHandler.pushDidComplete(with: errors)
            do {
                errors = try await read { try $0.operationErrors() }.map { TableOperationError($0, context: self) }
            } catch {
                throw Self.storeAbort(error)
            }
            if errors.isEmpty { return }
        }
        throw SyncError(.pushCompletedWithErrors, reason: "Not all operations completed successfully.", operationErrors: errors)
    }

    private enum Outcome: Sendable {
        case success(JSONObject?)
        case failure(PushFailure)
        case abort(SyncError)
    }

    /// Sends one operation through the conflict handler (or directly) and classifies the result.
    private func pushOne(_ claimed: ClaimedOperation, connection: ServiceConnection, run: RunHandle) async -> Outcome {
        let record = claimed.record
        guard let item = claimed.item else {
            let missing = SyncError(.invalidItem, reason: "The item is missing from the local table.")
            return .failure(PushFailure(error: missing, item: [SystemProperty.id: .string(record.itemId)], response: nil))
        }
        let operation = PushOperation(
            operation: TableOperation(record), item: item, mayHaveReachedServer: claimed.mayHaveReachedServer, connection: connection,
            run: run)
        do {
            let result: JSONObject?
            if let conflictHandler {
                result = try await conflictHandler.execute(operation)
            } else {
                result = try await operation.execute()
            }
            if operation.isPushCancelled { return .abort(SyncError(.pushCancelled, reason: "The push was cancelled.")) }
            return .success(result)
        } catch {
            if operation.isPushCancelled || run.isCancelled || error is CancellationError {
                return .abort(SyncError(.pushCancelled, reason: "The push was cancelled.", underlying: error))
            }
            if let error = error as? SyncError {
                switch error.code {
                case .transportFailed:
                    return .abort(SyncError(.pushAbortedByNetwork, reason: "The server could not be reached.", underlying: error))
                case .authenticationRequired:
                    return .abort(SyncError(.pushAbortedByAuthentication, reason: "The server asked for authentication.", statusCode: 401))
                case .cancelled, .pushCancelled:
                    return .abort(SyncError(.pushCancelled, reason: "The push was cancelled.", underlying: error))
                case .localStoreFailed:
                    return .abort(Self.storeAbort(error))
                default:
                    break
                }
            }
            return .failure(PushFailure(error: error, item: operation.item, response: operation.lastResponse))
        }
    }

    static func storeAbort(_ error: any Error) -> SyncError {
        if let error = error as? SyncError, error.isPushAbort { return error }
        return SyncError(.pushAbortedByLocalStore, reason: "The local store failed during the push.", underlying: error)
    }
}

/// An operation claimed by a push: the queue record and the item to send.
struct ClaimedOperation: Sendable {
    let record: TableOperationRecord
    /// The current row (insert, update) or the item kept with a delete; `nil` when the row of an
    /// insert or update is missing.
    let item: JSONObject?
    /// Whether an earlier attempt may have been applied: the operation was already marked
    /// attempted when claimed (sent, and no outcome recorded since).
    let mayHaveReachedServer: Bool
}

/// Why one pushed operation failed: what to record in the errors table.
struct PushFailure: Sendable {
    let error: any Error
    let item: JSONObject
    let response: SyncResponse?

    var statusCode: Int? { (error as? SyncError)?.statusCode ?? response?.statusCode }
    var serverItem: JSONObject? { (error as? SyncError)?.serverItem }
    var conflict: TableOperationError.Conflict? { (error as? SyncError)?.conflict }
    var message: String {
        guard let error = error as? SyncError else { return "The conflict handler failed the operation." }
        return error.reason ?? "The operation failed (\(error.code.rawValue))."
    }
}

/// The store steps of a push, each one transaction.
enum PushSteps {
    /// The first operation after `id`, marked attempted, with the item to send.
    static func claim(after id: Int64, in writer: any StoreWriter) throws -> ClaimedOperation? {
        guard var operation = try writer.operation(after: id) else { return nil }
        let mayHaveReachedServer = operation.state == .attempted
        let item: JSONObject?
        switch operation.kind {
        case .delete: item = operation.item ?? [SystemProperty.id: .string(operation.itemId)]
        case .insert, .update: item = try writer.lookup(table: operation.table, id: operation.itemId)
        }
        if operation.state != .attempted {
            operation.state = .attempted
            try writer.updateOperation(operation)
        }
        return ClaimedOperation(record: operation, item: item, mayHaveReachedServer: mayHaveReachedServer)
    }

    /// Records a success. If the operation is unchanged since it was sent, it is removed and the
    /// server's item stored; if a local write changed it while the request was in flight, the
    /// newer local edit wins: the operation stays queued (an insert becomes an update, since the
    /// server has the item now) and only the server's system properties are taken.
    static func recordSuccess(_ sent: TableOperationRecord, result: JSONObject?, in writer: any StoreWriter) throws {
        guard var current = try writer.operation(id: sent.id) else { return }
        if current.version == sent.version || sent.kind == .delete {
            try writer.deleteOperation(id: sent.id)
            if var server = result {
                if server[SystemProperty.id] == nil { server[SystemProperty.id] = .string(sent.itemId) }
                if let id = server[SystemProperty.id]?.stringValue, ItemID.key(id) == ItemID.key(sent.itemId) {
                    try writer.upsert(table: sent.table, items: [server], ignoreMissingColumns: false)
                }
            }
            return
        }
        var system: JSONObject = [:]
        for name in [SystemProperty.version, SystemProperty.createdAt, SystemProperty.updatedAt] {
            if let value = result?[name], !value.isNull { system[name] = value }
        }
        if current.kind == .delete {
            if let version = system[SystemProperty.version] { current.item?[SystemProperty.version] = version }
        } else {
            if current.kind == .insert { current.kind = .update }
            if !system.isEmpty, try writer.lookup(table: sent.table, id: sent.itemId) != nil {
                system[SystemProperty.id] = .string(sent.itemId)
                try writer.upsert(table: sent.table, items: [system], ignoreMissingColumns: false)
            }
        }
        current.state = .pending
        try writer.updateOperation(current)
    }

    /// Records a failure as the operation's error (replacing older ones), unless a local write
    /// changed the operation while it was in flight (the next push sends the new content). An
    /// operation the server may have applied all the same (no answer, 408, 5xx) stays marked
    /// attempted; a clear refusal marks it failed.
    static func recordFailure(_ sent: TableOperationRecord, _ failure: PushFailure, in writer: any StoreWriter) throws {
        guard var current = try writer.operation(id: sent.id), current.version == sent.version else { return }
        try writer.deleteOperationErrors(operationId: sent.id)
        try writer.addOperationError(
            OperationErrorRecord(
                operationId: sent.id, operationVersion: sent.version, kind: sent.kind, table: sent.table,
                itemId: sent.itemId, statusCode: failure.statusCode, message: failure.message, item: failure.item,
                serverItem: failure.serverItem, rawResponse: failure.response.flatMap(ServiceConnection.rawText(of:)),
                conflict: failure.conflict?.rawValue))
        current.state = failure.statusCode.map(PushAnswer.leavesOutcomeOpen) == true ? .attempted : .failed
        try writer.updateOperation(current)
    }
}
