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
        var push = PushRun()
        do {
            push.limit = try await batchLimit(run: run)
        } catch {
            push.abort = Self.requestAbort(error)
        }
        if push.limit > 1 { await pushBatches(run, &push) }
        if push.limit == 1 { await pushSingly(run, &push) }
        if !push.answered.isEmpty || !push.claimed.isEmpty {
            let (settled, unsent) = (push.answered, push.claimed)
            do {
                try await write { writer in
                    try PushSteps.record(settled, in: writer)
                    try PushSteps.release(unsent, in: writer)
                }
                report(push.answered, into: &push.tally)
            } catch {
                push.abort = push.abort ?? Self.storeAbort(error)
            }
        }
        emit(.pushFinished(succeeded: push.tally.succeeded, failed: push.tally.failed))
        logger.debug("Push finished", metadata: ["succeeded": "\(push.tally.succeeded)", "failed": "\(push.tally.failed)"])
        try await finishPush(abort: push.abort)
    }

    /// One request per operation, or several side by side (``setPushParallelism(_:)``), until the
    /// queue is empty or the push stops.
    private func pushSingly(_ run: RunHandle, _ push: inout PushRun) async {
        while push.abort == nil {
            if run.isCancelled {
                push.abort = SyncError(.pushCancelled, reason: "The push was cancelled.")
                break
            }
            guard await refill(&push), let next = push.claimed.popLast() else { break }
            var group = [next]
            checkpoint?(.pushClaimed)
            let outcomes: [Outcome]
            if pushParallelism > 1, !push.claimed.isEmpty {
                group = Self.parallelGroup(after: next, from: &push.claimed, most: pushParallelism)
                for _ in group.dropFirst() { checkpoint?(.pushClaimed) }
                outcomes = await pushEach(group, run: run)
            } else {
                outcomes = [await pushOne(next, connection: connection, run: run)]
            }
            take(outcomes, of: group, into: &push)
            if push.abort == nil, run.isCancelled { push.abort = SyncError(.pushCancelled, reason: "The push was cancelled.") }
        }
    }

    /// Batches of consecutive operations of one table (the batch extension), pipelined: while a
    /// batch is at the server, the answers of the one before it are recorded, the next operations
    /// claimed and the next batch's request written. That batch is sent as soon as the server has
    /// answered the one before it, and that answer is read while it is there: the server still
    /// gets the queue in order, one batch after the other. An operation that cannot go in a batch
    /// goes alone once the batch before it is answered. Returns when the queue is empty, the push
    /// stops, or batches are no longer possible (``PushRun/limit`` is 1: the server has no batch
    /// route, or takes only single operations).
    private func pushBatches(_ run: RunHandle, _ push: inout PushRun) async {
        await withTaskGroup(of: Result<SyncResponse, any Error>.self) { flights in
            var flight: [ClaimedOperation]?  // the batch at the server: its request is the one task of `flights`
            while push.abort == nil, push.limit > 1 {
                if run.isCancelled {
                    push.abort = SyncError(.pushCancelled, reason: "The push was cancelled.")
                    break
                }
                guard await refill(&push), let next = push.claimed.popLast() else {
                    // Nothing more to claim: the last batch is answered (if nothing of it was
                    // applied, it goes again).
                    guard let sent = flight, push.abort == nil else { break }
                    flight = nil
                    _ = await land(sent, await flights.next() ?? .failure(CancellationError()), run: run, into: &push)
                    continue
                }
                var group = [next]
                while group.count < push.limit, next.item != nil, let following = push.claimed.last, following.item != nil,
                    following.record.table == next.record.table
                {
                    group.append(following)
                    push.claimed.removeLast()
                }
                var request: SyncRequest?
                if group.count > 1 {
                    do {
                        request = try batchRequest(group)
                        // A body larger than the server said it takes is cut in halves before it is
                        // sent (the rest goes back to the unsent operations), down to one operation.
                        while let most = advertisedBatchBytes, let body = request?.body, body.count > most, group.count > 1 {
                            let kept = group.count / 2
                            push.claimed.append(contentsOf: group[kept...].reversed())
                            group.removeLast(group.count - kept)
                            request = group.count > 1 ? try batchRequest(group) : nil
                        }
                    } catch {
                        push.claimed.append(contentsOf: group.reversed())
                        push.abort = Self.requestAbort(error)
                        break
                    }
                }
                for _ in group { checkpoint?(.pushClaimed) }
                var launched = false
                if let sent = flight {
                    // The batch before this one is answered first: the server applies them in order.
                    let reply = await flights.next() ?? .failure(CancellationError())
                    flight = nil
                    if let request, case .success(let response) = reply, response.statusCode == 200 {
                        flights.addTask { await self.sendBatch(request, run: run) }
                        flight = group
                        launched = true
                    }
                    guard await land(sent, reply, before: group, run: run, into: &push), !launched else { continue }
                    if push.abort != nil {
                        push.claimed.append(contentsOf: group.reversed())
                        break
                    }
                }
                if let request {
                    flights.addTask { await self.sendBatch(request, run: run) }
                    flight = group
                } else {
                    take([await pushOne(next, connection: connection, run: run)], of: group, into: &push)
                }
            }
            // The push stopped (or batches are no longer possible) with a batch at the server: it
            // is answered and recorded before the push ends; if nothing of it was applied, its
            // operations go back with the other unsent ones.
            if let sent = flight {
                _ = await land(sent, await flights.next() ?? .failure(CancellationError()), run: run, into: &push)
            }
        }
    }

    /// Sends a batch's request (a task of its own, while the push goes on).
    /// - Returns: The response, or why there is none.
    private nonisolated func sendBatch(_ request: SyncRequest, run: RunHandle) async -> Result<SyncResponse, any Error> {
        do {
            return .success(try await connection.send(request, run: run))
        } catch {
            return .failure(error)
        }
    }

    /// Takes the reply to a batch: its answers (``take(_:of:into:)``), or, when the server applied
    /// nothing of it, a smaller batch limit for the rest of the push (413: half the batch; one
    /// request each when the server has no batch route) and the batch back in front of the
    /// unsent operations, followed by `unsent` (operations taken from them meanwhile).
    /// - Returns: `false` when nothing of the batch was applied and it goes again.
    private func land(
        _ sent: [ClaimedOperation], _ reply: Result<SyncResponse, any Error>, before unsent: [ClaimedOperation] = [], run: RunHandle,
        into push: inout PushRun
    ) async -> Bool {
        switch await batchOutcome(sent, reply: reply, run: run) {
        case .answered(let outcomes):
            take(outcomes, of: sent, into: &push)
            return true
        case .tooLarge:
            // In batches half as large from here (one at a time at the end, where an operation
            // too large alone gets its own 413).
            push.limit = min(push.limit, sent.count / 2)
        case .unsupported:
            push.limit = 1
        }
        push.claimed.append(contentsOf: unsent.reversed())
        push.claimed.append(contentsOf: sent.reversed())
        return false
    }

    /// Claims the next operations when none are left, recording the answers so far in the same
    /// transaction.
    /// - Returns: `false` when the queue has no more operations or the store failed (the push stops).
    private func refill(_ push: inout PushRun) async -> Bool {
        guard push.claimed.isEmpty else { return true }
        let (settled, after, most) = (push.answered, push.last, max(Self.pushBatch, push.limit))
        do {
            push.claimed = try await write { writer in
                try PushSteps.record(settled, in: writer)
                return try PushSteps.claim(after: after, limit: most, in: writer)
            }
        } catch {
            push.abort = Self.storeAbort(error)
            return false
        }
        report(push.answered, into: &push.tally)
        push.answered = []
        guard let newest = push.claimed.last else { return false }
        push.last = newest.record.id
        push.claimed.reverse()
        return true
    }

    /// Takes the outcomes of a group of sent operations, in order: answers to record, or the abort
    /// that stops the push. Every answer the server gave is recorded, also those after an abort in
    /// the same group (operations sent side by side, or later results of a batch).
    private func take(_ outcomes: [Outcome], of group: [ClaimedOperation], into push: inout PushRun) {
        for _ in group { checkpoint?(.pushSent) }
        for (sent, outcome) in zip(group, outcomes) {
            switch outcome {
            case .success(let item): push.answered.append(AnsweredOperation(sent: sent.record, outcome: .success(item)))
            case .failure(let failure): push.answered.append(AnsweredOperation(sent: sent.record, outcome: .failure(failure)))
            case .abort(let error): push.abort = push.abort ?? error
            }
        }
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
    struct PushTally {
        var succeeded = 0
        var failed = 0
    }

    /// Where a push is.
    struct PushRun {
        /// The id of the last operation claimed.
        var last: Int64 = 0
        /// Claimed and not sent yet, the next one last.
        var claimed: [ClaimedOperation] = []
        /// Sent, the answer not recorded yet.
        var answered: [AnsweredOperation] = []
        /// The most operations per request (1: no batches).
        var limit = 1
        var tally = PushTally()
        /// Why the push stops early.
        var abort: SyncError?
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
