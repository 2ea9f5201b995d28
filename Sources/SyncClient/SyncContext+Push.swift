import Foundation
import Logging
import SyncStore
import SyncWire

extension SyncContext {
    /// Pushes every pending operation to the server, one request per operation, in queue order
    /// across all tables (docs/protocol.md §1.4); see ``setPushBatching(_:)`` and
    /// ``setPushParallelism(_:)`` for the two ways of sending more at once.
    ///
    /// A successful insert or update stores the server's answer locally (its version, timestamps)
    /// and removes the operation. A failed operation is recorded as a ``TableOperationError``
    /// (409/412 with the server's item), stays queued, and the push goes on with the next one.
    /// Network failures, a 401, a local store failure and cancellation stop the push at once;
    /// the current operation stays queued and no error is recorded for it.
    ///
    /// Once the queue is sent, the push uploads the content of the attachments whose item's and
    /// metadata row's inserts reached the server (``transferAttachments()`` describes how); an
    /// upload that fails for now waits in the attachment queue for the next push. After a push
    /// that completed with operation errors the uploads run too, and the push throws
    /// ``SyncError/pushCompletedWithErrors``: an upload refused then is parked in the queue with
    /// its `lastError` (``attachmentTransfers()``).
    ///
    /// - Throws: ``SyncError/attachmentTransferFailed`` when the server refused uploads for good
    ///   (``SyncError/authenticationRequired`` when it answered an upload 401);
    ///   ``SyncError/pushCompletedWithErrors`` with ``SyncError/operationErrors`` when
    ///   operations failed (after the conflict handler's ``SyncConflictHandler/pushDidComplete(with:)``
    ///   had its chance to resolve them); ``SyncError/pushAbortedByNetwork``,
    ///   ``SyncError/pushAbortedByAuthentication``, ``SyncError/pushAbortedByLocalStore`` or
    ///   ``SyncError/pushCancelled`` when it stopped early (with the errors recorded so far), or
    ///   when its task was cancelled while it waited for a running push, pull or purge (then
    ///   nothing was read or sent); ``SyncError/invalidSetting`` when the client's installation
    ///   id cannot be sent in a header (a control character: nothing is read or sent).
    public func push() async throws {
        try await exclusive(cancelled: SyncError.pushWasCancelled()) { run in
            try await runPushAndUploads(run, refusalsThrow: true)
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
        try connection.checkInstallationID()
        try await run.preferring(connection.runExecutor) { try await pushQueue(run) }
    }

    /// The push's loop: claims, sends, records.
    private func pushQueue(_ run: RunHandle) async throws {
        let total = try await read { try $0.operationCount(table: nil) }
        emit(.pushStarted(operations: total))
        logger.debug("Push started", metadata: ["operations": "\(total)"])
        await (store as? any PushCacheHints)?.willPush(operations: total)
        var push = PushRun()
        do {
            push.limit = try await batchLimit(run: run)
        } catch {
            push.abort = Self.requestAbort(error)
        }
        if push.limit > 1 { await pushBatches(run, &push) }
        if push.limit == 1 { await pushSingly(run, &push) }
        await landAhead(&push)
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
        await (store as? any PushCacheHints)?.didPush()
        emit(.pushFinished(succeeded: push.tally.succeeded, failed: push.tally.failed))
        logger.debug("Push finished", metadata: ["succeeded": "\(push.tally.succeeded)", "failed": "\(push.tally.failed)"])
        try await finishPush(abort: push.abort)
    }

    /// One request per operation, or several side by side (``setPushParallelism(_:)``), until the
    /// queue is empty or the push stops.
    private func pushSingly(_ run: RunHandle, _ push: inout PushRun) async {
        if pushParallelism > 1 {
            await pushSideBySide(run, &push)
            return
        }
        while !push.stopIfCancelled(run) {
            guard await refillAhead(&push), let next = push.claimed.popLast() else { break }
            checkpoint?(.pushClaimed)
            take([await pushOne(next, connection: connection, run: run)], of: [next], into: &push)
        }
    }

    /// Batches of consecutive operations of one table (the batch extension), pipelined: a sender
    /// task sends the batches handed to it one after the other, each as soon as the server has
    /// answered the one before it (the server gets the queue in order), while the push reads
    /// that answer, records it, claims the next operations and writes the next batch's request.
    /// ``batchesReady`` batches wait ready beside the one at the server, so that a slow step of
    /// the push (a store checkpoint) does not keep the server waiting. After an answer other than
    /// 200 the sender sends nothing more that was handed to it before the push took that answer:
    /// those batches come back unsent. An operation that cannot go in a batch goes alone once the
    /// batches before it are answered. Returns when the queue is empty, the push stops, or batches
    /// are no longer possible (``PushRun/limit`` is 1: the server has no batch route, or takes only
    /// single operations).
    private func pushBatches(_ run: RunHandle, _ push: inout PushRun) async {
        let (handed, hand) = AsyncStream.makeStream(of: HandedBatch.self)
        let (replies, reply) = AsyncStream.makeStream(of: BatchReply.self)
        let turn = BatchTurn()
        await withTaskGroup(of: Void.self) { sender in
            sender.addTask { await self.sendInTurn(handed, replies: reply, turn: turn, run: run) }
            var pipeline = BatchPipeline(replies: replies.makeAsyncIterator(), turn: turn)
            // Large batches start smaller (a quarter of the limit, at least 256 operations, then
            // twice as large each time): the server starts on the first while the next, larger
            // ones are claimed and written.
            var ramp = max(Self.pushBatch * 4, push.limit / 4)
            while push.limit > 1, !push.stopIfCancelled(run) {
                if pipeline.outstanding.count > Self.batchesReady {
                    // One batch at the server and enough ready: the oldest is answered first.
                    await landOldest(&pipeline, run: run, into: &push)
                    continue
                }
                let most = min(ramp, push.limit)
                guard await refill(&push, batch: most), let next = push.claimed.popLast() else {
                    // Nothing more to claim: the batches handed are answered (those of which
                    // nothing was applied go again).
                    guard !pipeline.outstanding.isEmpty, push.abort == nil else { break }
                    await landOldest(&pipeline, run: run, into: &push)
                    continue
                }
                var group = [next]
                while group.count < most, next.item != nil, let following = push.claimed.last, following.item != nil,
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
                guard let request else {
                    // Alone, once the batches before it are answered (it waits with the unsent ones).
                    if !pipeline.outstanding.isEmpty {
                        push.claimed.append(contentsOf: group.reversed())
                        await landOldest(&pipeline, run: run, into: &push)
                        continue
                    }
                    checkpoint?(.pushClaimed)
                    take([await pushOne(next, connection: connection, run: run)], of: group, into: &push)
                    continue
                }
                for _ in group { checkpoint?(.pushClaimed) }
                hand.yield(HandedBatch(request: request, turn: pipeline.turn.current))
                pipeline.outstanding.append(group)
                ramp = min(ramp * 2, push.limit)
            }
            // The push stopped (or batches are no longer possible): what the sender has not sent
            // yet stays unsent, and the batches handed are answered and recorded before the push
            // ends; those of which nothing was applied go back with the other unsent operations.
            pipeline.endTurn()
            hand.finish()
            while !pipeline.outstanding.isEmpty { await landOldest(&pipeline, run: run, into: &push) }
        }
    }

    /// Sends the batches handed to it one after the other, each once the one before it is
    /// answered (a task of its own, while the push goes on). A batch of a turn that ended (an
    /// earlier batch of its turn answered other than 200, or the push withdrew it) or of a
    /// cancelled push is not sent.
    private nonisolated func sendInTurn(
        _ handed: AsyncStream<HandedBatch>, replies: AsyncStream<BatchReply>.Continuation, turn: BatchTurn, run: RunHandle
    ) async {
        var refusedTurn: Int?
        for await batch in handed {
            guard batch.turn != refusedTurn, batch.turn == turn.current, !run.isCancelled else {
                replies.yield(.notSent)
                continue
            }
            let answer: Result<SyncResponse, any Error>
            do {
                answer = .success(try await connection.send(batch.request, run: run))
            } catch {
                answer = .failure(error)
            }
            if case .success(let response) = answer, response.statusCode == 200 {} else { refusedTurn = batch.turn }
            replies.yield(.sent(answer))
        }
        replies.finish()
    }

    /// Takes the answer to the oldest batch handed to the sender (``take(_:of:into:)``). When
    /// nothing of it was applied, the batches handed after it (which the sender then did not
    /// send) are taken back too, and all go in front of the unsent operations, in queue order;
    /// the pipeline's turn ends.
    private func landOldest(_ pipeline: inout BatchPipeline, run: RunHandle, into push: inout PushRun) async {
        let oldest = pipeline.outstanding.removeFirst()
        if await land(oldest, await pipeline.nextReply(), run: run, into: &push) { return }
        var back = [oldest]
        while !pipeline.outstanding.isEmpty {
            let later = pipeline.outstanding.removeFirst()
            if await !land(later, await pipeline.nextReply(), run: run, into: &push) { back.append(later) }
        }
        for group in back.reversed() { push.claimed.append(contentsOf: group.reversed()) }
        pipeline.endTurn()
    }

    /// Takes the reply to a batch: its answers (``take(_:of:into:)``), or, when the server applied
    /// nothing of it, a smaller batch limit for the rest of the push (413: half the batch; one
    /// request each when the server has no batch route).
    /// - Returns: `false` when nothing of the batch was applied (or it was not sent) and it goes again.
    private func land(_ sent: [ClaimedOperation], _ reply: BatchReply, run: RunHandle, into push: inout PushRun) async -> Bool {
        guard case .sent(let answer) = reply else { return false }
        switch await batchOutcome(sent, reply: answer, run: run) {
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
        return false
    }

    /// Claims the next operations when none are left, recording the answers so far in the same
    /// transaction.
    /// - Returns: `false` when the queue has no more operations or the store failed (the push stops).
    /// - Parameter batch: The most operations the next request may carry (``PushRun/limit`` when
    ///   not given): the claim takes at least that many.
    func refill(_ push: inout PushRun, batch: Int? = nil) async -> Bool {
        guard push.claimed.isEmpty else { return true }
        let claimed: [ClaimedOperation]
        do {
            claimed = try await recordAndClaim(push.answered, after: push.last, limit: max(Self.pushBatch, batch ?? push.limit))
        } catch {
            push.abort = Self.storeAbort(error)
            return false
        }
        report(push.answered, into: &push.tally)
        push.answered = []
        return push.adopt(claimed)
    }

    /// Records the answers `settled` and claims up to `limit` operations after the operation
    /// `after`, in one store transaction.
    private func recordAndClaim(_ settled: [AnsweredOperation], after: Int64, limit: Int) async throws -> [ClaimedOperation] {
        try await write { writer in
            try PushSteps.record(settled, in: writer)
            return try PushSteps.claim(after: after, limit: limit, in: writer)
        }
    }

    /// ``refill(_:batch:)`` one store transaction ahead, for operations sent one by one: the next
    /// operations are claimed (and the answers so far recorded) in the background while these are
    /// sent, so that the requests do not wait for the store between two claims.
    /// - Returns: `false` when the queue has no more operations or the store failed (the push stops).
    func refillAhead(_ push: inout PushRun) async -> Bool {
        if push.claimed.isEmpty, push.ahead != nil {
            await landAhead(&push)
            if push.abort != nil { return false }
        }
        // Claims here when none were claimed ahead, or the claim ahead found the queue empty: the
        // operations queued since then are sent too, as they would be claiming one run at a time.
        guard await refill(&push) else { return false }
        if push.ahead == nil {
            let (settled, after) = (push.answered, push.last)
            push.answered = []
            push.ahead = (Task { try await recordAndClaim(settled, after: after, limit: Self.pushBatch) }, settled)
        }
        return true
    }

    /// Takes the operations claimed in the background (``refillAhead(_:)``), after those still
    /// claimed; when that transaction failed, its answers are to be recorded again and the push
    /// stops.
    func landAhead(_ push: inout PushRun) async {
        guard let ahead = push.ahead else { return }
        push.ahead = nil
        do {
            let claimed = try await ahead.claim.value
            report(ahead.recorded, into: &push.tally)
            push.adopt(claimed)
        } catch {
            push.answered = ahead.recorded + push.answered
            push.abort = push.abort ?? Self.storeAbort(error)
        }
    }

    /// Takes the outcomes of a group of sent operations, in order: answers to record, or the abort
    /// that stops the push. Every answer the server gave is recorded, also those after an abort
    /// (operations sent side by side, or later results of a batch).
    func take(_ outcomes: [Outcome], of group: [ClaimedOperation], into push: inout PushRun) {
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

    /// The batches a push keeps ready beside the one at the server, so that a slow step of its
    /// own (a store checkpoint) does not keep the server waiting.
    static let batchesReady = 2

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
            await Self.offTheLoop { await conflictHandler.pushDidComplete(with: errors) }
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
        /// The next operations, claimed in the background while the claimed ones are sent, and
        /// the answers that claim's transaction records (``refillAhead(_:)``).
        var ahead: (claim: Task<[ClaimedOperation], any Error>, recorded: [AnsweredOperation])?

        /// Takes operations just claimed (in queue order) after those still claimed.
        /// - Returns: `false` when there are none.
        @discardableResult
        mutating func adopt(_ operations: [ClaimedOperation]) -> Bool {
            guard let newest = operations.last else { return false }
            last = newest.record.id
            claimed = operations.reversed() + claimed
            return true
        }

        /// Stops the push when its run was cancelled (an explicit cancel or the task's).
        /// - Returns: whether the push stops.
        @discardableResult
        mutating func stopIfCancelled(_ run: RunHandle) -> Bool {
            if abort == nil, run.isCancelled { abort = SyncError.pushWasCancelled() }
            return abort != nil
        }
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
                result = try await Self.offTheLoop { try await conflictHandler.execute(operation) }
            } else {
                result = try await operation.execute()
            }
            if operation.isPushCancelled { return .abort(SyncError.pushWasCancelled()) }
            return .success(result)
        } catch {
            if operation.isPushCancelled || run.isCancelled || error is CancellationError {
                return .abort(SyncError.pushWasCancelled(error))
            }
            if let abort = Self.pushAbort(for: error) { return .abort(abort) }
            return .failure(PushFailure(error: error, item: operation.item, response: operation.lastResponse))
        }
    }

    /// Runs the app's conflict handler on Swift's global pool, not on the event loop the push
    /// prefers (``runPush(_:)``): a handler may compute or block for a while, and an event loop
    /// that waits for it serves none of its connections meanwhile. The requests the handler sends
    /// through ``PushOperation/execute()`` still prefer the loop of their connection.
    static func offTheLoop<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(globalConcurrentExecutor, operation: body)
    }

    /// The abort an error stops the whole push with (no network, a 401, a cancellation, the local
    /// store), or `nil` for an error of the operation alone.
    static func pushAbort(for error: any Error) -> SyncError? {
        if error is CancellationError { return SyncError.pushWasCancelled(error) }
        guard let error = error as? SyncError else { return nil }
        switch error.code {
        case .transportFailed:
            return SyncError(.pushAbortedByNetwork, reason: "The server could not be reached.", underlying: error)
        case .authenticationRequired:
            return SyncError.pushRefusedSignIn
        case .cancelled, .pushCancelled:
            return SyncError.pushWasCancelled(error)
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
