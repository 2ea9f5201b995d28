import Foundation
import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Pushes every pending operation to the server, one request per operation, in queue order
    /// across all tables (protocol.md §1.4); see ``setPushBatching(_:)`` and
    /// ``setPushParallelism(_:)`` for the two ways of sending more at once.
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
    ///
    /// The store is written once per `pushBatch` operations, not twice per operation: one
    /// transaction records the answers of the operations sent since the last one and claims the
    /// next operations, marking each attempted before any of them is sent (an operation is in
    /// flight from its claim: the in-flight rule covers it). A crash leaves the answered but
    /// unrecorded operations attempted, and the next push settles them. Operations claimed and
    /// never sent (the push stopped first) go back to the state they had.
    ///
    /// With ``HTTPSyncTransport`` on Linux the push runs on the event loop of its connection
    /// (``ServiceConnection/runExecutor``): each request is written, answered and its task resumed
    /// on one thread.
    func runPush(_ run: RunHandle) async throws {
        try await run.preferring(connection.runExecutor) { try await pushQueue(run) }
    }

    /// The push's loop: claims, sends, records.
    private func pushQueue(_ run: RunHandle) async throws {
        let total = try await read { try $0.operationCount(table: nil) }
        emit(.pushStarted(operations: total))
        logger.debug("Push started", metadata: ["operations": "\(total)"])
        var last: Int64 = 0
        var tally = PushTally()
        var abort: SyncError?
        var claimed: [ClaimedOperation] = []  // claimed and not sent yet, the next one last
        var answered: [AnsweredOperation] = []  // sent, the answer not recorded yet
        var limit = 1
        do {
            limit = try await batchLimit(run: run)
        } catch {
            abort = Self.requestAbort(error)
        }
        while abort == nil {
            if run.isCancelled {
                abort = SyncError(.pushCancelled, reason: "The push was cancelled.")
                break
            }
            if claimed.isEmpty {
                let (settled, after, most) = (answered, last, max(Self.pushBatch, limit))
                do {
                    claimed = try await write { writer in
                        try PushSteps.record(settled, in: writer)
                        return try PushSteps.claim(after: after, limit: most, in: writer)
                    }
                } catch {
                    abort = Self.storeAbort(error)
                    break
                }
                report(answered, into: &tally)
                answered = []
                guard let newest = claimed.last else { break }
                last = newest.record.id
                claimed.reverse()
            }
            guard let next = claimed.popLast() else { break }
            var group = [next]
            while limit > 1, group.count < limit, next.item != nil, let following = claimed.last, following.item != nil,
                following.record.table == next.record.table
            {
                group.append(following)
                claimed.removeLast()
            }
            for _ in group { checkpoint?(.pushClaimed) }
            var outcomes: [Outcome]?
            if group.count > 1 {
                switch await pushBatch(group, run: run) {
                case .answered(let answers):
                    outcomes = answers
                case .tooLarge:
                    // Nothing was applied: the group goes again, in batches half as large from here
                    // (one at a time at the end, where an operation too large alone gets its own 413).
                    limit = group.count / 2
                    claimed.append(contentsOf: group.reversed())
                    continue
                case .unsupported:
                    break
                }
            }
            if outcomes == nil {
                if group.count > 1 {
                    // The server has no batch route: nothing was applied; one request each from here.
                    limit = 1
                    claimed.append(contentsOf: group.dropFirst().reversed())
                    group = [next]
                    checkpoint?(.pushClaimed)
                }
                if limit == 1, pushParallelism > 1, !claimed.isEmpty {
                    group = Self.parallelGroup(after: next, from: &claimed, most: pushParallelism)
                    for _ in group.dropFirst() { checkpoint?(.pushClaimed) }
                    outcomes = await pushEach(group, run: run)
                } else {
                    outcomes = [await pushOne(next, connection: connection, run: run)]
                }
            }
            for _ in group { checkpoint?(.pushSent) }
            // Every answer the server gave is recorded, also those after an abort in the same group
            // (operations sent side by side, or later results of a batch): the push stops after them.
            for (sent, outcome) in zip(group, outcomes ?? []) {
                switch outcome {
                case .success(let item): answered.append(AnsweredOperation(sent: sent.record, outcome: .success(item)))
                case .failure(let failure): answered.append(AnsweredOperation(sent: sent.record, outcome: .failure(failure)))
                case .abort(let error): abort = abort ?? error
                }
            }
            if abort == nil, run.isCancelled { abort = SyncError(.pushCancelled, reason: "The push was cancelled.") }
        }
        if !answered.isEmpty || !claimed.isEmpty {
            let (settled, unsent) = (answered, claimed)
            do {
                try await write { writer in
                    try PushSteps.record(settled, in: writer)
                    try PushSteps.release(unsent, in: writer)
                }
                report(answered, into: &tally)
            } catch {
                abort = abort ?? Self.storeAbort(error)
            }
        }
        emit(.pushFinished(succeeded: tally.succeeded, failed: tally.failed))
        logger.debug("Push finished", metadata: ["succeeded": "\(tally.succeeded)", "failed": "\(tally.failed)"])
        try await finishPush(abort: abort)
    }

    /// The operations a push claims (and whose answers it records) per store transaction.
    static let pushBatch = 64

    /// Counts and announces recorded answers.
    private func report(_ answered: [AnsweredOperation], into tally: inout PushTally) {
        for answer in answered {
            let succeeded: Bool
            if case .success = answer.outcome { succeeded = true } else { succeeded = false }
            if succeeded { tally.succeeded += 1 } else { tally.failed += 1 }
            let sent = answer.sent
            emit(.operationPushed(table: sent.table, itemId: sent.itemId, kind: sent.kind, succeeded: succeeded))
        }
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

    /// How one sent operation ended, before it is recorded.
    enum Outcome: Sendable {
        case success(JSONObject?)
        case failure(PushFailure)
        case abort(SyncError)
    }

    /// Operations pushed and recorded so far.
    private struct PushTally {
        var succeeded = 0
        var failed = 0
    }

    /// Sends one operation through the conflict handler (or directly) and classifies the result.
    /// With `answer` (the operation's result in a batch), its first send is that answer.
    func pushOne(_ claimed: ClaimedOperation, connection: ServiceConnection, run: RunHandle, answer: BatchAnswer? = nil) async -> Outcome {
        let record = claimed.record
        guard let item = claimed.item else {
            let missing = SyncError(.invalidItem, reason: "The item is missing from the local table.")
            return .failure(PushFailure(error: missing, item: [SystemProperty.id: .string(record.itemId)], response: nil))
        }
        let operation = PushOperation(
            operation: TableOperation(record), item: item, mayHaveReachedServer: claimed.mayHaveReachedServer, connection: connection,
            run: run, answer: answer)
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
            if let abort = Self.pushAbort(for: error) { return .abort(abort) }
            return .failure(PushFailure(error: error, item: operation.item, response: operation.lastResponse))
        }
    }

    /// The abort an error stops the whole push with (no network, a 401, a cancellation, the local
    /// store), or `nil` for an error of the operation alone.
    static func pushAbort(for error: any Error) -> SyncError? {
        if error is CancellationError { return SyncError(.pushCancelled, reason: "The push was cancelled.", underlying: error) }
        guard let error = error as? SyncError else { return nil }
        switch error.code {
        case .transportFailed:
            return SyncError(.pushAbortedByNetwork, reason: "The server could not be reached.", underlying: error)
        case .authenticationRequired:
            return SyncError(.pushAbortedByAuthentication, reason: "The server asked for authentication.", statusCode: 401)
        case .cancelled, .pushCancelled:
            return SyncError(.pushCancelled, reason: "The push was cancelled.", underlying: error)
        case .localStoreFailed:
            return storeAbort(error)
        default:
            return nil
        }
    }

    /// The abort for a request of the push's own (not an operation's) that got no usable answer.
    static func requestAbort(_ error: any Error) -> SyncError {
        pushAbort(for: error) ?? SyncError(.pushAbortedByNetwork, reason: "The server's answer could not be used.", underlying: error)
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
    /// The state the operation had before the claim (attempted: an earlier attempt was sent
    /// and no outcome recorded since, so it may have been applied).
    let previousState: TableOperationRecord.State

    /// Whether an earlier attempt may have been applied.
    var mayHaveReachedServer: Bool { previousState == .attempted }
}

/// A sent operation and its answer, to be recorded.
struct AnsweredOperation: Sendable {
    enum Outcome: Sendable {
        /// The server accepted it: its item (or `nil`).
        case success(JSONObject?)
        /// It failed: what to record.
        case failure(PushFailure)
    }

    /// The operation as it was claimed and sent.
    let sent: TableOperationRecord
    let outcome: Outcome
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
